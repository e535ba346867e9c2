"""The games list and tournaments as the web API shows them (read-only, synchronous: the
HTTP layer calls them through ``asyncio.to_thread``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from sqlalchemy.engine import Engine

from db.store.queries import WithheldCache, games_page
from game import Termination
from host.web.errors import WebError
from host.web.ratings_cache import json_safe
from records import TournamentInfo

RESULTS = ("mrx", "detectives", "none")
MAX_LIMIT = 500
MAX_OFFSET = 1_000_000_000
"""The largest ``offset`` of the games list (beyond any database's games; bounded so that
no database is handed a number it cannot store)."""


@dataclass(frozen=True)
class GameFilter:
    """Filters of the games list (all optional)."""

    ruleset: str | None = None
    tournament_id: str | None = None
    player: str | None = None
    result: str | None = None
    termination: str | None = None
    limit: int = 50
    offset: int = 0

    def check(self) -> None:
        """Raise :class:`WebError` on a value that cannot match anything sensible."""
        if self.result is not None and self.result not in RESULTS:
            raise WebError(f"result must be one of {', '.join(RESULTS)}")
        if self.termination is not None and self.termination not in {
                t.value for t in Termination}:
            raise WebError(f"unknown termination {self.termination!r:.60}")
        if not 1 <= self.limit <= MAX_LIMIT or not 0 <= self.offset <= MAX_OFFSET:
            raise WebError(f"limit must be 1..{MAX_LIMIT} and offset 0..{MAX_OFFSET}")


def list_games(engine: Engine, flt: GameFilter, withheld: WithheldCache) -> dict[str, Any]:
    """One page of stored games, newest first, with the total count of the selection; the
    games ``withheld`` now are left out of both."""
    flt.check()
    total, games = games_page(engine, ruleset=flt.ruleset, tournament_id=flt.tournament_id,
                              player=flt.player, result=flt.result,
                              termination=flt.termination, limit=flt.limit, offset=flt.offset,
                              withheld=withheld)
    return {"total": total, "limit": flt.limit, "offset": flt.offset, "games": games}


def tournament_dict(info: TournamentInfo, running: bool) -> dict[str, Any]:
    """A tournament as the API shows it, with ``status``: ``running`` (games being played
    on this server now or seconds ago), ``finished`` (every scheduled game stored, or ended
    early by the runner), ``incomplete`` (not running here: stopped, or played elsewhere)
    or ``standing`` (a ladder's or the Play page's group of games, with no schedule).

    Only the public part of the stored spec is shown (:func:`public_spec`), with ``deals``
    (:func:`deals`)."""
    spec = info.spec
    standing = spec.get("format") in STANDING_FORMATS
    status = ("running" if running else "standing" if standing
              else "finished" if info.finished else "incomplete")
    state = getattr(info, "state", None) or {}
    return {"finished_early": bool(state.get("finished")) and info.played < info.scheduled,
            "tournament_id": info.tournament_id, "rules": public_rules(spec.get("rules")),
            "bots": list(spec.get("bots") or []), "format": spec.get("format"),
            "pairs": spec.get("pairs"), "scheduled": info.scheduled, "played": info.played,
            "status": status, "created_at": info.created_at.isoformat(),
            "spec": public_spec(spec),
            "deals": RANDOM_DEALS if standing else deals(spec, info.finished)}


STANDING_FORMATS = ("ladder", "play")
"""Formats of the game groups a ladder server keeps (``ladder-RULES``, ``play-RULES``): no
schedule, never finished (``status`` ``standing`` when no game is being played)."""

RANDOM_DEALS = {"kind": "random", "seed": None, "secret": None}
"""``deals`` of a standing group: every game dealt from the server's random source."""


PUBLIC_SPEC_KEYS = ("rules", "bots", "format", "pairs", "pairing", "move_time", "bank_time",
                    "self_play", "detectives", "on_timeout", "max_illegal", "connect_timeout",
                    "sprt")
"""The keys of a stored tournament spec that the API shows as they are. Never shown: the
``--engine`` definitions beyond name, roles and rulesets (commands, class paths, working
directories), ``bot_options`` (values may be paths), the ``secret`` deal key (see
:func:`deals`) and keys added later until they are listed here."""


def public_rules(rules: Any) -> Any:
    """A spec's ``rules`` as shown: a ruleset name as it is, a ruleset file by its file name
    only (not the directory it was read from on the runner's machine)."""
    if isinstance(rules, str) and ("/" in rules or "\\" in rules or rules.endswith(".toml")):
        return PurePath(rules.replace("\\", "/")).name
    return rules


def public_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """What the API shows of a stored tournament spec (:data:`PUBLIC_SPEC_KEYS`; the seed
    only when it is public: :func:`deals`)."""
    out = {key: spec[key] for key in PUBLIC_SPEC_KEYS if key in spec}
    if "rules" in out:
        out["rules"] = public_rules(out["rules"])
    engines = spec.get("engines")
    if isinstance(engines, dict):
        out["engines"] = {str(name): _public_engine(str(name), engine)
                          for name, engine in engines.items()}
    if _secret_deals(spec) is False:
        out["seed"] = spec.get("seed", 0)
    return out


def _public_engine(name: str, engine: Any) -> dict[str, Any]:
    """An ``--engine`` as shown: its name and what it claims to play."""
    data = engine if isinstance(engine, dict) else {}
    return {"name": name, "roles": _names(data.get("roles")), "rules": _names(data.get("rules"))}


def _names(value: Any) -> list[str] | None:
    return [str(v) for v in value] if isinstance(value, list | tuple) else None


def _secret_deals(spec: dict[str, Any]) -> bool:
    """Whether a stored spec deals from a secret key (no public seed). Specs stored before
    secret deals existed have a public seed (0 when absent)."""
    return spec.get("secret") is not None or ("seed" in spec and spec["seed"] is None)


def deals(spec: dict[str, Any], finished: bool) -> dict[str, Any]:
    """How a tournament's games are dealt, as the API shows it: ``kind`` ``secret`` (no
    ``--seed``: deals come from a secret key, published as ``secret`` once the tournament
    is finished, so that anyone can check the deals afterwards) or ``seeded`` (``--seed
    N``: a research run; anyone who knows ``seed`` can compute every deal, so its games
    are reproducible and predictable)."""
    if _secret_deals(spec):
        secret = spec.get("secret") if finished else None
        return {"kind": "secret", "seed": None,
                "secret": secret if isinstance(secret, str) else None}
    return {"kind": "seeded", "seed": spec.get("seed", 0), "secret": None}


def sprt_state(info: TournamentInfo) -> dict[str, Any] | None:
    """The SPRT state the tournament runner stored with the tournament (``None``: no
    SPRT), in :meth:`ratings.sprt.SprtState.to_dict` form."""
    state = getattr(info, "state", None) or {}
    sprt = state.get("sprt")
    return json_safe(sprt) if isinstance(sprt, dict) else None
