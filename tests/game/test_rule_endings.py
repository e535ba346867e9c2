"""The game ends where the rules end it: stuck detectives, cornered Mister X, at set-up and in
the deal, plus the immutability of the legal-move sequence and rulesets without reveals."""

from __future__ import annotations

from pathlib import Path

import pytest

from bots.arena import play_game
from bots.registry import make_bot
from game import (
    IllegalMoveError,
    Move,
    Ruleset,
    State,
    Termination,
    Ticket,
    Winner,
    from_text,
    load_ruleset,
    new_game,
)
from game.rules import BUILTIN
from tests.game.moves import play
from tournament.schedule import make_schedule


def ending(state: State) -> tuple[Winner | None, Termination] | None:
    return None if state.outcome is None else (state.outcome.winner, state.outcome.termination)


MRX_STUCK = (Winner.MRX, Termination.DETECTIVES_STUCK)

# ---------------------------------------------------------------- the reproductions


def test_no_detective_can_move_at_set_up() -> None:
    state = from_text("rules=bristol turn=mrx mrx=86:4.3.3.5.2 det=105:0.0.0 possible=86")
    assert ending(state) == MRX_STUCK
    assert len(state.legal_moves()) == 0


def test_last_detective_of_a_round_spends_its_last_ticket() -> None:
    state = from_text("rules=bristol turn=mrx mrx=86:4.3.3.5.2 det=108:1.0.0 possible=86")
    after_mrx = play(state, "taxi:104")
    assert after_mrx.outcome is None and after_mrx.to_move == 1
    after = play(after_mrx, "taxi:105")
    # Decided now, not after another move of Mister X.
    assert ending(after) == MRX_STUCK
    assert after.legal_moves() == ()
    assert after.move_number == 1


def test_detective_with_tickets_boxed_in_by_ticketless_ones() -> None:
    # d2 on station 1 holds tickets but its neighbours 8, 9, 46 hold ticketless detectives;
    # d1 closes the last exit (58) with its last ticket: nobody can move any more.
    text = ("rules=classic turn=mrx mrx=104:4.3.3.0.0 "
            "det=57:1.0.0,1:10.8.4,8:0.0.0,9:0.0.0,46:0.0.0 possible=104")
    state = from_text(text)
    assert state.outcome is None
    after_mrx = play(state, "taxi:86")
    assert after_mrx.to_move == 1
    assert ending(play(after_mrx, "taxi:58")) == MRX_STUCK
    # The same box at set-up ends the game at once.
    boxed = from_text("rules=classic turn=mrx mrx=104:4.3.3.0.0 "
                      "det=58:0.0.0,1:10.8.4,8:0.0.0,9:0.0.0,46:0.0.0 possible=104")
    assert ending(boxed) == MRX_STUCK


def test_some_stuck_detectives_are_skipped_not_decisive() -> None:
    # d1 boxed in (no tickets), d2 free: the round goes on without d1.
    state = from_text("rules=classic turn=mrx mrx=104:4.3.3.0.0 det=1:0.0.0,13:10.8.4 "
                      "possible=104")
    after = play(state, "taxi:86")
    assert after.outcome is None and after.to_move == 2


def test_stuck_detective_to_move_at_set_up() -> None:
    # turn=d1 but d1 cannot move and neither can d2: the round ends, then the game.
    text = "rules=classic turn=d1 mrx=104:4.3.3.0.0 det=1:0.0.0,13:0.0.0 possible=104"
    assert ending(from_text(text)) == MRX_STUCK
    # d1 cannot move but d2 can: d2 plays.
    text = "rules=classic turn=d1 mrx=104:4.3.3.0.0 det=1:0.0.0,13:1.0.0 possible=104"
    assert from_text(text).to_move == 2


def test_stuck_detectives_take_precedence_over_a_cornered_mrx() -> None:
    # Mister X has no ticket left and no detective can move: the detectives ran out first.
    state = from_text("rules=classic turn=mrx mrx=104:0.0.0.0.0 det=1:0.0.0 possible=104")
    assert ending(state) == MRX_STUCK


def test_full_log_is_survived_even_when_detectives_are_stuck() -> None:
    log = ",".join(["taxi:104"] * 24)
    state = from_text(f"rules=classic turn=mrx mrx=104:4.3.3.0.0 det=1:0.0.0 log={log} "
                      "possible=104")
    assert ending(state) == (Winner.MRX, Termination.SURVIVED)


def test_cornered_mrx_at_set_up_still_loses() -> None:
    state = from_text("rules=classic turn=mrx mrx=1:1.0.0.0.0 det=8:10.8.4,9:10.8.4 possible=1")
    assert ending(state) == (Winner.DETECTIVES, Termination.CORNERED)


# ---------------------------------------------------------------- the deal


def _dealt_ok(state: State) -> None:
    assert state.outcome is None, state
    assert state.to_move == 0 and len(state.legal_moves()) > 0, state
    assert any(state.moves_for(seat) for seat in range(1, state.n_detectives + 1)), state


@pytest.mark.parametrize("name", BUILTIN)
def test_new_game_never_deals_a_decided_start(name: str) -> None:
    rules = load_ruleset(name)
    seeds = 20000 if rules.random_starts else 300
    for count in range(rules.min_detectives, rules.max_detectives + 1):
        with_k = rules.with_detectives(count)
        for seed in range(seeds):
            _dealt_ok(new_game(with_k, seed))


def test_grid5_seed_that_cornered_mrx_is_redrawn() -> None:
    # Seed 106865's first grid5 deal put Mister X in corner 1 between detectives on 2 and 6.
    state = new_game("grid5", 106865)
    _dealt_ok(state)
    assert state.positions != (1, 2, 6)
    assert new_game("grid5", 106865).positions == state.positions  # still seeded


def test_tournament_seeds_deal_playable_grid5_starts() -> None:
    rules = load_ruleset("grid5")
    games = make_schedule(["random"], pairs=200, seed=2, self_play=True)
    assert len(games) == 200
    for game in games:
        _dealt_ok(new_game(rules, game.seed))


def test_playable_first_deals_are_unchanged() -> None:
    # Values from before redrawing existed: a playable deal is not redrawn.
    assert new_game("classic", 1).positions == (78, 50, 112, 141, 138, 26)
    assert new_game("classic", 42).positions == (71, 34, 13, 123, 50, 174)
    assert new_game("grid5", 7).positions == (11, 5, 13)
    assert new_game("bristol", 3).positions == (146, 94, 112, 103, 29, 53)


def test_unplayable_ruleset_deals_a_game_that_is_already_over(tmp_path: Path) -> None:
    path = tmp_path / "idle.toml"
    path.write_text('extends = "grid5"\nname = "idle"\ndetective_tickets = { taxi = 0 }\n')
    rules = load_ruleset(str(path))
    state = new_game(rules, 5)
    assert ending(state) == MRX_STUCK
    assert state.legal_moves() == ()
    assert new_game(rules, 5).positions == state.positions


# ---------------------------------------------------------------- legal moves are immutable


def test_legal_moves_cannot_be_changed_by_a_caller() -> None:
    state = new_game("classic", 3)
    legal = state.legal_moves()
    assert isinstance(legal, tuple)
    outsider = Move(Ticket.TAXI, next(s for s in range(1, 200)
                                      if s not in {m.to for m in legal}))
    with pytest.raises(AttributeError):
        legal.append(outsider)  # type: ignore[attr-defined]
    copy = list(legal)
    copy.append(outsider)
    copy.sort(key=lambda m: -m.to)
    assert state.legal_moves() == legal and outsider not in state.legal_moves()
    with pytest.raises(IllegalMoveError):
        state.apply(outsider)
    after = state.apply(legal[0])
    assert isinstance(after.legal_moves(), tuple)
    assert isinstance(state.moves_for(1), list)


# ---------------------------------------------------------------- rulesets without reveals


def _hidden(tmp_path: Path) -> Ruleset:
    path = tmp_path / "hidden.toml"
    path.write_text('extends = "grid5"\nname = "hidden"\nreveal_moves = []\n')
    return load_ruleset(str(path))


def test_ruleset_without_reveals_loads_and_plays(tmp_path: Path) -> None:
    rules = _hidden(tmp_path)
    assert rules.reveal_moves == frozenset()
    assert rules.definition()["reveal_moves"] == []
    sizes = set()
    for seed in range(30):
        result = play_game(rules, make_bot("greedy", seed), [make_bot("random", seed)],
                           seed=seed)
        assert result.outcome is not None and result.outcome.winner is not None
        state = result.final
        assert all(entry.station is None for entry in state.view(1).log)
        assert state.view(1).rounds_to_reveal() == 0
        sizes.add(len(state.possible_locations()))
    assert max(sizes) > 1  # Mister X never surfaces


@pytest.mark.parametrize(("bot", "options"), [
    ("mcts", {"iterations": 60, "filter": True}), ("alphabeta", {"depth": 2, "filter": True})])
def test_search_bots_play_a_ruleset_without_reveals(tmp_path: Path, bot: str,
                                                    options: dict[str, object]) -> None:
    rules = _hidden(tmp_path)
    for seed in range(2):
        result = play_game(rules, make_bot(bot, seed, options),
                           [make_bot(bot, seed, options)], seed=seed)
        assert result.outcome is not None
        assert result.outcome.termination is not Termination.ILLEGAL_MOVE


def test_ruleset_without_reveals_is_accepted_from_a_definition(tmp_path: Path) -> None:
    from game.views import rules_from_definition

    rules = _hidden(tmp_path)
    again = rules_from_definition(rules.definition())
    assert again.reveal_moves == frozenset() and again.max_moves == rules.max_moves
