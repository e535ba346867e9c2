"""What defines a tournament, and storing a new one.

:class:`TournamentSpec` is stored with the tournament (so ``yard tournament resume`` needs
no flags): the players, the schedule's shape, the time control and fault policy, bot
options, ``--engine`` definitions and an optional SPRT. :meth:`TournamentSpec.validate`
checks it before anything is stored or started; :func:`create` stores the tournament with
its whole schedule (:mod:`tournament.schedule`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from bots.spec import BotSpec, parse_option_pairs
from db.store import Database
from game import load_ruleset
from game.errors import YardError
from protocol import OnTimeout
from ratings.sprt import SprtError, SprtSpec
from tournament.engines import Engine, spec_engine
from tournament.schedule import Format, bots_of, make_schedule, mrx_bot, team_members


class TournamentRunError(YardError):
    """A tournament could not be set up or run."""


@dataclass(frozen=True)
class TournamentSpec:
    """Everything that defines a tournament; stored with it so a resume needs no flags."""

    rules: str
    bots: list[str]
    format: str = Format.ROUND_ROBIN.value
    pairs: int = 10
    seed: int = 0
    move_time: float = 10.0
    bank_time: float = 0.0
    self_play: bool = False
    detectives: int | None = None
    on_timeout: str = OnTimeout.FORFEIT.value
    max_illegal: int = 3
    connect_timeout: float = 15.0
    bot_options: dict[str, list[str]] = field(default_factory=dict)
    #: An SPRT of the first player against the second (``SprtSpec.to_dict()``); ``pairs``
    #: is then the most pairs the test may use.
    sprt: dict[str, float] | None = None
    #: Bots that are not built-in or installed ones: name -> ``Engine.to_dict()``.
    engines: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored in the database)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TournamentSpec:
        """Inverse of :meth:`to_dict`; unknown keys are ignored for forward compatibility."""
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def validate(self) -> None:
        """Check the ruleset and numbers before anything is stored or started."""
        rules = load_ruleset(self.rules)
        if self.detectives is not None:
            rules.with_detectives(self.detectives)
        if self.move_time <= 0 or self.bank_time < 0 or self.connect_timeout < 0:
            raise TournamentRunError("--move-time must be > 0 and --bank-time >= 0")
        if self.max_illegal < 1:
            raise TournamentRunError("--max-illegal must be at least 1")
        make_schedule(self.bots, self.pairs, self.seed, Format(self.format), self.self_play)
        if self.sprt is not None:
            self._validate_sprt()

    def _validate_sprt(self) -> None:
        try:
            SprtSpec.from_dict(self.sprt or {})
        except SprtError as exc:
            raise TournamentRunError(f"--sprt: {exc}") from None
        if len(self.bots) != 2:
            raise TournamentRunError(f"--sprt tests one player against another: give "
                                     f"exactly two players in --bots, not {len(self.bots)}")
        if self.self_play:
            raise TournamentRunError("--sprt cannot be combined with --self-play")

    def bot_names(self) -> list[str]:
        """Every distinct bot process the tournament needs, in first-mention order."""
        names = [name for player in self.bots for name in bots_of(player)]
        return list(dict.fromkeys(names))

    def engine(self, name: str) -> Engine:
        """How to launch bot ``name``: its ``--engine``, else ``yard bot NAME`` with the
        tournament's options for it."""
        if name in self.engines:
            return Engine.from_dict(self.engines[name])
        return spec_engine(BotSpec(name).with_options(
            parse_option_pairs(self.bot_options.get(name, []))), name)

    def check_roles(self, roles: dict[str, list[str]]) -> None:
        """Raise unless every bot is known (``roles``: name -> roles it plays) and plays
        the side each player spec puts it on."""
        for player in self.bots:
            wanted = [(mrx_bot(player), "mrx")]
            wanted += [(name, "detectives") for name in team_members(player)]
            for name, role in wanted:
                if name not in roles:
                    raise TournamentRunError(f"unknown bot {name!r}; bots: "
                                             f"{', '.join(sorted(roles))} (or a class "
                                             f"file.py:Class, or an --engine)")
                if role not in roles[name]:
                    raise TournamentRunError(
                        f"bot {name!r} cannot play {role} (it plays "
                        f"{' and '.join(roles[name])}); tournaments swap roles, so give "
                        f"such a bot a partner, e.g. 'run2/rush' (Mister X/detectives)")


def create(db: Database, spec: TournamentSpec) -> str:
    """Validate ``spec``, store the tournament and its whole schedule; returns its id."""
    spec.validate()
    games = make_schedule(spec.bots, spec.pairs, spec.seed, Format(spec.format), spec.self_play)
    tournament_id = db.create_tournament(spec.to_dict())
    db.schedule(tournament_id, games)
    return tournament_id

