"""Deals nobody can predict (issue 24): classic tournaments run with the real CLI (``yard
tournament run``: a real server, real bot processes, a real SQLite file), and everything the
web API (``/api/tournaments``, ``/api/tournaments/ID``, ``/api/games``, ``/api/games/ID``)
publishes about them, read once they are finished: a superset of what it publishes while
they run. With that public data a predictor built the old way (``pair_seed`` of the
published seed or 0, the bot names and the pair number, then ``new_game``) and one that
remembers the other game of the pair guess Mister X's start no better than chance in a
tournament without ``--seed``, and two such tournaments of the same bots start Mister X
differently. A ``--seed --pairing same-deal`` tournament shows the predictors work.

Each predictor also gets the schedule entry of every game (its pair number and players)
from the database, which the API does not tell: more than the public has, so the bound
holds all the more. Chance is 1/13 (Mister X's start cards); each bound allows half the
games, which a chance predictor reaches with probability about 1e-5.

The seeds the bots are handed (issue 40): in every pair the bot that played Mister X in one
game (``greedy``) replays, with the ``game_start.seed`` it was sent there, the built-in
``random`` Mister X of the other game (same bot class, same seed), tracking every start he
may have had against the public moves of that game, and names his hidden stations. Before
per-game seat seeds both Mister X of a pair were sent one seed, and this attack named his
station on all but a few hidden moves; now it does no better than a pick from the public
possible set.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
from dataclasses import dataclass
from typing import Any

import pytest

from bots.base import NO_VIEW, Bot
from bots.registry import make_bot
from db.store import Database
from game import MRX, Move, State, from_text, new_game, state_from_view
from game.views import detective_log, rules_from_definition
from records import GameRecord
from server.transcript import regenerate
from tests import SCALE
from tests.host.web_helpers import get_json, running_server
from tests.yard_cli import YARD
from tournament.schedule import pair_seed

BOTS = "random,greedy"
PAIRS = 6

# One worker plays the tournaments (a module fixture) for every test here.
pytestmark = pytest.mark.xdist_group("deal_secrecy")


def tournaments(url: str, *runs: list[str]) -> list[str]:
    """``yard tournament run`` on classic, one for each of ``runs`` (its extra arguments),
    all at once (most of a run is waiting on its processes), one game slot each (what is
    dealt does not depend on the slots): the new tournaments' ids."""
    procs = [subprocess.Popen([*YARD, "tournament", "run", "--rules", "classic", "--bots", BOTS,
                               "--move-time", "5", "--concurrency", "1", "--db", url,
                               "--json", *extra],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for extra in runs]
    ids = []
    for proc in procs:
        out, err = proc.communicate(timeout=300 * SCALE)
        assert proc.returncode == 0, err
        ids.append(str(json.loads(out)["tournament_id"]))
    return ids


@dataclass
class Game:
    """One finished game as the API shows it, with its schedule entry (from the database)."""

    index: int
    pair_index: int
    pair_key: str
    mrx: str
    detectives: str
    replay: dict[str, Any]

    @property
    def mrx_start(self) -> int:
        return int(self.replay["mrx_path"][0])

    @property
    def detective_starts(self) -> list[int]:
        return list(self.replay["frames"][0]["detectives"])


@dataclass
class Published:
    listing: dict[str, Any]
    tournament: dict[str, Any]
    games: list[Game]


async def published(url: str, tid: str) -> Published:
    """What the API publishes about tournament ``tid``, games joined to their entries."""
    with Database.connect(url) as db:
        entries = {e.schedule_id: e for e in db.scheduled(tid)}
        schedule_of = {r.game_id: entries[r.schedule_id] for r in db.results(tournament_id=tid)}
    async with running_server(url) as (_server, _app, base):
        _, listing = await get_json(f"{base}api/tournaments")
        _, one = await get_json(f"{base}api/tournaments/{tid}")
        _, page = await get_json(f"{base}api/games?tournament={tid}&limit=500")
        games = []
        for row in page["games"]:
            status, replay = await get_json(f"{base}api/games/{row['game_id']}")
            assert status == 200, replay
            entry = schedule_of[row["game_id"]]
            games.append(Game(entry.index, entry.pair_index, entry.pair_key, entry.mrx,
                              entry.detectives, replay))
    return Published(listing, one, sorted(games, key=lambda g: g.index))


def old_way(public: Published, game: Game) -> int:
    """Mister X's start as the schedule dealt it before secret deals: pair_seed of the
    published seed (0 when none is published), the players and the pair number."""
    shown = [(public.tournament.get(key) or {}).get("seed") for key in ("deals", "spec")]
    seed = next((s for s in shown if isinstance(s, int)), 0)
    return new_game("classic", pair_seed(seed, game.detectives, game.mrx,
                                         game.pair_index)).mrx_station


def partner(public: Published, game: Game) -> Game:
    [other] = [g for g in public.games if g.pair_key == game.pair_key and g is not game]
    return other


def predictions(public: Published, game: Game) -> dict[str, int | None]:
    """Each predictor's guess of ``game``'s Mister X start from the other games' data."""
    other = partner(public, game)
    seed = other.replay.get("seed")  # the pair's seed, published with the finished game
    return {"old way": old_way(public, game),
            # the bot that played Mister X in the other game of the pair remembers it
            "remembered": other.mrx_start,
            "partner seed": None if seed is None else new_game("classic", int(seed)).mrx_station}


def hits(public: Published) -> dict[str, int]:
    counts = {"old way": 0, "remembered": 0, "partner seed": 0}
    for game in public.games:
        for name, guess in predictions(public, game).items():
            counts[name] += guess == game.mrx_start
    return counts


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str], str]:
    """Two secret-deal tournaments and a public same-deal one, in one database, played at
    once by three runners (each with its server) sharing the file."""
    url = f"sqlite:///{tmp_path_factory.mktemp('deals') / 'yard.db'}"
    *secret, control = tournaments(url, ["--pairs", str(PAIRS)], ["--pairs", str(PAIRS)],
                                   ["--pairs", "2", "--seed", "7", "--pairing", "same-deal"])
    return url, secret, control


async def test_public_data_does_not_predict_secret_deals(
        runs: tuple[str, list[str], str]) -> None:
    url, secret, _ = runs
    for tid in secret:
        public = await published(url, tid)
        assert len(public.games) == 2 * PAIRS
        assert any(t["tournament_id"] == tid for t in public.listing["tournaments"])
        # Within each pair the detectives start alike (fresh-mrx); Mister X: see hits.
        for game in public.games:
            assert game.detective_starts == partner(public, game).detective_starts
        found = hits(public)
        assert max(found.values()) <= PAIRS, found  # chance: about 2PAIRS/13 each


async def test_two_secret_tournaments_of_the_same_bots_deal_differently(
        runs: tuple[str, list[str], str]) -> None:
    url, secret, _ = runs
    first, second = [await published(url, tid) for tid in secret]
    pairs = list(zip(first.games, second.games, strict=True))
    assert sum(a.mrx_start == b.mrx_start for a, b in pairs) <= PAIRS  # chance: 1/13
    assert sum(a.detective_starts == b.detective_starts for a, b in pairs) <= PAIRS


async def test_the_predictors_find_a_public_same_deal_start(
        runs: tuple[str, list[str], str]) -> None:
    url, _, control = runs
    public = await published(url, control)
    assert len(public.games) == 4
    assert hits(public) == {"old way": 4, "remembered": 4, "partner seed": 4}


def test_stored_specs_and_records_say_how_games_were_dealt(
        runs: tuple[str, list[str], str]) -> None:
    url, secret, control = runs
    with Database.connect(url) as db:
        for tid in [*secret, control]:
            spec = db.get_tournament(tid).spec
            fresh = tid != control
            assert (spec["seed"] is None, spec["pairing"]) == \
                ((True, "fresh-mrx") if fresh else (False, "same-deal"))
            assert (spec["secret"] is not None) == fresh
            for row in db.results(tournament_id=tid):
                record = db.load_game(row.game_id)
                assert (record.mrx_seed is not None) == fresh
                start = new_game("classic", record.seed, mrx_seed=record.mrx_seed)
                assert start.positions == from_text(record.start_position).positions
                regenerate(record)  # every message of the game rebuilds from the record


# ---------------------------------------------------------------- the seeds bots are sent


def sent_seeds(record: GameRecord) -> dict[str, int]:
    """``game_start.seed`` as each side of the game was sent it (``mrx``, ``detectives``)."""
    seats = regenerate(record).seats
    return {"mrx": seats["mrx"][0]["seed"], "detectives": seats["d1"][0]["seed"]}


@dataclass
class Guesses:
    """An attacker's guesses of Mister X's hidden stations in one game, after his first
    reveal: how many were right, how many there were, and the sum of 1/|possible set|
    (what a pick from the public possible set gets right on average)."""

    hits: int = 0
    moves: int = 0
    chance: float = 0.0
    variance: float = 0.0

    def add(self, other: Guesses) -> None:
        self.hits += other.hits
        self.moves += other.moves
        self.chance += other.chance
        self.variance += other.variance


def replay_attack(record: GameRecord, seed: int, pick: random.Random) -> Guesses:
    """Guess Mister X's hidden stations in ``record``'s game as a detective who knows only
    the public moves and believes Mister X is the built-in ``random`` bot seeded ``seed``.

    One hypothesis per station Mister X may have started at (public): that start with a
    ``random`` bot begun with ``seed``, played on along the game's detective moves and kept
    while what it shows the detectives (tickets, reveals, captures) is what the game showed.
    After each hidden move of Mister X the guess is the station most hypotheses name, or a
    pick from the public possible set once none is left.
    """
    rules = rules_from_definition(record.ruleset_definition)
    truth = from_text(record.start_position, rules)
    hypotheses: list[tuple[State, Bot]] = []
    for start in sorted(truth.view(1).possible):
        bot = make_bot("random")
        bot.begin(truth.rules, [MRX], seed)
        hypotheses.append((state_from_view(truth.view(1), start), bot))
    out = Guesses()
    for turn in record.turns:
        if turn.move is None:
            break
        mover = truth.to_move
        move = Move.parse(turn.move)
        truth = truth.apply(move)
        shown = truth.view(None).to_dict()
        alive = []
        for state, bot in hypotheses:
            legal = state.legal_moves()
            mine = bot.choose(NO_VIEW, legal) if mover == MRX else move
            if mine in legal:
                state = state.apply(mine)
                if state.view(None).to_dict() == shown:
                    alive.append((state, bot))
        hypotheses = alive
        entries = detective_log(truth)
        revealed = [e for e in entries if e.station is not None]
        if mover != MRX or not revealed or entries[-1].station is not None:
            continue  # not a hidden move of Mister X after his first reveal
        possible = sorted(truth.view(1).possible)
        named = [state.mrx_station for state, _ in hypotheses]
        guess = (max(sorted(set(named)), key=named.count) if named
                 else pick.choice(possible))
        p = 1 / len(possible)
        out.hits += guess == truth.mrx_station
        out.moves += 1
        out.chance += p
        out.variance += p * (1 - p)
    return out


def test_the_twin_games_seed_does_not_replay_mister_x(
        runs: tuple[str, list[str], str]) -> None:
    url, secret, control = runs
    total = Guesses()
    pick = random.Random(40)
    with Database.connect(url) as db:
        for tid in [*secret, control]:
            entries = {e.schedule_id: e for e in db.scheduled(tid)}
            games: dict[str, dict[str, GameRecord]] = {}
            for row in db.results(tournament_id=tid):
                entry = entries[row.schedule_id]
                games.setdefault(entry.pair_key, {})[entry.mrx] = db.load_game(row.game_id)
            for pair in games.values():
                first, second = pair["greedy"], pair["random"]  # who plays Mister X
                seeds = sent_seeds(first), sent_seeds(second)
                # Every side of the two games was sent its own seed.
                assert len({s for sent in seeds for s in sent.values()}) == 4, seeds
                # greedy, Mister X in the first game, replays random, Mister X in the second.
                total.add(replay_attack(second, seeds[0]["mrx"], pick))
    assert total.moves >= 30, total  # enough hidden moves to tell
    bound = total.chance + 4 * math.sqrt(total.variance) + 2
    assert total.hits <= bound, total  # before per-game seeds: nearly every move
