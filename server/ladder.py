"""The standing ladder's matchmaking (sans-I/O): which connected bots play next.

``yard serve --ladder grid5,classic`` keeps matching the bots that opted in (``hello``'s
``ladder`` and ``max_games``), forever. :class:`Ladder` only decides; the core
(:mod:`server.core`) says who is free, starts the games it proposes and reports every
result. The policy (also in docs/ladder.md):

- **Pairs.** Every match is a role-swapped pair: A plays Mister X against B, then B plays
  Mister X against A, from a secret random deal (the detectives' starts shared, Mister X's
  drawn afresh for each game, so game 1 tells nothing about game 2). Both games start at
  once when both bots have two free game slots; otherwise the second starts as soon as both
  have a free slot (waiting second games go before new pairs), at the latest when the first
  ends; their other free slots take new games meanwhile. A second game whose bot left is
  dropped.
- **Roles.** A bot plays only the sides it declared (``hello.roles``; default both): two
  bots meet only if one can play Mister X and the other the detectives, and a match with a
  one-role bot is a single game in that role, not a pair.
- **Placement.** A bot with fewer than ``placement`` rated games plays opponents spread
  over the ladder: its k-th placement pair goes to the free opponent whose rank is nearest
  the k-th of the quantiles 1/2, 1/6, 5/6, 1/3, 2/3 (then round again).
- **Afterwards** the opponent is drawn at random, weighted by the square of the match
  quality of the two live ratings (:meth:`ratings.live.LiveRatings.quality`: highest when
  the outcome is most uncertain, so near its rating) divided by ``1 + n - n_min``, where
  ``n`` is how often the two have met and ``n_min`` the fewest meetings it has with any
  free opponent. No pair is played much more often than the others: two bots that have
  met more than twice as often as one of them meets its connected opponents on average,
  plus one pair (:data:`MEETING_SLACK` games), wait for other opponents instead.
- **Who first.** Among free bots, the one with the fewest games in that ruleset picks first.
- **Health.** A bot that forfeits ``pause_after`` games in a row (timeouts, errors, illegal
  moves, disconnects, protocol violations) is paused from matchmaking for ``pause_s``
  seconds (doubled for each pause in a row, reset by a game it finishes without a
  forfeit); the reason, with the time it ends, is kept for its page and sent to it (again
  when it reconnects while paused). Reconnecting does not lift a pause: a bot whose client
  reconnects by itself would otherwise never stay paused. When the pause ends it is matched
  again at once (:meth:`Ladder.pause_ends` tells the core when to wake up).
- **Ratings** live in memory (:class:`ratings.live.LiveRatings` per ruleset), rebuilt from
  the stored games when the server starts, so a bot that leaves and comes back keeps its
  rating. They drive matchmaking; the standings are ordered by the full-history Elo of
  :class:`ratings.ranking.Ranking`, which settles as games accumulate.
"""

from __future__ import annotations

import random
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from game import Termination, Winner
from protocol import Side
from records import PoolGame

if TYPE_CHECKING:  # the server's core imports this module: no numpy (the ratings package)
    # until a ladder is made
    from ratings.live import LiveRating, LiveRatings
    from ratings.ranking import Ranking

LADDER_PREFIX = "ladder-"
"""Ladder games are stored in a tournament-like group ``ladder-RULES`` per ruleset."""

PLAY_PREFIX = "play-"
"""People's games (the Play page) are stored in ``play-RULES``: their own rating pool."""

MEETING_SLACK = 2
"""Games (one pair) two bots may have played beyond twice a bot's average number of games
with its connected opponents before they are kept apart."""

PLACEMENT_QUANTILES = (0.5, 1 / 6, 5 / 6, 1 / 3, 2 / 3)
"""Where a new bot's placement opponents sit on the ladder (0: the top)."""

#: Terminations that are a seat's fault (a forfeit) rather than the game's result.
FORFEITS = frozenset({Termination.TIMEOUT, Termination.ILLEGAL_MOVE,
                      Termination.PROTOCOL_VIOLATION, Termination.DISCONNECTED,
                      Termination.BOT_ERROR})


class OpCount:
    """A running count of the bots matchmaking examined (:data:`OPS`)."""

    def __init__(self) -> None:
        self.value = 0


OPS = OpCount()
"""Candidates :meth:`Ladder.propose` examined, all ladders together: a test and
bench/ladder_load.py check that one proposal's work grows no faster than the bots waiting
(counted, not timed)."""


def ladder_id(rules: str) -> str:
    """The tournament id under which ``rules``' ladder games are stored."""
    return LADDER_PREFIX + rules


def ladder_rules(tournament_id: str | None) -> str | None:
    """The ruleset of a ladder's tournament id, else ``None``."""
    if tournament_id is None or not tournament_id.startswith(LADDER_PREFIX):
        return None
    return tournament_id[len(LADDER_PREFIX):]


def play_id(rules: str) -> str:
    """The tournament id under which people's games on ``rules`` are stored."""
    return PLAY_PREFIX + rules


def play_rules(tournament_id: str | None) -> str | None:
    """The ruleset of a people's pool id, else ``None``."""
    if tournament_id is None or not tournament_id.startswith(PLAY_PREFIX):
        return None
    return tournament_id[len(PLAY_PREFIX):]


@dataclass(frozen=True)
class LadderGame:
    """A game the ladder wants played: ``mrx`` against ``detective`` (bot names) on
    ``rules``, dealt by ``seed`` (the detectives) and ``mrx_seed`` (Mister X); ``leg`` 1 or
    2 of its pair."""

    rules: str
    mrx: str
    detective: str
    seed: int
    mrx_seed: int
    leg: int


@dataclass
class Entrant:
    """A bot on the ladder (known since it first connected, or from stored games)."""

    name: str
    rules: frozenset[str] = frozenset()
    #: The sides it plays (``hello.roles``).
    roles: frozenset[Side] = frozenset(Side)
    #: Why it is out of matchmaking (``None``: it is not), until when, how many pauses
    #: in a row it had.
    paused: str | None = None
    paused_until: float = 0.0
    pauses: int = 0
    forfeits_in_a_row: int = 0
    #: Forfeits by cause (a termination's value), all time.
    forfeits: Counter[str] = field(default_factory=Counter)
    #: Placement pairs started, per ruleset.
    placements: Counter[str] = field(default_factory=Counter)
    #: Per ruleset: games and wins as Mister X, and as the detectives.
    mrx_games: Counter[str] = field(default_factory=Counter)
    mrx_wins: Counter[str] = field(default_factory=Counter)
    detective_games: Counter[str] = field(default_factory=Counter)
    detective_wins: Counter[str] = field(default_factory=Counter)
    #: When it was last connected (``None``: now, or never known).
    last_seen: datetime | None = None
    #: Whether it passed the ladder check (``--ladder-check``), or has rated games from
    #: before; and why its last check failed.
    checked: bool = False
    check_failed: str | None = None


@dataclass(frozen=True)
class Result:
    """A finished ladder game, as :meth:`Ladder.result` takes it: the two bots, who won,
    how it ended, and which bot's fault ended it (``None``: nobody's)."""

    rules: str
    mrx: str
    detective: str
    winner: Winner | None
    termination: Termination
    at_fault: str | None = None


class Ladder:
    """Matchmaking and live ratings of one server's ladder (rulesets ``rules``)."""

    def __init__(self, rules: Sequence[str], *, placement: int = 6, pause_after: int = 3,
                 pause_s: float = 600.0, check: bool = False,
                 rng: random.Random | None = None,
                 wall: Callable[[float], datetime] | None = None,
                 rank_refresh_s: float = 2.0) -> None:
        """An empty ladder; ``ValueError`` unless ``pause_after`` >= 1, the others >= 0."""
        if pause_after < 1 or placement < 0 or pause_s < 0:
            raise ValueError("pause_after must be >= 1, placement and pause_s >= 0")
        from ratings.live import LiveRatings
        from ratings.ranking import Ranking

        self.rules = tuple(dict.fromkeys(rules))
        self.placement = placement
        self.pause_after = pause_after
        self.pause_s = pause_s
        #: Bots play the check games (:meth:`needs_check`) before they are matched.
        self.check = check
        self.rng = rng or random.SystemRandom()
        #: ``now`` as a date (when a pause ends, in its reason).
        self.wall = wall or (lambda t: datetime.fromtimestamp(t, UTC))
        self.ratings: dict[str, LiveRatings] = {r: LiveRatings() for r in self.rules}
        #: The shown rank: every game's maximum-likelihood Elo, refitted at most every
        #: ``rank_refresh_s`` seconds while games come in (:mod:`ratings.ranking`).
        self.ranks: dict[str, Ranking] = {r: Ranking(rank_refresh_s) for r in self.rules}
        #: People's games against bots, rated in their own pool per ruleset.
        self.play_ratings: dict[str, LiveRatings] = {r: LiveRatings() for r in self.rules}
        self.entrants: dict[str, Entrant] = {}
        #: Games played per (ruleset, pair of names in sorted order).
        self.meetings: Counter[tuple[str, str, str]] = Counter()
        #: The same per (ruleset, bot): games against each opponent.
        self.met_by: dict[tuple[str, str], Counter[str]] = {}
        #: Second games of pairs waiting for their bots to be free.
        self.pending: list[LadderGame] = []
        #: The server's say on new pairs (the house bots' pace, server.house_pace):
        #: ``apart(a, b)`` keeps the two from meeting now; ``paired(a, b)`` hears of each
        #: new pair.
        self.apart: Callable[[str, str], bool] = lambda a, b: False
        self.paired: Callable[[str, str], None] = lambda a, b: None

    # ------------------------------------------------------------------ bots

    def join(self, name: str, rules: Iterable[str], roles: Iterable[Side] = tuple(Side)
             ) -> Entrant:
        """Bot ``name`` connected for ``rules`` (a subset of the ladder's), playing
        ``roles``: it is in matchmaking (unless paused)."""
        entrant = self.entrants.setdefault(name, Entrant(name))
        entrant.rules = frozenset(r for r in rules if r in self.ratings)
        entrant.roles = frozenset(roles)
        return entrant

    def needs_check(self, name: str) -> bool:
        """Bot ``name`` must pass the ladder check before it is matched (a new bot on a
        server with ``--ladder-check``; a bot with stored ladder games has passed)."""
        entrant = self.entrants.get(name)
        return self.check and (entrant is None or not entrant.checked)

    def checked(self, name: str, failure: str | None) -> None:
        """Bot ``name``'s ladder check ended: passed (``failure`` ``None``) or failed,
        and why (it is then matched with nobody until it connects again and passes)."""
        entrant = self.entrants.setdefault(name, Entrant(name))
        entrant.checked = failure is None
        entrant.check_failed = failure

    def paused(self, name: str, now: float) -> str | None:
        """Why bot ``name`` is out of matchmaking at ``now`` (``None``: it is not); an
        expired pause is lifted here."""
        entrant = self.entrants.get(name)
        if entrant is None or entrant.paused is None:
            return None
        if now >= entrant.paused_until:
            entrant.paused = None
            entrant.forfeits_in_a_row = 0
            return None
        return entrant.paused

    def pause_ends(self) -> float | None:
        """When the earliest pause ends (``None``: no bot is paused): matchmaking has
        work then."""
        ends = [e.paused_until for e in self.entrants.values() if e.paused is not None]
        return min(ends) if ends else None

    def lift_pauses(self, now: float) -> bool:
        """Lift every pause over at ``now``; whether there was one."""
        over = [n for n, e in self.entrants.items()
                if e.paused is not None and now >= e.paused_until]
        for name in over:
            self.paused(name, now)
        return bool(over)

    def left(self, name: str, when: datetime | None = None) -> None:
        """Bot ``name`` has no live connection now (since ``when``): its waiting second
        games are dropped (the first game of each is rated on its own, as every game
        is)."""
        self.pending = [g for g in self.pending if name not in (g.mrx, g.detective)]
        if when is not None and name in self.entrants:
            self.entrants[name].last_seen = when

    def replay(self, rules: str, games: Iterable[PoolGame], *, people: bool = False) -> None:
        """Rate stored games of ``rules`` (oldest first) as if they had just been played:
        the ladder's own (``people``: the Play page's, into their pool). Pauses they would
        cause are lifted: a bot is judged anew when the server starts."""
        for game in games:
            result = stored_result(rules, game)
            if people:
                self.played(result)
            else:
                self.result(result, 0.0)
        for entrant in self.entrants.values():
            entrant.paused = None
            entrant.pauses = entrant.forfeits_in_a_row = 0

    def rating(self, rules: str, name: str) -> LiveRating:
        """``name``'s live rating on ``rules``."""
        return self.ratings[rules].rating(name)

    def rank(self, rules: str, name: str, now: float | None = None) -> tuple[int, int]:
        """``(rank, of)``: ``name``'s place among the rated bots of ``rules`` (1: the top;
        ``of + 1`` for a bot not rated yet) and how many there are, in the order the ladder
        page shows (:meth:`standings`: the full-history fit, refitted if due at ``now``, then
        bots without a decided game by their live rating)."""
        ranking = self.ranks[rules]
        ranking.refresh(now)
        fitted = {row.name: k for k, row in enumerate(ranking.rows(), 1)}
        pool = self.ratings[rules]
        unfitted = [n for n in pool.players() if n not in fitted]
        of = len(fitted) + len(unfitted)
        if name in fitted:
            return fitted[name], of
        if name not in unfitted:
            return of + 1, of
        later = [n for n, _ in pool.ranked() if n not in fitted]
        return len(fitted) + later.index(name) + 1, of

    # ------------------------------------------------------------------ results

    def result(self, result: Result, now: float) -> str | None:
        """Rate a finished ladder game (at ``now``) and check the health of its bots;
        returns the reason the bot at fault was just paused, if it was."""
        pool = self.ratings.get(result.rules)
        if pool is None or result.termination is Termination.ABORTED:
            return None
        mrx_won = None if result.winner is None else result.winner is Winner.MRX
        pool.record(result.mrx, result.detective, mrx_won)
        self.ranks[result.rules].record(result.mrx, result.detective, mrx_won)
        self.meetings[_meeting(result.rules, result.mrx, result.detective)] += 1
        for a, b in ((result.mrx, result.detective), (result.detective, result.mrx)):
            self.met_by.setdefault((result.rules, a), Counter())[b] += 1
        for name in (result.mrx, result.detective):
            entrant = self.entrants.setdefault(name, Entrant(name))
            entrant.checked = True  # it has played rated games
            if name != result.at_fault:
                entrant.forfeits_in_a_row = entrant.pauses = 0
        mrx, detective = self.entrants[result.mrx], self.entrants[result.detective]
        mrx.mrx_games[result.rules] += 1
        detective.detective_games[result.rules] += 1
        if result.winner is Winner.MRX:
            mrx.mrx_wins[result.rules] += 1
        elif result.winner is Winner.DETECTIVES:
            detective.detective_wins[result.rules] += 1
        if result.at_fault is None or result.termination not in FORFEITS:
            return None
        entrant = self.entrants[result.at_fault]
        entrant.forfeits[result.termination.value] += 1
        entrant.forfeits_in_a_row += 1
        if entrant.paused is None and entrant.forfeits_in_a_row >= self.pause_after:
            seconds = self.pause_s * 2 ** entrant.pauses
            entrant.pauses += 1
            entrant.paused_until = now + seconds
            until = self.wall(entrant.paused_until).isoformat(timespec="seconds")
            entrant.paused = (f"paused from the ladder until {until} ({seconds:.0f} s) after "
                              f"{entrant.forfeits_in_a_row} forfeits in a row (last: "
                              f"{result.termination.value}); fix the bot before then")
            self.left(result.at_fault)
            return entrant.paused
        return None

    def played(self, result: Result) -> None:
        """Rate a finished game of a person against a bot (its own pool: it never moves
        a bot's ladder rating)."""
        pool = self.play_ratings.get(result.rules)
        if pool is not None and result.termination is not Termination.ABORTED:
            pool.record(result.mrx, result.detective,
                        None if result.winner is None else result.winner is Winner.MRX)

    # ------------------------------------------------------------------ matchmaking

    def propose(self, free: Mapping[str, int], now: float = 0.0) -> list[LadderGame]:
        """The games to start now, given each connected ladder bot's free game slots
        (``free``: name -> slots; bots not named are not connected). Waiting second
        games first, then new pairs while two free bots can meet."""
        slots = {n: k for n, k in free.items() if k > 0}
        out = self._pending_games(slots)
        active = [n for n in sorted(free) if n in self.entrants and self.paused(n, now) is None
                  and not self.needs_check(n)]
        ready = {n: None for n in active if slots.get(n, 0) > 0}
        # Who picks: grouped once by games (they only change as results come in).
        by_games: dict[int, list[tuple[str, str]]] = {}
        for a in ready:
            for r in sorted(self.entrants[a].rules):
                by_games.setdefault(self.ratings[r].rating(a).games, []).append((a, r))
        choices = deque((games, by_games[games]) for games in sorted(by_games))
        OPS.value += len(active) + len(ready)
        pools: dict[tuple[str, frozenset[Side]], set[str]] = {}
        while True:
            started = self._pair(choices, ready, active, pools)
            if started is None:
                return out
            first, second = started
            self.paired(first.mrx, first.detective)
            both = second is None or (slots[first.mrx] >= 2 and slots[first.detective] >= 2)
            for game in (first, second) if both and second else (first,):
                out.append(game)
                self._take(slots, game)
            for name in (first.mrx, first.detective):
                if slots[name] <= 0:
                    ready.pop(name, None)
            if not both and second is not None:
                self.pending.append(second)

    def _pending_games(self, slots: dict[str, int]) -> list[LadderGame]:
        """The waiting second games whose two bots have a free slot in ``slots`` (taken);
        the others keep waiting."""
        out: list[LadderGame] = []
        kept: list[LadderGame] = []
        for game in self.pending:
            if slots.get(game.mrx, 0) > 0 and slots.get(game.detective, 0) > 0:
                out.append(game)
                self._take(slots, game)
            else:
                kept.append(game)
        self.pending = kept
        return out

    def _pair(self, choices: deque[tuple[int, list[tuple[str, str]]]], ready: dict[str, None],
              active: list[str], pools: dict[tuple[str, frozenset[Side]], set[str]]
              ) -> tuple[LadderGame, LadderGame | None] | None:
        """A new pair among ``ready`` bots (``active``: every connected, unpaused one,
        busy or not): a bot drawn at random among those of ``choices`` (games and the
        (bot, ruleset) with that many, fewest first) that have an opponent picks; or
        ``None`` if no two of them should meet now (``choices`` loses those that cannot
        pick any more; ``pools``: see :meth:`_opponents`). A match with a bot that
        plays one side only is its one game in that side (the second ``None``)."""
        while choices:
            games, group = choices[0]
            if not group:
                choices.popleft()
                continue
            i = self.rng.randrange(len(group))
            a, rules = group[i]
            others = self._opponents(a, rules, ready, active, pools) if a in ready else []
            if not others:
                group[i] = group[-1]
                group.pop()
                continue
            entrant = self.entrants[a]
            if games < self.placement:
                b = self._placement_opponent(a, rules, others, entrant.placements[rules])
                entrant.placements[rules] += 1
            else:
                b = self._drawn_opponent(a, rules, others)
            break
        else:
            return None
        seed = self.rng.randrange(2**31)
        first = LadderGame(rules, a, b, seed, self.rng.randrange(2**31), 1)
        second = LadderGame(rules, b, a, seed, self.rng.randrange(2**31), 2)
        if not self._can_meet(a, b):  # only b as Mister X against a
            return LadderGame(rules, b, a, seed, second.mrx_seed, 1), None
        return first, second if self._can_meet(b, a) else None

    def _opponents(self, name: str, rules: str, ready: Mapping[str, None], active: list[str],
                   pools: dict[tuple[str, frozenset[Side]], set[str]]) -> list[str]:
        """Who among ``ready`` bots ``name`` may meet on ``rules`` now: not one it has
        met more than twice as often as its connected opponents on average, plus
        :data:`MEETING_SLACK` games (busy or not: better to wait for another than to play
        the same pair again). ``pools`` keeps, per ruleset and roles, the ``active`` bots
        such a bot may meet, for the rest of the proposal."""
        key = (rules, self.entrants[name].roles)
        rivals = pools.get(key)  # the same for every bot of these roles: found once
        if rivals is None:
            rivals = pools[key] = {b for b in active if rules in self.entrants[b].rules and (
                self._can_meet(name, b) or self._can_meet(b, name))}
            OPS.value += len(active)
        count = len(rivals) - (name in rivals)
        if not count:
            return []
        met = self.met_by.get((rules, name), Counter())
        mean = sum(k for b, k in met.items() if b in rivals and b != name) / count
        OPS.value += len(met) + len(ready)
        return [b for b in ready if b in rivals and b != name
                and met[b] <= 2 * mean + MEETING_SLACK and not self.apart(name, b)]

    def _placement_opponent(self, name: str, rules: str, others: list[str], k: int) -> str:
        pool = self.ratings[rules]
        rated = [n for n, _ in pool.ranked() if n != name]
        place = {n: k for k, n in enumerate(rated)}
        for n in sorted(n for n in others if n not in place):  # unrated: at the bottom
            place[n] = len(place)
        quantile = PLACEMENT_QUANTILES[k % len(PLACEMENT_QUANTILES)]
        OPS.value += len(place) + len(others)
        target = quantile * max(len(place) - 1, 0)
        return min(others, key=lambda n: (abs(place[n] - target), n))

    def _drawn_opponent(self, name: str, rules: str, others: list[str]) -> str:
        pool = self.ratings[rules]
        met = {b: self.meetings[_meeting(rules, name, b)] for b in others}
        fewest = min(met.values())
        weights = [pool.quality(name, b) ** 2 / (1 + met[b] - fewest) for b in others]
        return self.rng.choices(others, weights)[0]

    def _can_meet(self, mrx: str, detective: str) -> bool:
        """Bot ``mrx`` plays Mister X and ``detective`` the detectives."""
        return (Side.MRX in self.entrants[mrx].roles
                and Side.DETECTIVES in self.entrants[detective].roles)

    @staticmethod
    def _take(slots: dict[str, int], game: LadderGame) -> None:
        for name in {game.mrx, game.detective}:
            slots[name] -= 1

    # ------------------------------------------------------------------ views

    def standings(self, rules: str, connected: Iterable[str] = (), now: float | None = None
                  ) -> list[dict[str, object]]:
        """The live ladder of ``rules``, best first by the full-history Elo
        (:class:`ratings.ranking.Ranking`, refitted if stale and due at ``now``; ``None``:
        if stale): per bot its ``rank``, ``elo`` and ``elo_ci``, its live rating (``mu``,
        ``sigma``, ``ordinal``, ``games``) and ``live_rank`` (its place by the live
        rating, which matchmaking uses), whether it is connected, and its pause reason and
        forfeits by cause."""
        live = set(connected)
        rows: list[dict[str, object]] = []
        pool = self.ratings[rules]
        ranking = self.ranks[rules]
        ranking.refresh(now)
        fitted = {row.name: row for row in ranking.rows()}
        live_rank = {n: k for k, (n, _) in enumerate(pool.ranked(), 1)}
        names = list(fitted) + [n for n in live_rank if n not in fitted]
        names += sorted(n for n, e in self.entrants.items()
                        if rules in e.rules and n not in names)
        for rank, name in enumerate(names, 1):
            entrant = self.entrants.get(name, Entrant(name))
            if now is not None:
                self.paused(name, now)
            seen = entrant.last_seen
            fit = fitted.get(name)
            rows.append({"rank": rank, "name": name, **pool.rating(name).to_json(),
                         "elo": None if fit is None else round(fit.elo, 1),
                         "elo_ci": None if fit is None or fit.ci is None
                         else [round(fit.ci[0], 1), round(fit.ci[1], 1)],
                         "live_rank": live_rank.get(name),
                         "connected": name in live,
                         "paused": entrant.paused or entrant.check_failed,
                         "forfeits": dict(entrant.forfeits),
                         "mrx": _record(entrant.mrx_wins[rules], entrant.mrx_games[rules]),
                         "detectives": _record(entrant.detective_wins[rules],
                                               entrant.detective_games[rules]),
                         "last_seen": None if seen is None else seen.isoformat()})
        return rows

    def people(self, rules: str) -> list[dict[str, object]]:
        """The Play page's pool of ``rules``: people and the bots they played, best
        first."""
        return [{"rank": rank, "name": name, **rating.to_json()}
                for rank, (name, rating) in enumerate(self.play_ratings[rules].ranked(), 1)]


def stored_result(rules: str, game: PoolGame) -> Result:
    """A stored game as a :class:`Result` (the seat at fault named by its player)."""
    at_fault = (None if game.fault_seat is None
                else game.mrx if game.fault_seat == 0 else game.detectives)
    return Result(rules, game.mrx, game.detectives, game.winner, game.termination, at_fault)


def rating_history(rules: str, games: Iterable[PoolGame], name: str) -> dict[str, Any]:
    """Bot ``name``'s page data from its group's stored games: its live rating after each
    of its games (``history``), its forfeits by cause, and its record by role."""
    ladder = Ladder([rules], rng=random.Random(0))
    history: list[dict[str, Any]] = []
    for game in games:
        ladder.result(stored_result(rules, game), 0.0)
        if name in (game.mrx, game.detectives):
            rating = ladder.rating(rules, name)
            history.append({"game_id": game.game_id, "at": game.finished_at.isoformat(),
                            "mu": round(rating.mu, 3), "sigma": round(rating.sigma, 3),
                            "role": "mrx" if game.mrx == name else "detectives",
                            "winner": None if game.winner is None else game.winner.value,
                            "termination": game.termination.value})
    entrant = ladder.entrants.get(name, Entrant(name))
    return {"name": name, "rules": rules, "rating": ladder.rating(rules, name).to_json(),
            "history": history, "forfeits": dict(entrant.forfeits),
            "mrx": _record(entrant.mrx_wins[rules], entrant.mrx_games[rules]),
            "detectives": _record(entrant.detective_wins[rules],
                                  entrant.detective_games[rules])}


def _record(wins: int, games: int) -> dict[str, Any]:
    return {"games": games, "wins": wins, "win_rate": round(wins / games, 4) if games else None}


def _meeting(rules: str, a: str, b: str) -> tuple[str, str, str]:
    """The key of ``a`` and ``b`` meeting on ``rules`` (either order)."""
    return (rules, a, b) if a <= b else (rules, b, a)


__all__ = ["FORFEITS", "LADDER_PREFIX", "PLAY_PREFIX", "Entrant", "Ladder", "LadderGame",
           "Result", "ladder_id", "ladder_rules", "play_id", "play_rules"]
