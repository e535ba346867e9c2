"""Per-seat views: detectives and spectators never see Mister X off a reveal slot."""

from __future__ import annotations

import gc
from dataclasses import fields

from game import DetectiveView, MrXView, State, from_text, new_game, state_from_view
from game.views import rules_from_definition, view_from_dict
from tests.game.moves import play

START = "rules=classic turn=mrx mrx=104:4.3.3.5.2 det=117:10.8.4,1:10.8.4"


def test_detective_view_has_no_mrx_field() -> None:
    names = {f.name for f in fields(DetectiveView)}
    assert "mrx" not in names
    assert "mrx" in {f.name for f in fields(MrXView)}
    view = play(from_text(START), "taxi:86").view(1)
    assert isinstance(view, DetectiveView) and not hasattr(view, "mrx")
    assert "mrx" not in view.to_dict()


def test_view_holds_no_reference_to_the_state() -> None:
    state = play(from_text(START), "taxi:86")
    view = state.view(1)
    assert not any(isinstance(r, State) for r in gc.get_referents(*gc.get_referents(view)))
    assert not any(isinstance(getattr(view, f.name), State) for f in fields(view))


def test_same_public_history_gives_identical_detective_views() -> None:
    # Slots 1 and 2 are hidden: taxi to 86 or to 116 looks the same to the detectives.
    a = play(from_text(START), "taxi:86", "taxi:88", "taxi:8")
    b = play(from_text(START), "taxi:116", "taxi:88", "taxi:8")
    assert a.mrx_station != b.mrx_station
    for seat in (1, 2, None):
        assert a.view(seat).to_dict() == b.view(seat).to_dict()
    assert a.view(0).to_dict() != b.view(0).to_dict()


def test_log_shows_tickets_and_only_revealed_stations() -> None:
    state = new_game("classic", seed=2)
    while state.move_number < 8 and state.outcome is None:
        state = state.apply(state.legal_moves()[0])
    log = state.view(1).to_dict()["log"]
    for slot, entry in enumerate(log, start=1):
        truth = state.log[slot - 1]
        assert entry["ticket"] == truth[0].name.lower()
        assert entry["station"] == (truth[1] if slot in (3, 8) else None)
    mrx_log = state.view(0).to_dict()["log"]
    assert [e["station"] for e in mrx_log] == [s for _, s in state.log]


def test_last_reveal_and_spectator_view() -> None:
    text = ("rules=classic turn=mrx mrx=45:4.3.3.5.2 det=13:10.8.4 "
            "log=taxi:44,taxi:45 possible=45")
    state = play(from_text(text), "taxi:46", "taxi:14", "bus:58")
    spectator = state.view(None)
    assert spectator.seat is None
    assert spectator.to_dict()["last_reveal"] == {"move": 3, "station": 46}
    assert spectator.last_reveal() == (3, 46)
    assert spectator.rounds_to_reveal() == 4


def test_view_dict_round_trip() -> None:
    state = play(from_text(START), "taxi:86", "taxi:88")
    rules = rules_from_definition(state.rules.definition())
    for seat in (0, 1, 2, None):
        view = state.view(seat)
        again = view_from_dict(view.to_dict(), rules)
        assert again.to_dict() == view.to_dict()
        assert isinstance(again, MrXView) == isinstance(view, MrXView) == (seat == 0)


def test_state_from_detective_view_is_a_determinization() -> None:
    state = play(from_text(START), "taxi:86", "taxi:88")
    view = state.view(2)
    guess = state_from_view(view, mrx_station=116)
    assert guess.mrx_station == 116
    assert guess.possible_locations() == view.possible
    assert [s for _, s in guess.log] == [0]  # hidden stations are not carried over
    assert set(guess.legal_moves()) == set(state.legal_moves())


def test_view_dicts_follow_the_state_along_whole_games() -> None:
    """Memoised logs and the fast ticket dicts: every seat's view of every state of a
    random game in each ruleset equals what the state itself says (views asked for only
    now and then, so the memo also fills gaps along the chain)."""
    import random

    from game import load_ruleset, seat_name
    from game.moves import TICKET_NAMES, Ticket
    from game.rules import BUILTIN

    for name in BUILTIN:
        rules = load_ruleset(name)
        rng = random.Random(name)
        state = new_game(rules, seed=7)
        while True:
            if rng.random() < 0.4 or state.outcome is not None:
                for seat in (0, 1, None):
                    view = state.view(seat).to_dict()
                    stations = [s if seat == 0 or slot in rules.reveal_moves else None
                                for slot, (_, s) in enumerate(state.log, start=1)]
                    assert view["log"] == [{"ticket": TICKET_NAMES[Ticket(t)], "station": s}
                                           for (t, _), s in zip(state.log, stations,
                                                                strict=True)]
                    counted = (rules.mrx_tickets, rules.detective_tickets)
                    assert view["tickets"] == {
                        seat_name(i): None if counted[i != 0] is None
                        else {TICKET_NAMES[Ticket(j)]: n for j, n in enumerate(own)}
                        for i, own in enumerate(state.tickets)}
                    assert ("mrx" in view) == (seat == 0)
            if state.outcome is not None:
                break
            state = state.apply(rng.choice(state.legal_moves()))
