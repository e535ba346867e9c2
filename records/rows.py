"""What the database stores and reads back beside game records: a tournament's planned
games (:class:`ScheduledGame`), a stored game's one-line summary (:class:`GameSummary`), its
result as the ratings read it (:class:`ResultRow`), a tournament (:class:`TournamentInfo`),
a bot's compute in a set of games (:class:`ComputeRow`), a bot account
(:class:`AccountInfo`) and a standing group's game as the live ratings read it
(:class:`PoolGame`). Plain classes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from game import Termination, Winner


@dataclass
class ScheduledGame:
    """One planned game of a tournament, stored before the tournament starts.

    ``pair_index`` is the pair number; ``pair_key`` names the role-swapped pair (A hunts B,
    B hunts A, same seed) uniquely within the tournament (default: both players and the
    pair number). ``mrx``/``detectives`` are player specs: a bot name, or a detective team
    such as ``"dqn+alphabeta"`` (seats take the names in turn). ``schedule_id`` is assigned
    by the database; a schedule entry is done exactly when a game with that ``schedule_id``
    exists.

    ``mrx_seed``: Mister X's own deal seed (``game.new_game(..., mrx_seed=)``: the
    detectives' starts come from ``seed``, his from this), ``None`` when ``seed`` deals
    everyone. The schedule table does not store it: it is a function of the tournament's
    spec and the entry (``tournament.spec.TournamentSpec.dealt``), filled in when the game
    is started; entries read from the database carry ``None``. ``seat_seed``: the same for
    the game's seat seed (``server.match.MatchSpec.seat_seed``: what its bots' seeds
    derive from; ``tournament.schedule.Deals.seat_seed``).
    """

    index: int
    pair_index: int
    mrx: str
    detectives: str
    seed: int | None
    schedule_id: int | None = None
    pair_key: str = ""
    mrx_seed: int | None = None
    seat_seed: int | None = None

    def __post_init__(self) -> None:
        """Name the pair by both players and the pair number when no key is given."""
        if not self.pair_key:
            low, high = sorted((self.mrx, self.detectives))
            self.pair_key = f"{low}|{high}|{self.pair_index}"


@dataclass
class GameSummary:
    """One line of ``yard games``: a stored game without its turns."""

    game_id: str
    ruleset: str
    mrx_player: str
    detective_player: str
    players: dict[str, str]
    winner: Winner | None
    termination: Termination
    moves: int
    started_at: datetime
    finished_at: datetime
    tournament_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``yard games --json``)."""
        return {"game_id": self.game_id, "ruleset": self.ruleset,
                "mrx_player": self.mrx_player, "detective_player": self.detective_player,
                "players": dict(self.players),
                "winner": self.winner.value if self.winner else None,
                "termination": self.termination.value, "moves": self.moves,
                "started_at": self.started_at.isoformat(),
                "finished_at": self.finished_at.isoformat(),
                "tournament_id": self.tournament_id}


@dataclass
class ResultRow:
    """One game's result as the ratings package consumes it.

    For a scheduled game the players are the schedule's player specs (a team stays
    ``"dqn+alphabeta"`` in both roles); otherwise they come from the seats
    (:attr:`GameRecord.mrx_player`, :attr:`GameRecord.detective_player`). ``pair_key`` names
    the role-swapped pair the game belongs to (``"<tournament id>/<schedule pair key>"``),
    or ``None`` for a game outside any schedule.
    """

    game_id: str
    ruleset: str
    mrx_player: str
    detective_player: str
    winner: Winner | None
    termination: Termination
    moves: int
    tournament_id: str | None = None
    schedule_id: int | None = None
    pair_key: str | None = None


@dataclass
class TournamentInfo:
    """A stored tournament: its spec and how much of its schedule has been played."""

    tournament_id: str
    spec: dict[str, Any]
    created_at: datetime
    scheduled: int = 0
    played: int = 0
    #: What the runner recorded (``sprt``: the test's last state; ``finished``: the
    #: runner ended the tournament early, e.g. on an SPRT decision).
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        """True when a schedule exists and every entry has a stored game, or when the
        runner marked the tournament finished early (a decided SPRT)."""
        return bool(self.state.get("finished")) or (
            self.scheduled > 0 and self.played >= self.scheduled)


@dataclass
class ComputeRow:
    """The compute one bot process spent on its moves in a set of games, as sums and counts
    (so rows add up): ``bot`` name and ``instance`` (``None``: not announced), ``moves`` it
    chose itself, their total server-measured ``time_s``, and per effort key the total
    reported and the number of moves that reported it."""

    bot: str
    instance: str | None
    moves: int = 0
    time_s: float = 0.0
    playouts: int = 0
    playout_moves: int = 0
    nodes: int = 0
    node_moves: int = 0
    depth: int = 0
    depth_moves: int = 0


@dataclass
class AccountInfo:
    """A bot account as stored: ``name``, how it was made (``source``: ``cli`` or
    ``registration``), when, when its token was last accepted, and when it was revoked
    (``None``: active). ``token_hash`` is the salted hash the server checks tokens against
    (:mod:`db.store.accounts`); it is never shown."""

    name: str
    source: str
    created_at: datetime
    last_used: datetime | None = None
    revoked_at: datetime | None = None
    token_hash: str = field(default="", repr=False)

    @property
    def active(self) -> bool:
        """Whether its token is accepted (not revoked)."""
        return self.revoked_at is None


class PoolGame(NamedTuple):
    """One stored game of a standing group (a ladder or Play), as the live ratings read it:
    the players, who won, how it ended, and the seat at fault (``None``: nobody)."""

    game_id: str
    mrx: str
    detectives: str
    winner: Winner | None
    termination: Termination
    fault_seat: int | None
    finished_at: datetime
