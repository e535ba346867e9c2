"""Tournament schedules: role-swapped pairs, round robin or gauntlet. Pure functions.

A schedule is a list of :class:`db.records.ScheduledGame`, the entries the database stores
(:meth:`db.store.Database.schedule` assigns their ``schedule_id``).

Scotland Yard is asymmetric, so games come in pairs: for bots A and B and pair number p,
A hunts B and B hunts A from the same start positions (the same game seed).

A *player* is a bot name; a detective team ``a+b`` whose bots take the detective seats in
turn (``dqn+alphabeta`` with 4 detectives: dqn, alphabeta, dqn, alphabeta), playing Mister X
with its first bot; or ``x/team``: bot ``x`` as Mister X and ``team`` as detectives, for bots
that play one role only (``run2/rush``).

>>> games = make_schedule(["random", "rush"], pairs=1, seed=7)
>>> [(g.detectives, g.mrx) for g in games]
[('random', 'rush'), ('rush', 'random')]
>>> games[0].seed == games[1].seed
True
"""

from __future__ import annotations

import hashlib
from enum import Enum

from db.records import ScheduledGame
from game.errors import YardError


class ScheduleError(YardError):
    """A tournament cannot be scheduled as asked."""


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


def make_schedule(players: list[str], pairs: int, seed: int,
                  fmt: Format = Format.ROUND_ROBIN, self_play: bool = False
                  ) -> list[ScheduledGame]:
    """Every game of a tournament, in play order (pairs interleaved across matchups).
    ``pair_key`` is ``"A|B|p"`` for pair ``p`` of matchup ``(A, B)``."""
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
            game_seed = pair_seed(seed, a, b, number)
            games.append(ScheduledGame(len(games), number, mrx=b, detectives=a,
                                       seed=game_seed, pair_key=key))
            games.append(ScheduledGame(len(games), number, mrx=a, detectives=b,
                                       seed=game_seed, pair_key=key))
        if self_play:
            for player in players:
                key = f"{player}|{player}|{number}"
                games.append(ScheduledGame(len(games), number, mrx=player, detectives=player,
                                           seed=pair_seed(seed, player, player, number),
                                           pair_key=key))
    return games


def _matchups(players: list[str], fmt: Format) -> list[tuple[str, str]]:
    if fmt is Format.GAUNTLET:
        if len(players) < 2:
            raise ScheduleError("a gauntlet needs its bot and at least one opponent")
        return [(players[0], other) for other in players[1:]]
    return [(a, b) for i, a in enumerate(players) for b in players[i + 1:]]
