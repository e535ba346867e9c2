"""Tournament schedules: role-swapped pairs, round robin or gauntlet. Pure functions.

A schedule is a list of :class:`records.ScheduledGame`, the entries the database stores
(:meth:`db.store.Database.schedule` assigns their ``schedule_id``).

Scotland Yard is asymmetric, so games come in pairs: for bots A and B and pair number p,
A hunts B and B hunts A from the same detectives' starts (the same game ``seed``). How
Mister X starts is the :class:`Pairing`: ``fresh-mrx`` (the default of tournaments) draws
his start afresh for each game (``mrx_seed``), so the bot that played Mister X in one game
of a pair learns nothing of his start in the other; ``same-deal`` deals both games alike (a
bot that remembers game 1 knows Mister X's start in game 2: only for trusted bots).

Where seeds come from is :class:`Deals`: a public ``seed`` (research runs: anyone who knows
it and the players can compute every deal) or a secret key (nothing public predicts a deal).
The seeds the bots are handed (``game_start.seed``) derive from a ``seat_seed`` of each game
(:meth:`Deals.seat_seed`), never from what the two games of a pair share.

A *player* is a bot name; a detective team ``a+b`` whose bots take the detective seats in
turn (``dqn+alphabeta`` with 4 detectives: dqn, alphabeta, dqn, alphabeta), playing Mister X
with its first bot; or ``x/team``: bot ``x`` as Mister X and ``team`` as detectives, for bots
that play one role only (``run2/rush``).

>>> games = make_schedule(["random", "rush"], pairs=1, seed=7)
>>> [(g.detectives, g.mrx) for g in games]
[('random', 'rush'), ('rush', 'random')]
>>> games[0].seed == games[1].seed, games[0].mrx_seed is None
(True, True)
>>> fresh = make_schedule(["random", "rush"], pairs=1, seed=7, pairing=Pairing.FRESH_MRX)
>>> fresh[0].seed == fresh[1].seed, fresh[0].mrx_seed != fresh[1].mrx_seed
(True, True)
>>> games[0].seat_seed != games[1].seat_seed  # what the bots' seeds derive from: per game
True
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass, field
from enum import Enum

from game.errors import YardError
from records import ScheduledGame


class ScheduleError(YardError):
    """A tournament cannot be scheduled as asked."""


class Pairing(Enum):
    """How the two games of a role-swapped pair are dealt."""

    #: The detectives' starts are shared, Mister X's start is drawn afresh for each game
    #: (from its own ``mrx_seed``): nothing from game 1 tells where he starts in game 2.
    FRESH_MRX = "fresh-mrx"
    #: Both games from one deal: a bot that remembers game 1 knows Mister X's start in
    #: game 2 (it played him from there). Only for trusted bots; what stored tournaments
    #: from before pairings existed used.
    SAME_DEAL = "same-deal"


#: Bytes of a new secret deal key (:meth:`Deals.new_secret`).
SECRET_BYTES = 32


@dataclass(frozen=True)
class Deals:
    """Where a schedule's game seeds come from: a public ``seed`` or a ``secret`` key.

    With a public seed the pair seeds are :func:`pair_seed` (as they always were, so an
    earlier run with that seed is reproduced) and Mister X's own seeds come from a key
    derived from the seed: anyone who knows the seed can compute every deal. With a secret
    key every seed is an HMAC-SHA256 of the pair (or game) under the key: without the key
    nothing public (players, pair numbers, other games' seeds) predicts a deal.
    """

    seed: int | None = None
    secret: bytes | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        """Refuse both or neither of seed and secret, and a short secret."""
        if (self.seed is None) == (self.secret is None):
            raise ScheduleError("deals need either a public seed or a secret key")
        if self.secret is not None and len(self.secret) < 16:
            raise ScheduleError(f"a secret deal key needs at least 16 bytes, got "
                                f"{len(self.secret)}")

    @classmethod
    def new_secret(cls) -> Deals:
        """Deals from a fresh random key of :data:`SECRET_BYTES` bytes."""
        return cls(secret=secrets.token_bytes(SECRET_BYTES))

    def pair_seed(self, a: str, b: str, number: int) -> int:
        """The game seed of pair ``number`` of players ``a`` and ``b`` (both orders alike):
        the whole deal under ``same-deal``, the detectives' starts under ``fresh-mrx``."""
        if self.seed is not None:
            return pair_seed(self.seed, a, b, number)
        return self._keyed("pair", min(a, b), max(a, b), number)

    def mrx_seed(self, pair_key: str, mrx: str) -> int:
        """Mister X's own seed for the game of pair ``pair_key`` where ``mrx`` plays him
        (``fresh-mrx``)."""
        return self._keyed("mrx", pair_key, mrx)

    def seat_seed(self, pair_key: str, mrx: str) -> int:
        """The seat seed (``server.match.MatchSpec.seat_seed``: what each side's
        ``game_start.seed`` derives from) of the game of pair ``pair_key`` where ``mrx``
        plays Mister X: one per game under every pairing, so the two games of a pair never
        hand a side the same seed."""
        return self._keyed("seat", pair_key, mrx)

    def _keyed(self, *parts: str | int) -> int:
        key = self.secret
        if key is None:
            key = hashlib.sha256(f"yard public deal key:{self.seed}".encode()).digest()
        text = json.dumps(parts, separators=(",", ":")).encode()
        return int.from_bytes(hmac.digest(key, text, "sha256")[:8], "big") >> 1


def deal_mrx_seed(deals: Deals, pairing: Pairing, entry: ScheduledGame) -> int | None:
    """Mister X's own seed for schedule entry ``entry`` (``None`` under ``same-deal``)."""
    if pairing is Pairing.SAME_DEAL:
        return None
    return deals.mrx_seed(entry.pair_key, entry.mrx)


class Format(Enum):
    """How players are paired."""

    ROUND_ROBIN = "round-robin"
    GAUNTLET = "gauntlet"


def _split(player: str) -> tuple[str, str]:
    mrx_part, sep, det_part = player.partition("/")
    if not sep:
        return player.split("+")[0], player
    if "+" in mrx_part or "/" in det_part:
        raise ScheduleError(f"player {player!r}: expected MRX_BOT/DETECTIVE_TEAM")
    return mrx_part, det_part


def team_members(player: str) -> list[str]:
    """The detective bots of a player spec: ``"dqn+alphabeta"`` -> ``["dqn", "alphabeta"]``,
    ``"run2/rush"`` -> ``["rush"]``."""
    members = [m.strip() for m in _split(player)[1].split("+")]
    if not all(members):
        raise ScheduleError(f"player {player!r}: empty bot name in team")
    return members


def mrx_bot(player: str) -> str:
    """The bot that plays Mister X for a player spec."""
    name = _split(player)[0].strip()
    if not name:
        raise ScheduleError(f"player {player!r}: empty Mister X bot name")
    return name


def bots_of(player: str) -> list[str]:
    """Every bot a player spec uses, Mister X's first."""
    return list(dict.fromkeys([mrx_bot(player), *team_members(player)]))


def pair_seed(seed: int, a: str, b: str, number: int) -> int:
    """A stable 63-bit seed for pair ``number`` of players ``a`` and ``b``."""
    text = f"{seed}:{min(a, b)}:{max(a, b)}:{number}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1


def make_schedule(players: list[str], pairs: int, seed: int | Deals,
                  fmt: Format = Format.ROUND_ROBIN, self_play: bool = False,
                  pairing: Pairing = Pairing.SAME_DEAL) -> list[ScheduledGame]:
    """Every game of a tournament, in play order (pairs interleaved across matchups).
    ``pair_key`` is ``"A|B|p"`` for pair ``p`` of matchup ``(A, B)``. ``seed``: the
    :class:`Deals` (an ``int`` is a public seed). Under ``fresh-mrx`` every entry gets its
    ``mrx_seed`` (:func:`deal_mrx_seed`); tournaments pass their pairing (default
    ``fresh-mrx``, :class:`tournament.spec.TournamentSpec`). Every entry gets its own
    ``seat_seed`` (:meth:`Deals.seat_seed`)."""
    deals = seed if isinstance(seed, Deals) else Deals(seed=seed)
    if pairs < 1:
        raise ScheduleError(f"--pairs must be at least 1, got {pairs}")
    if len(set(players)) != len(players):
        raise ScheduleError(f"a player is listed twice: {', '.join(players)}")
    for player in players:
        bots_of(player)
    matchups = _matchups(players, fmt)
    if not matchups and not self_play:
        raise ScheduleError("a tournament needs at least two players (or --self-play)")
    games: list[ScheduledGame] = []
    for number in range(pairs):
        for a, b in matchups:
            key = f"{a}|{b}|{number}"
            game_seed = deals.pair_seed(a, b, number)
            games.append(ScheduledGame(len(games), number, mrx=b, detectives=a,
                                       seed=game_seed, pair_key=key))
            games.append(ScheduledGame(len(games), number, mrx=a, detectives=b,
                                       seed=game_seed, pair_key=key))
        if self_play:
            for player in players:
                key = f"{player}|{player}|{number}"
                games.append(ScheduledGame(len(games), number, mrx=player, detectives=player,
                                           seed=deals.pair_seed(player, player, number),
                                           pair_key=key))
    for game in games:
        game.mrx_seed = deal_mrx_seed(deals, pairing, game)
        game.seat_seed = deals.seat_seed(game.pair_key, game.mrx)
    return games


def _matchups(players: list[str], fmt: Format) -> list[tuple[str, str]]:
    if fmt is Format.GAUNTLET:
        if len(players) < 2:
            raise ScheduleError("a gauntlet needs its bot and at least one opponent")
        return [(players[0], other) for other in players[1:]]
    return [(a, b) for i, a in enumerate(players) for b in players[i + 1:]]
