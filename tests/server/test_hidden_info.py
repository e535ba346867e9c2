"""Hidden information, enforced by the server: nothing sent to a detective-only connection
reveals or depends on Mister X's station outside reveal moves."""

from __future__ import annotations

import random
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from game import load_ruleset
from protocol import (
    GameOver,
    GameStart,
    Message,
    MoveMsg,
    Update,
    Watching,
    YourTurn,
    decode,
)
from tests.server.test_match_core_harness import Harness

MRX_STATION = re.compile(r'"mrx":\s*\d')


def check_detective_frame(text: str, reveals: frozenset[int]) -> None:
    """One frame sent to a detective: decodable, no Mister X station off-reveal."""
    msg = decode(text)
    if isinstance(msg, GameOver):
        return  # the truth after the game has ended is allowed
    assert not MRX_STATION.search(text), text
    assert "mrx_path" not in text
    if isinstance(msg, GameStart | YourTurn | Watching):
        check_view(msg.view, reveals)
    if isinstance(msg, Update) and msg.seat == "mrx":
        assert msg.move.replace("+", "").isalpha() or ":" in msg.move


def check_view(view: dict[str, Any], reveals: frozenset[int]) -> None:
    assert "mrx" not in view
    for slot, entry in enumerate(view["log"], start=1):
        assert (entry["station"] is None) == (slot not in reveals), (slot, entry)


def play_with_frames(rules: str, seed: int) -> tuple[Harness, int, int]:
    h = Harness()
    x, d = h.connect("x"), h.connect("d")
    admin = h.admin()
    game = h.start(admin, "x", ["d"], rules=rules, seed=seed)
    h.play_out([x, d], game, random.Random(seed))
    return h, x, d


@settings(max_examples=40)
@given(st.sampled_from(["classic", "grid5", "dash", "warwick", "bristol"]),
       st.integers(0, 10**6))
def test_detective_frames_never_carry_the_hidden_station(rules: str, seed: int) -> None:
    h, _, d = play_with_frames(rules, seed)
    reveals = load_ruleset(rules).reveal_moves
    frames = h.frames[d]
    assert frames and decode(frames[-1]).TYPE == "game_over"
    for text in frames:
        check_detective_frame(text, reveals)


def _mrx_move(turn: YourTurn, ticket: str | None, rng: random.Random) -> str | None:
    options = [m for m in turn.legal if ticket is None or m.split(":")[0] == ticket]
    options = [m for m in options if "+" not in m]
    return rng.choice(options) if options else None


def _twin_games(rules: str, seed: int, mrx_seeds: tuple[int | None, int | None] = (None, None)
                ) -> tuple[list[str], list[str]]:
    """Two games from one seed where Mister X moves differently (same tickets) until the
    first reveal; detectives play the same moves. With ``mrx_seeds`` the twins are the two
    games of a ``fresh-mrx`` pair: one deal of the detectives, Mister X's start drawn from
    each game's own seed. Returns the detectives' frames of both."""
    twins = [Harness(), Harness()]
    conns = []
    for h, mrx_seed in zip(twins, mrx_seeds, strict=True):
        x, d = h.connect("x"), h.connect("d")
        # One seat seed for both twins (one game played twice): the bots' seeds are then
        # alike and every frame, game_start included, can be compared.
        extra: dict[str, Any] = {"seat_seed": seed}
        if mrx_seed is not None:
            extra["mrx_seed"] = mrx_seed
        game = h.start(h.admin(), "x", ["d"], rules=rules, seed=seed, **extra)
        conns.append((x, d, game))
    first_reveal = min(load_ruleset(rules).reveal_moves)
    rngs = [random.Random(seed), random.Random(seed + 1)]
    for _ in range(first_reveal - 1):
        turns = [h.last(x, YourTurn) for h, (x, _, _) in zip(twins, conns, strict=True)]
        first = _mrx_move(turns[0], None, rngs[0])
        assert first is not None
        second = _mrx_move(turns[1], first.split(":")[0], rngs[1])
        if second is None:
            break
        for h, (x, _, game), move, turn in zip(twins, conns, [first, second], turns,
                                               strict=True):
            h.send(x, MoveMsg(game, turn.turn, move))
        if not _detectives_move(twins, conns):
            break
    # Frame 0 is the welcome with its random resume token.
    return twins[0].frames[conns[0][1]][1:], twins[1].frames[conns[1][1]][1:]


def _detectives_move(twins: list[Harness], conns: list[tuple[int, int, str]]) -> bool:
    while True:
        for h, (_, d, _) in zip(twins, conns, strict=True):
            if h.of(d, GameOver):
                return False
        pending = [h.pending_turn([d], game) for h, (_, d, game) in zip(twins, conns,
                                                                        strict=True)]
        if any(p is None or p[1].seat == "mrx" for p in pending) or \
                any(h.last(x, YourTurn).turn > p[1].turn  # type: ignore[index]
                    for h, (x, _, _), p in zip(twins, conns, pending, strict=True)):
            return True
        for h, (_, d, game), p in zip(twins, conns, pending, strict=True):
            assert p is not None
            turn = p[1]
            h.send(d, MoveMsg(game, turn.turn, "taxi:998"))  # an error text to compare too
            h.send(d, MoveMsg(game, turn.turn, turn.legal[0]))


@settings(max_examples=25)
@given(st.sampled_from(["classic", "grid5", "dash"]), st.integers(0, 10**6))
def test_detective_frames_do_not_depend_on_the_hidden_moves(rules: str, seed: int) -> None:
    frames_a, frames_b = _twin_games(rules, seed)
    # A capture in one twin is public and ends the comparison there.
    end = min(_first_ending(frames_a), _first_ending(frames_b))
    assert end > 2
    assert frames_a[:end] == frames_b[:end]


@settings(max_examples=25)
@given(st.sampled_from(["classic", "grid5", "dash"]), st.integers(0, 10**6))
def test_detective_frames_do_not_depend_on_mister_x_s_secret_start(rules: str,
                                                                   seed: int) -> None:
    """The two games of a fresh-mrx pair (secret deals): until the first reveal the
    detectives see the same thing whatever Mister X's start and moves."""
    frames_a, frames_b = _twin_games(rules, seed, (2 * seed, 2 * seed + 1))
    end = min(_first_ending(frames_a), _first_ending(frames_b))
    assert end > 2
    assert frames_a[:end] == frames_b[:end]


def _first_ending(frames: list[str]) -> int:
    return next((i for i, f in enumerate(frames)
                 if '"to_move":null' in f or '"type":"game_over"' in f), len(frames))


def test_mrx_update_texts_show_stations_only_on_reveals() -> None:
    h, _x, d = play_with_frames("classic", 11)
    reveals = load_ruleset("classic").reveal_moves
    slot = 0
    mrx_updates: list[Message] = [m for m in h.inbox[d] if isinstance(m, Update)
                                  and m.seat == "mrx"]
    assert mrx_updates
    for update in mrx_updates:
        assert isinstance(update, Update)
        for leg in update.move.split("+"):
            slot += 1
            assert (":" in leg) == (slot in reveals), (slot, update.move)
