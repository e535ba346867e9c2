"""The seeds a seat is handed (``game_start.seed``) come from a seat seed of its own game
(issue 40): per game, never from what the two games of a pair share; reproducible from a
tournament's ``--seed``; stored in the match log, so the messages rebuild exactly. The
attack this closes is played end to end in test_deal_secrecy.py."""

from __future__ import annotations

import random
from typing import Any

from db.portable import PortableGame, read_lines, to_line
from game import MRX
from protocol import GameStart
from records import GameRecord, MatchLog
from server.match import keyed_seat_seed, side_seed
from server.transcript import regenerate
from tests.server.test_ladder_core import Harness as LadderHarness
from tests.server.test_match_core_harness import Harness
from tournament.schedule import Deals, Pairing, make_schedule
from tournament.spec import TournamentSpec

BOTS = ["random", "rush", "greedy"]


def test_a_tournament_hands_every_game_its_own_seat_seed() -> None:
    for pairing in Pairing:
        games = make_schedule(BOTS, pairs=3, seed=7, pairing=pairing)
        seat_seeds = [g.seat_seed for g in games]
        assert None not in seat_seeds and len(set(seat_seeds)) == len(games)
        by_pair: dict[str, list[int | None]] = {}
        for game in games:
            by_pair.setdefault(game.pair_key, []).append(game.seed)
        assert all(len(set(seeds)) == 1 for seeds in by_pair.values())  # one deal a pair


def test_the_same_seed_hands_the_same_seat_seeds() -> None:
    first = make_schedule(BOTS, pairs=2, seed=7, pairing=Pairing.FRESH_MRX)
    again = make_schedule(BOTS, pairs=2, seed=7, pairing=Pairing.FRESH_MRX)
    other = make_schedule(BOTS, pairs=2, seed=8, pairing=Pairing.FRESH_MRX)
    assert [g.seat_seed for g in first] == [g.seat_seed for g in again]
    assert not {g.seat_seed for g in first} & {g.seat_seed for g in other}
    # The runner deals them from the stored entries (which do not keep them) alike.
    spec = TournamentSpec.from_dict({"rules": "grid5", "bots": BOTS, "pairs": 2, "seed": 7})
    for made in first:
        stored = type(made)(made.index, made.pair_index, made.mrx, made.detectives,
                            made.seed, pair_key=made.pair_key)
        assert spec.dealt(stored).seat_seed == made.seat_seed


def test_seat_seeds_do_not_follow_from_anything_public() -> None:
    # Secret deals: the same players, pairs and games, another key, other seat seeds.
    one, two = Deals.new_secret(), Deals.new_secret()
    games = [make_schedule(BOTS, pairs=2, seed=deals) for deals in (one, two)]
    assert not {g.seat_seed for g in games[0]} & {g.seat_seed for g in games[1]}
    # The server's: an HMAC of the game id under its key.
    key = bytes(range(32))
    assert keyed_seat_seed(key, "g1") == keyed_seat_seed(bytes(range(32)), "g1")
    assert keyed_seat_seed(key, "g1") != keyed_seat_seed(key, "g2")
    assert keyed_seat_seed(key, "g1") != keyed_seat_seed(bytes(32), "g1")
    assert 0 <= keyed_seat_seed(key, "g1") < 2**63


def starts(h: Harness, conn: int, game: str) -> list[GameStart]:
    return [s for s in h.game_starts(conn) if s.game == game]


def play_pair(h: Harness, **extra: Any) -> list[GameRecord]:
    """A role-swapped pair between bots ``a`` and ``b``, dealt alike (one ``seed`` and
    ``mrx_seed``: what the two games of a pair share, and more), played out."""
    a, b, admin = h.connect("a"), h.connect("b"), h.admin()
    records = []
    for mrx, detectives in (("a", "b"), ("b", "a")):
        game = h.start(admin, mrx, [detectives], seed=11, mrx_seed=5, **extra)
        records.append(h.play_out([a, b], game, random.Random(3)).record)
    return records


def sent(h: Harness, record: GameRecord) -> dict[int, int]:
    """The seed each side of the game was sent, by its first seat (0 or 1)."""
    out = {}
    for name in ("a", "b"):
        conn = next(c for c, msgs in h.inbox.items()
                    if any(isinstance(m, GameStart) and m.game == record.game_id
                           and m.players[m.seats[0]] == name for m in msgs))
        for start in starts(h, conn, record.game_id):
            out[0 if start.seats[0] == "mrx" else 1] = start.seed
    return out


def test_the_two_games_of_a_pair_hand_their_sides_different_seeds() -> None:
    h = Harness()
    records = play_pair(h)
    seeds = [sent(h, r) for r in records]
    assert len({*seeds[0].values(), *seeds[1].values()}) == 4  # Mister X's differ too
    for record, given in zip(records, seeds, strict=True):
        assert record.log is not None and record.log.seat_seed is not None
        assert given == {seat: side_seed(record.log.seat_seed, seat) for seat in (MRX, 1)}
        assert given[MRX] != side_seed(11, MRX)  # not from the pair's game seed
        rebuilt = regenerate(record).seats  # the stored log rebuilds the seeds sent
        assert {0: rebuilt["mrx"][0]["seed"], 1: rebuilt["d1"][0]["seed"]} == given


def test_another_server_hands_the_same_games_other_seeds() -> None:
    # The same game ids (g1, g2), seeds and players on two servers: their keys differ.
    first, second = Harness(), Harness()
    seeds = [[sent(h, r) for r in play_pair(h)] for h in (first, second)]
    assert seeds[0][0][MRX] != seeds[1][0][MRX]


def test_a_seat_seed_given_with_start_match_is_what_the_seeds_follow() -> None:
    # How a tournament with --seed (or yard match --seed) reproduces its bots' seeds.
    given = [[sent(h, r) for r in play_pair(h, seat_seed=99)] for h in (Harness(), Harness())]
    assert given[0] == given[1]
    assert given[0][0] == {seat: side_seed(99, seat) for seat in (MRX, 1)}


def test_the_ladder_hands_the_two_legs_of_a_pair_different_seeds() -> None:
    h = LadderHarness(games=2, ladder=("grid5",), ladder_check=False)
    a = h.hello("a", ladder=["grid5"], max_games=2)
    h.hello("b", ladder=["grid5"], max_games=2)
    first = [m for m in h.of(a, GameStart)[:2] if isinstance(m, GameStart)]
    assert sorted(s.seats[0] == "mrx" for s in first) == [False, True]  # one pair
    pair = {s.game for s in first}
    every = [m for msgs in h.inbox.values() for m in msgs
             if isinstance(m, GameStart) and m.game in pair]
    assert len(every) == 4 and len({s.seed for s in every}) == 4


def test_the_seat_seed_travels_with_the_record() -> None:
    h = Harness()
    record = play_pair(h)[0]
    assert record.log is not None
    [(_, game)] = list(read_lines([to_line(record)]))
    assert isinstance(game, PortableGame) and game.record.log is not None
    assert game.record.log.seat_seed == record.log.seat_seed
    assert regenerate(game.record).seats["mrx"][0]["seed"] == sent(h, record)[MRX]
    data = record.log.to_dict()
    assert MatchLog.from_dict(data) == record.log
    assert "seat_seed" not in MatchLog.from_dict({**data, "seat_seed": None}).to_dict()
    [(_, bad)] = list(read_lines([to_line(record).replace(
        f'"seat_seed":{record.log.seat_seed}', '"seat_seed":"x"')]))
    assert "seat_seed" in str(bad)


def test_a_log_without_a_seat_seed_rebuilds_seeds_from_the_game_seed() -> None:
    # Records stored before seat seeds existed: their seats were sent side_seed(seed, ...).
    record = play_pair(Harness())[0]
    assert record.log is not None and record.seed is not None
    record.log.seat_seed = None
    assert regenerate(record).seats["mrx"][0]["seed"] == side_seed(record.seed, MRX)
