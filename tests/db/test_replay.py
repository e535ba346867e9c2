"""Replays rebuilt with the engine, from each perspective; detectives never see a hidden
station."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from bots.arena import play_game
from bots.registry import make_bot
from db.build import record_from_moves
from db.errors import ReplayError
from db.replay import HIDDEN, Perspective, replay_lines
from game import Move, State, new_game
from game.rules import load_ruleset, ruleset_from_dict
from records import GameRecord, TurnRecord


@pytest.fixture(scope="module")
def classic_game() -> tuple[GameRecord, list[State]]:
    """A classic game (reveals, secret and double moves) and the engine's states."""
    for seed in range(1, 40):
        result = play_game("classic", make_bot("random", seed), [make_bot("random", seed)],
                           seed)
        if any(m.is_double for s, m in result.moves if s == 0) and result.final.move_number > 8:
            break
    record = record_from_moves("classic-1", result.start, result.moves,
                               {0: "random", 1: "random"}, result.outcome, seed=seed)
    states = [result.start]
    for _, move in result.moves:
        states.append(states[-1].apply(move))
    return record, states


def turn_lines(lines: list[str]) -> list[list[str]]:
    return [line.split() for line in lines
            if line.startswith("  ") and not line.startswith("    log: ")]


def expected_mrx_text(move: Move, before: State, hide: bool) -> str:
    legs = [(move.ticket, move.to)] + ([(move.ticket2, move.to2)] if move.is_double else [])
    parts = []
    for slot, (ticket, station) in enumerate(legs, start=before.move_number + 1):
        reveal = slot in before.rules.reveal_moves
        assert ticket is not None
        shown = str(station) if reveal or not hide else HIDDEN
        parts.append(f"{ticket.name.lower()}:{shown}{'!' if reveal else ''}")
    return "+".join(parts)


def test_detectives_never_see_a_hidden_station(
        classic_game: tuple[GameRecord, list[State]]) -> None:
    record, states = classic_game
    lines = replay_lines(record, Perspective.DETECTIVES)
    assert lines[2].startswith(f"start: mrx={HIDDEN} ")
    assert "seed" not in lines[0]  # the seed determines Mister X's start
    hidden_legs = reveals = 0
    for fields, turn, before in zip(turn_lines(lines), record.turns, states[:-1], strict=True):
        assert fields[0] == ("mrx" if turn.seat == 0 else f"d{turn.seat}")
        if turn.seat != 0:
            assert fields[1] == turn.move
            continue
        move = Move.parse(str(turn.move))
        assert fields[1] == expected_mrx_text(move, before, hide=True)
        for leg, station in zip(fields[1].split("+"), (move.to, move.to2), strict=False):
            if leg.endswith("!"):
                reveals += 1
            else:
                hidden_legs += 1
                assert leg.endswith(f":{HIDDEN}") and str(station) not in leg
    assert hidden_legs > 5 and reveals >= 1
    assert not any("path" in line for line in lines)


def test_mrx_and_all_see_the_truth(classic_game: tuple[GameRecord, list[State]]) -> None:
    record, states = classic_game
    for perspective in (Perspective.MRX, Perspective.ALL):
        lines = replay_lines(record, perspective)
        assert lines[2].startswith(f"start: mrx={states[0].mrx_station} ")
        for fields, turn, before in zip(turn_lines(lines), record.turns, states[:-1], strict=True):
            if turn.seat == 0:
                assert fields[1] == expected_mrx_text(Move.parse(str(turn.move)), before,
                                                      hide=False)
        assert lines[-1] == "Mister X's path: " + " ".join(map(str, record.mrx_path))
    assert replay_lines(record, Perspective.ALL)[4].endswith("(0.000s)")


def test_possible_counts_are_the_engines_belief(
        classic_game: tuple[GameRecord, list[State]]) -> None:
    record, states = classic_game
    lines = replay_lines(record, Perspective.DETECTIVES)
    counts = [int(fields[3]) for fields in turn_lines(lines)]
    assert counts == [len(s.possible_locations()) for s in states[1:]]
    assert lines[2].endswith(f"possible {len(states[0].possible_locations())}")


def test_rounds_and_result(classic_game: tuple[GameRecord, list[State]]) -> None:
    record, _ = classic_game
    lines = replay_lines(record, Perspective.MRX)
    rounds = [line for line in lines if line.startswith("round ")]
    assert len(rounds) == sum(1 for t in record.turns if t.seat == 0)
    assert any("-" in line for line in rounds)  # a double move spans two rounds
    winner = "Mister X wins" if record.outcome.winner and \
        record.outcome.winner.value == "mrx" else "detectives win"
    assert f"result: {winner} ({record.outcome.termination.value})" in lines[-2]


def test_faults_are_shown(classic_game: tuple[GameRecord, list[State]]) -> None:
    record, _ = classic_game
    faulty = replace(record, turns=[*record.turns,
                                    TurnRecord(len(record.turns), 1, None, 5.0, "timeout",
                                               "no move in 5.0 s")])
    last = turn_lines(replay_lines(faulty, Perspective.DETECTIVES))[-1]
    assert last[:2] == ["d1", "-"] and "[timeout:" in " ".join(last)


def test_mister_x_fault_details_are_withheld_from_detectives(
        classic_game: tuple[GameRecord, list[State]]) -> None:
    record, states = classic_game
    turns = list(record.turns)
    secret = f"bus:{states[1].mrx_station} is not legal"
    turns[0] = replace(turns[0], fault="illegal_move", detail=secret)
    faulty = replace(record, turns=turns)
    assert secret not in "\n".join(replay_lines(faulty, Perspective.DETECTIVES))
    assert "[illegal_move]" in replay_lines(faulty, Perspective.DETECTIVES)[4]
    assert f"[illegal_move: {secret}]" in replay_lines(faulty, Perspective.MRX)[4]


def test_a_bad_stored_move_is_a_replay_error(
        classic_game: tuple[GameRecord, list[State]]) -> None:
    record, _ = classic_game
    turns = list(record.turns)
    turns[1] = replace(turns[1], move="taxi:1")
    with pytest.raises(ReplayError, match="turn 1 \\(d1\\)"):
        replay_lines(replace(record, turns=turns), Perspective.ALL)


def test_a_custom_ruleset_replays_from_its_definition() -> None:
    definition = {**load_ruleset("grid5").definition(), "name": "grid5-open",
                  "reveal_moves": [1, 2, 3]}
    start = new_game(ruleset_from_dict(definition), seed=3)
    state, rng = start, random.Random(3)
    moves: list[tuple[int, Move]] = []
    while state.outcome is None and len(moves) < 12:
        move = rng.choice(list(state.legal_moves()))
        moves.append((state.to_move, move))
        state = state.apply(move)
    record = record_from_moves("custom", start, moves, {0: "a", 1: "b"})
    assert record.ruleset == "grid5-open"
    mrx_lines = [f for f in turn_lines(replay_lines(record, Perspective.DETECTIVES))
                 if f[0] == "mrx"]
    assert mrx_lines[0][1] == f"taxi:{moves[0][1].to}!"
