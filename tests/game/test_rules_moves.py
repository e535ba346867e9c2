"""Every movement rule on concrete positions (built with game.position.from_text)."""

from __future__ import annotations

from pathlib import Path

import pytest

from game import (
    GameOverError,
    IllegalMoveError,
    Move,
    State,
    Termination,
    Ticket,
    Winner,
    from_text,
    load_ruleset,
    new_game,
)
from tests.game.moves import play


def legal(state: State) -> set[str]:
    return {str(m) for m in state.legal_moves()}


# ---------------------------------------------------------------- turn order


def test_mrx_moves_first_then_detectives_in_seat_order() -> None:
    state = new_game("classic", seed=5)
    seats = []
    for _ in range(7):
        seats.append(state.to_move)
        state = state.apply(state.legal_moves()[0])
    assert seats == [0, 1, 2, 3, 4, 5, 0]


# ---------------------------------------------------------------- double moves


def test_double_move_needs_two_free_log_slots() -> None:
    base = "rules=classic turn=mrx mrx=104:4.3.3.5.2 det=117:10.8.4 possible=104 log={log}"
    log22 = ",".join(["taxi:104"] * 22)
    log23 = ",".join(["taxi:104"] * 23)
    assert any("+" in m for m in legal(from_text(base.format(log=log22))))
    assert not any("+" in m for m in legal(from_text(base.format(log=log23))))


def test_double_move_not_in_ruleset_without_double_moves() -> None:
    state = from_text("rules=dash turn=mrx mrx=104:4.3.3.5.0 det=117:10.8.4")
    assert legal(state) == {"taxi:86", "secret:86", "taxi:116", "secret:116"}


def test_double_move_spends_both_legs_and_a_double_ticket() -> None:
    state = from_text("rules=classic turn=mrx mrx=104:4.3.3.5.2 det=117:10.8.4")
    after = play(state, "taxi:86+bus:52")
    assert after.tickets[0] == (3, 2, 3, 5, 1)
    assert after.log == ((Ticket.TAXI, 86), (Ticket.BUS, 52))
    assert after.mrx_station == 52 and after.to_move == 1


def test_each_leg_of_a_double_move_is_revealed_by_its_own_slot() -> None:
    text = ("rules=classic turn=mrx mrx=45:4.3.3.5.2 det=13:10.8.4 "
            "log=taxi:44,taxi:45 possible=45")
    after = play(from_text(text), "taxi:46+bus:58")  # fills slots 3 (reveal) and 4 (hidden)
    log = after.view(1).to_dict()["log"]
    assert log[2] == {"ticket": "taxi", "station": 46}
    assert log[3] == {"ticket": "bus", "station": None}
    assert after.possible_locations() == frozenset({1, 34, 58, 78})  # bus from 46


def test_double_move_second_leg_revealed_when_slot_is_reveal() -> None:
    text = ("rules=classic turn=mrx mrx=45:4.3.3.5.2 det=13:10.8.4 log=taxi:45 possible=45")
    after = play(from_text(text), "taxi:46+bus:58")  # slots 2 (hidden) and 3 (reveal)
    log = after.view(1).to_dict()["log"]
    assert [e["station"] for e in log] == [None, None, 58]
    assert after.possible_locations() == frozenset({58})


# ---------------------------------------------------------------- secret tickets & ferry


def test_secret_move_is_one_move_per_destination() -> None:
    state = from_text("rules=classic turn=mrx mrx=116:0.0.0.1.0 det=1:10.8.4 possible=116")
    # 116-127 and 116-86 are joined by taxi and bus; still one secret move each.
    assert legal(state) == {"secret:86", "secret:104", "secret:108", "secret:117",
                            "secret:118", "secret:127", "secret:142"}


def test_ferry_only_by_secret_ticket() -> None:
    state = from_text("rules=classic turn=mrx mrx=115:4.3.3.1.0 det=1:10.8.4 possible=115")
    moves = legal(state)
    assert {"secret:108", "secret:157"} <= moves
    assert {m for m in moves if not m.startswith("secret")} == {
        "taxi:102", "taxi:114", "taxi:126", "taxi:127"}


def test_detectives_never_use_the_ferry() -> None:
    state = from_text("rules=classic turn=d1 mrx=1:4.3.3.1.0 det=115:10.8.4 possible=1")
    assert legal(state) == {"taxi:102", "taxi:114", "taxi:126", "taxi:127"}


@pytest.mark.parametrize("ruleset", ["dash", "warwick"])
def test_no_ferry_in_dash_and_warwick(ruleset: str) -> None:
    mrx, det = ("115:4.3.3.1.0", "1:10.8.4") if ruleset == "dash" else ("115", "1")
    state = from_text(f"rules={ruleset} turn=mrx mrx={mrx} det={det} possible=115")
    destinations = {m.destination for m in state.legal_moves()}
    assert destinations == {102, 114, 126, 127}


def test_no_secret_moves_in_warwick() -> None:
    state = new_game("warwick", seed=3)
    assert all(m.ticket != Ticket.SECRET for m in state.legal_moves())


# ---------------------------------------------------------------- tickets


def test_detective_ticket_goes_to_mrx() -> None:
    state = from_text("rules=classic turn=d1 mrx=104:1.0.0.0.0 det=1:10.8.4 possible=104")
    after = play(state, "bus:58")
    assert after.tickets[1] == (10, 7, 4, 0, 0)
    assert after.tickets[0] == (1, 1, 0, 0, 0)


def test_handed_ticket_counts_when_mrx_turn_comes() -> None:
    # Mister X at 104 (taxi only) holds no taxi ticket: cornered unless handed one.
    text = "rules=classic turn=d1 mrx=104:0.3.3.0.0 det=1:10.8.4 possible=104"
    saved = play(from_text(text), "taxi:8")
    assert saved.outcome is None and saved.to_move == 0
    assert legal(saved) == {"taxi:86", "taxi:116"}
    cornered = play(from_text(text), "bus:58")
    assert cornered.outcome is not None
    assert (cornered.outcome.winner, cornered.outcome.termination) == (
        Winner.DETECTIVES, Termination.CORNERED)


def test_no_hand_over_when_ruleset_says_so(tmp_path: Path) -> None:
    path = tmp_path / "keep.toml"
    path.write_text('extends = "classic"\nname = "keep"\ntickets_to_mrx = false\n')
    rules = load_ruleset(str(path))
    state = from_text("turn=d1 mrx=104:0.3.3.0.0 det=1:10.8.4 possible=104", rules)
    after = play(state, "taxi:8")
    assert after.outcome is not None and after.outcome.termination is Termination.CORNERED


def test_detective_needs_a_ticket_for_each_transport() -> None:
    state = from_text("rules=classic turn=d1 mrx=104:4.3.3.0.0 det=1:0.0.1 possible=104")
    assert legal(state) == {"underground:46"}


# ---------------------------------------------------------------- blocking, skipping


def test_nobody_moves_onto_a_detective() -> None:
    state = from_text("rules=classic turn=d1 mrx=104:4.3.3.0.0 det=1:10.8.4,8:10.8.4,46:1.1.1 "
                      "possible=104")
    assert legal(state) == {"taxi:9", "bus:58"}  # 8 and 46 are taken
    mrx = from_text("rules=classic turn=mrx mrx=1:4.3.3.0.0 det=8:10.8.4,46:10.8.4 possible=1")
    assert legal(mrx) == {"taxi:9", "bus:58"}


def test_detective_without_moves_is_skipped() -> None:
    state = from_text("rules=classic turn=mrx mrx=104:4.3.3.0.0 det=1:0.0.0,13:10.8.4 "
                      "possible=104")
    after = play(state, "taxi:86")
    assert after.to_move == 2


def test_stuck_detective_to_move_in_setup_is_skipped() -> None:
    state = from_text("rules=classic turn=d1 mrx=104:4.3.3.0.0 det=1:0.0.0,13:10.8.4 "
                      "possible=104")
    assert state.to_move == 2


def test_detectives_stuck_ends_the_game() -> None:
    # Both detectives out of tickets: decided before Mister X has to move.
    state = from_text("rules=classic turn=mrx mrx=104:4.3.3.0.0 det=1:0.0.0,13:0.0.0 "
                      "possible=104")
    assert state.outcome is not None
    assert (state.outcome.winner, state.outcome.termination) == (
        Winner.MRX, Termination.DETECTIVES_STUCK)
    assert state.legal_moves() == ()


# ---------------------------------------------------------------- endings


def test_cornered_mrx_loses_when_his_turn_comes() -> None:
    state = from_text("rules=classic turn=d2 mrx=1:4.0.0.0.0 det=8:10.8.4,20:10.8.4 possible=1")
    after = play(state, "taxi:9")
    assert after.outcome is not None
    assert after.outcome.termination is Termination.CORNERED
    assert after.legal_moves() == ()


def test_cornered_mrx_in_setup() -> None:
    state = from_text("rules=classic turn=mrx mrx=1:1.0.0.0.0 det=8:10.8.4,9:10.8.4 possible=1")
    assert state.outcome is not None and state.outcome.termination is Termination.CORNERED


def test_capture_ends_the_game_at_once() -> None:
    state = from_text("rules=classic turn=d1 mrx=9:4.3.3.0.0 det=1:10.8.4,20:10.8.4 "
                      "possible=9.19")
    after = play(state, "taxi:9")
    assert after.outcome is not None
    assert (after.outcome.winner, after.outcome.termination) == (
        Winner.DETECTIVES, Termination.CAUGHT)
    assert after.legal_moves() == ()
    assert after.possible_locations() == frozenset({9})
    with pytest.raises(GameOverError):
        after.apply(Move.parse("taxi:19"))


def test_log_full_detectives_still_play_their_last_round() -> None:
    log = ",".join(["taxi:104"] * 23)
    text = f"rules=classic turn=mrx mrx=104:4.3.3.0.0 det=117:10.8.4,1:10.8.4 log={log} " \
           "possible=104"
    after = play(from_text(text), "taxi:116")  # slot 24: a reveal, the log is now full
    assert after.outcome is None and after.to_move == 1
    survived = play(after, "taxi:88", "taxi:8")
    assert survived.outcome is not None
    assert (survived.outcome.winner, survived.outcome.termination) == (
        Winner.MRX, Termination.SURVIVED)
    caught = play(after, "taxi:116")
    assert caught.outcome is not None and caught.outcome.termination is Termination.CAUGHT


# ---------------------------------------------------------------- ticketless & grids


def test_ticketless_detectives_and_mrx() -> None:
    state = from_text("rules=warwick turn=mrx mrx=1 det=13,26,29 possible=1")
    assert legal(state) == {"taxi:8", "taxi:9", "bus:46", "bus:58", "underground:46"}
    after = play(state, "underground:46")
    assert after.tickets == ((0,) * 5,) * 4
    # A ticketless detective has one move per destination, shown with the cheapest transport.
    assert legal(after) == {"taxi:4", "taxi:14", "taxi:23", "taxi:24", "bus:52",
                            "underground:46", "underground:67", "underground:89"}
    assert play(after, "taxi:14").outcome is None
    caught = play(after, "underground:46")  # Mister X's hidden station
    assert caught.outcome is not None and caught.outcome.termination is Termination.CAUGHT


def test_grid_moves_are_four_neighbour_steps() -> None:
    state = from_text("rules=grid5 turn=mrx mrx=13 det=1,25 possible=13")
    assert legal(state) == {"taxi:8", "taxi:12", "taxi:14", "taxi:18"}
    after = play(state, "taxi:8")
    assert legal(after) == {"taxi:2", "taxi:6"}
    assert play(after, "taxi:2").to_move == 2


# ---------------------------------------------------------------- bad moves


def test_illegal_move_error_names_the_move_and_the_seat() -> None:
    state = from_text("rules=classic turn=mrx mrx=104:4.3.3.0.0 det=117:10.8.4")
    with pytest.raises(IllegalMoveError, match=r"bus:86.*mrx at station 104"):
        state.apply(Move.parse("bus:86"))
    with pytest.raises(IllegalMoveError, match="not on board"):
        state.apply(Move.parse("taxi:500"))
    with pytest.raises(IllegalMoveError, match="not a Move"):
        state.apply("taxi:86")  # type: ignore[arg-type]
