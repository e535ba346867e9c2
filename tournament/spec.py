"""What defines a tournament, and storing a new one.

:class:`TournamentSpec` is stored with the tournament (so ``yard tournament resume`` needs
no flags): the players, the schedule's shape, the time control and fault policy, bot
options, ``--engine`` definitions and an optional SPRT. :meth:`TournamentSpec.validate`
checks it before anything is stored or started; :func:`create` stores the tournament with
its whole schedule (:mod:`tournament.schedule`).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from bots.spec import BotSpec, parse_option_pairs
from db.store import Database
from game import load_ruleset
from game.errors import YardError
from protocol import OnTimeout
from ratings.sprt import SprtError, SprtSpec
from records import ScheduledGame
from tournament.engines import Engine, spec_engine
from tournament.schedule import (
    SECRET_BYTES,
    Deals,
    Format,
    Pairing,
    ScheduleError,
    bots_of,
    deal_mrx_seed,
    make_schedule,
    mrx_bot,
    team_members,
)


class TournamentRunError(YardError):
    """A tournament could not be set up or run."""


@dataclass(frozen=True)
class TournamentSpec:
    """Everything that defines a tournament; stored with it so a resume needs no flags.

    Deals: ``seed`` is a public seed (``--seed``, research runs: anyone who knows it can
    compute every deal), or ``None`` for secret deals from ``secret`` (hex, drawn by
    :func:`create`; never show it before the tournament is finished: it predicts every
    deal). ``pairing`` is a :class:`~tournament.schedule.Pairing` value. Specs stored
    before these keys existed read as ``seed`` 0 and ``same-deal`` (:meth:`from_dict`).
    """

    rules: str
    bots: list[str]
    format: str = Format.ROUND_ROBIN.value
    pairs: int = 10
    seed: int | None = None
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
    #: The secret deal key as hex (with ``seed`` ``None``); secret until the end.
    secret: str | None = field(default=None, repr=False)
    #: How the two games of a pair are dealt: ``fresh-mrx`` or ``same-deal``.
    pairing: str = Pairing.FRESH_MRX.value

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored in the database; holds the ``secret``)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TournamentSpec:
        """Inverse of :meth:`to_dict`; unknown keys are ignored for forward compatibility.
        A spec stored before deals and pairings existed (no ``pairing`` key) keeps its
        public ``seed`` (0 if absent) and plays ``same-deal``, as it was scheduled."""
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        if "pairing" not in known:
            known["pairing"] = Pairing.SAME_DEAL.value
            if known.get("seed") is None and known.get("secret") is None:
                known["seed"] = 0
        return cls(**known)

    def deals(self) -> Deals:
        """Where the schedule's seeds come from: the public seed or the secret key."""
        if self.seed is not None:
            return Deals(seed=self.seed)
        if self.secret is None:
            raise TournamentRunError("the tournament has neither a seed nor a secret deal "
                                     "key (create() draws the key)")
        try:
            key = bytes.fromhex(self.secret)
        except ValueError:
            raise TournamentRunError("the tournament's secret deal key is not hex") from None
        try:
            return Deals(secret=key)
        except ScheduleError as exc:
            raise TournamentRunError(str(exc)) from None

    def dealt(self, entry: ScheduledGame) -> ScheduledGame:
        """``entry`` with its ``mrx_seed`` and ``seat_seed`` (which the schedule table does
        not store): the deal of its game is ``new_game(rules, entry.seed,
        mrx_seed=entry.mrx_seed)``, its bots' seeds derive from ``entry.seat_seed``."""
        deals = self.deals()
        mrx_seed = deal_mrx_seed(deals, Pairing(self.pairing), entry)
        seat_seed = deals.seat_seed(entry.pair_key, entry.mrx)
        if (mrx_seed, seat_seed) == (entry.mrx_seed, entry.seat_seed):
            return entry
        return replace(entry, mrx_seed=mrx_seed, seat_seed=seat_seed)

    def schedule(self) -> list[ScheduledGame]:
        """Every game of the tournament (:func:`~tournament.schedule.make_schedule`), dealt."""
        return make_schedule(self.bots, self.pairs, self.deals(), Format(self.format),
                             self.self_play, Pairing(self.pairing))

    def validate(self) -> None:
        """Check the ruleset and numbers before anything is stored or started."""
        rules = load_ruleset(self.rules)
        if self.detectives is not None:
            rules.with_detectives(self.detectives)
        if self.move_time <= 0 or self.bank_time < 0:
            raise TournamentRunError("--move-time must be > 0 and --bank-time >= 0")
        if not self.connect_timeout > 0:
            raise TournamentRunError(f"--connect-timeout must be > 0 (seconds a bot has to "
                                     f"connect), not {self.connect_timeout:g}")
        if self.max_illegal < 1:
            raise TournamentRunError("--max-illegal must be at least 1")
        try:
            Pairing(self.pairing)
        except ValueError:
            raise TournamentRunError(f"--pairing {self.pairing!r}: expected one of "
                                     f"{', '.join(p.value for p in Pairing)}") from None
        if self.seed is not None or self.secret is not None:  # else create() draws a key
            self.deals()
        make_schedule(self.bots, self.pairs, 0, Format(self.format), self.self_play)
        if self.sprt is not None:
            self._validate_sprt()

    def check_dealable(self, tournament_id: str, pending: Sequence[ScheduledGame]) -> None:
        """Raise :class:`TournamentRunError` when the ``pending`` games cannot be dealt here:
        the tournament was imported from an export made before it was finished, which
        withholds its secret deal key and the seeds of the games still to play."""
        if not pending:
            return
        if (self.seed is None and self.secret is None) or any(
                entry.seed is None for entry in pending):
            raise TournamentRunError(
                f"tournament {tournament_id} cannot deal its {len(pending)} unplayed games "
                f"here: it was imported from an export made before it was finished, which "
                f"withholds its secret deal key and the seeds of the games still to play; "
                f"resume it in the database it was exported from")

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
    """Validate ``spec``, store the tournament and its whole schedule; returns its id.
    Without a public ``seed`` a secret deal key is drawn here (``secrets``) and stored with
    the spec."""
    spec.validate()
    if spec.seed is None and spec.secret is None:
        spec = replace(spec, secret=secrets.token_hex(SECRET_BYTES))
    games = spec.schedule()
    tournament_id = db.create_tournament(spec.to_dict())
    db.schedule(tournament_id, games)
    return tournament_id

