"""Perft-style counts: the number of legal move sequences from fixed positions.

The Mister X sets at station 104 reproduce the University of Bristol coursework test
``GameStateMrXAvailableMovesTest`` (see /work/shared/maps/PROVENANCE.md). Its scenario
"Mister X at 104 with taxi 4, bus 3, underground 3, double 2, secret 5 and BLUE at 117" is
named ``...ShouldProduce60ValidMoves`` but lists exactly 58 distinct moves: 4 single moves
(taxi/secret to 86 and 116) plus 54 double moves; a secret leg is one move per destination
however many transports join the stations. That is the "58 distinct moves" of the notes.
With no detective near 104 the count is 62 (the 4 double moves through 116 to 117 open up).
"""

from __future__ import annotations

import pytest

from game import State, from_text


def perft(state: State, depth: int) -> int:
    """Number of distinct legal move sequences of length ``depth`` (shorter if games end)."""
    if depth == 0 or state.outcome is not None:
        return 1
    return sum(perft(state.apply_unchecked(m), depth - 1) for m in state.legal_moves())


def moves(text: str) -> set[str]:
    return {str(m) for m in from_text(text).legal_moves()}


X104 = "rules=classic turn=mrx mrx=104:{tickets} det={det}:10.8.4"


def test_bristol_mrx_at_104_blue_at_117_gives_58_moves() -> None:
    got = moves(X104.format(tickets="4.3.3.5.2", det=117))
    assert len(got) == 58
    singles = {m for m in got if "+" not in m}
    assert singles == {"taxi:86", "secret:86", "taxi:116", "secret:116"}
    # One secret leg per destination: 116-127 has taxi and bus edges, one secret move.
    assert {m for m in got if m.startswith("taxi:116+") and m.endswith(":127")} == {
        "taxi:116+taxi:127", "taxi:116+bus:127", "taxi:116+secret:127"}
    assert not any(m.endswith(":117") for m in got)


def test_bristol_mrx_at_104_detectives_away_gives_62_moves() -> None:
    assert len(moves(X104.format(tickets="4.3.3.5.2", det=1))) == 62


def test_bristol_no_leg_may_end_on_a_detective() -> None:
    got = moves(X104.format(tickets="4.3.3.5.2", det=116))
    assert len(got) == 26
    assert not any("116" in m for m in got)


def test_bristol_double_move_needs_both_legs_tickets() -> None:
    got = moves(X104.format(tickets="1.1.0.0.2", det=117))
    assert got == {"taxi:86", "taxi:116", "taxi:86+bus:52", "taxi:86+bus:87",
                   "taxi:86+bus:102", "taxi:86+bus:116", "taxi:116+bus:86",
                   "taxi:116+bus:108", "taxi:116+bus:127", "taxi:116+bus:142"}


def test_bristol_no_double_or_secret_without_tickets() -> None:
    assert len(moves(X104.format(tickets="4.3.3.0.2", det=117))) == 16
    assert moves(X104.format(tickets="4.3.3.5.0", det=117)) == {
        "taxi:86", "secret:86", "taxi:116", "secret:116"}


# Counts pinned from this engine (independently checked for depth 1 above). A change here
# means the rules changed: find out why before updating a number.
PERFT = [
    # classic, Mister X with double and secret moves, two detectives.
    ("rules=classic turn=mrx mrx=104:4.3.3.5.2 det=117:10.8.4,1:10.8.4", 3, 1120),
    # classic, move 3 is a reveal; detectives to move after Mister X.
    ("rules=classic turn=mrx mrx=45:4.3.3.2.2 det=13:10.8.4,26:9.8.4 log=bus:46,taxi:45 "
     "possible=45", 3, 4008),
    # dash: no double moves, no ferry.
    ("rules=dash turn=mrx mrx=115:4.3.3.2.0 det=13:10.8.4,127:10.8.4 possible=115", 4, 4572),
    # warwick: nobody needs tickets.
    ("rules=warwick turn=mrx mrx=45 det=13,26,29 possible=45", 5, 5021),
    # grid5: 4-neighbour moves; depth 3 is 4 * 2 * 2 = 16 (centre, two corners).
    ("rules=grid5 turn=mrx mrx=13 det=1,25 possible=13", 5, 192),
]


@pytest.mark.parametrize(("text", "depth", "expected"), PERFT)
def test_perft(text: str, depth: int, expected: int) -> None:
    assert perft(from_text(text), depth) == expected
