"""Rulesets as data: which board, how many detectives, tickets, reveals, optional rules.

Five rulesets ship as TOML files in ``game/rulesets``; users can load their own with
:func:`load_ruleset` given a path.

>>> rules = load_ruleset("classic")
>>> rules.detectives, sorted(rules.reveal_moves)
(5, [3, 8, 13, 18, 24])
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from game.board import Board, Transport, board_digest, board_from_dict, board_to_dict, load_board
from game.errors import BoardError, RulesetError
from game.moves import TICKET_NAMES, Ticket

BUILTIN = ("classic", "bristol", "dash", "warwick", "grid5")


@dataclass(frozen=True, eq=False)
class Ruleset:
    """Everything that varies between Scotland Yard variants.

    Ticket counts are indexed by :class:`Ticket`. ``None`` means that side moves without
    tickets (its log still records the transport used).
    """

    name: str
    description: str
    source: str
    board: Board
    detectives: int
    min_detectives: int
    max_detectives: int
    detective_tickets: tuple[int, ...] | None
    mrx_tickets: tuple[int, ...] | None
    secret_per_detective: bool
    tickets_to_mrx: bool
    reveal_moves: frozenset[int]
    max_moves: int
    double_moves: bool
    secret_moves: bool
    ferry: bool
    random_starts: bool

    def with_detectives(self, count: int) -> Ruleset:
        """This ruleset played with ``count`` detectives."""
        if not self.min_detectives <= count <= self.max_detectives:
            raise RulesetError(f"ruleset {self.name!r} allows {self.min_detectives}.."
                               f"{self.max_detectives} detectives, not {count}")
        return replace(self, detectives=count)

    def initial_mrx_tickets(self) -> tuple[int, ...]:
        """Mister X's starting tickets for this number of detectives."""
        if self.mrx_tickets is None:
            return (0, 0, 0, 0, 0)
        tickets = list(self.mrx_tickets)
        if self.secret_per_detective:
            tickets[Ticket.SECRET] = self.detectives
        if not self.secret_moves:
            tickets[Ticket.SECRET] = 0
        if not self.double_moves:
            tickets[Ticket.DOUBLE] = 0
        return tuple(tickets)

    def initial_detective_tickets(self) -> tuple[int, ...]:
        """Each detective's starting tickets."""
        return self.detective_tickets or (0, 0, 0, 0, 0)

    def definition(self) -> dict[str, Any]:
        """The ruleset as data, loadable again by :func:`ruleset_from_dict` (sent to clients).

        ``board`` is the board's name when :func:`game.board.load_board` gives the same
        board for it (``london``, ``gridWxH``); otherwise (a custom map file) it is the map
        itself in the JSON map format, so the definition never depends on a file.
        """
        return {
            "name": self.name, "description": self.description, "source": self.source,
            "board": self.board.name if board_by_name(self.board) else board_to_dict(self.board),
            "detectives": self.detectives,
            "min_detectives": self.min_detectives, "max_detectives": self.max_detectives,
            "detective_tickets": _ticket_dict(self.detective_tickets),
            "mrx_tickets": _ticket_dict(self.mrx_tickets),
            "secret_per_detective": self.secret_per_detective,
            "tickets_to_mrx": self.tickets_to_mrx,
            "reveal_moves": sorted(self.reveal_moves), "max_moves": self.max_moves,
            "double_moves": self.double_moves, "secret_moves": self.secret_moves,
            "ferry": self.ferry, "random_starts": self.random_starts,
        }

    def summary(self) -> dict[str, Any]:
        """A JSON-ready description for people (used by ``yard rules --json``)."""
        return {**self.definition(), "board": self.board.name,
                "stations": self.board.n_stations,
                "mrx_tickets": _ticket_dict(self.initial_mrx_tickets()
                                            if self.mrx_tickets is not None else None)}


def board_by_name(board: Board) -> bool:
    """True if :func:`load_board` of ``board.name`` (with or without the ferry) plays the
    same as ``board``, so a definition may name it instead of embedding the map."""
    try:
        named = load_board(board.name)
    except BoardError:
        return False
    digest = board_digest(board)
    return digest in (board_digest(named), board_digest(_ferryless(named)))


@cache
def _ferryless(board: Board) -> Board:
    return board.without_transport(Transport.FERRY)


def _ticket_dict(tickets: tuple[int, ...] | None) -> dict[str, int] | None:
    if tickets is None:
        return None
    return {TICKET_NAMES[Ticket(i)]: n for i, n in enumerate(tickets) if n}


_FIELDS = {"name", "description", "source", "board", "detectives", "min_detectives",
           "max_detectives", "detective_tickets", "mrx_tickets", "secret_per_detective",
           "tickets_to_mrx", "reveal_moves", "max_moves", "double_moves", "secret_moves",
           "ferry", "random_starts", "extends"}


def ruleset_from_dict(data: dict[str, Any], origin: str = "<dict>") -> Ruleset:
    """Build and validate a ruleset from its TOML/dict form.

    ``extends = "classic"`` starts from a built-in ruleset and overrides the given keys.
    ``board`` is a board name or path for :func:`load_board`, or a map in the JSON map
    format (as :meth:`Ruleset.definition` embeds custom maps).
    """
    unknown = set(data) - _FIELDS
    if unknown:
        raise RulesetError(f"{origin}: unknown keys {sorted(unknown)}")
    if "extends" in data:
        base = str(data["extends"])
        if base not in BUILTIN:
            raise RulesetError(f"{origin}: extends unknown ruleset {base!r}; built-in "
                               f"rulesets: {', '.join(BUILTIN)}")
        data = {**_flat_builtin(base), **{k: v for k, v in data.items() if k != "extends"}}
    try:
        return _build(data, origin)
    except (KeyError, TypeError, ValueError) as exc:
        raise RulesetError(f"{origin}: missing or invalid field: {exc}") from None


def _build(data: dict[str, Any], origin: str) -> Ruleset:
    raw = data["board"]
    try:
        board = (board_from_dict(raw, f"{origin}: board") if isinstance(raw, dict)
                 else load_board(str(raw)))
    except BoardError as exc:
        raise RulesetError(f"{origin}: {exc}") from None
    ferry = bool(data.get("ferry", False))
    if not ferry:
        board = board.without_transport(Transport.FERRY)
    reveals = frozenset(int(x) for x in data["reveal_moves"])
    max_moves = int(data["max_moves"])
    rules = Ruleset(
        name=str(data["name"]), description=str(data.get("description", "")),
        source=str(data.get("source", "")), board=board,
        detectives=int(data["detectives"]),
        min_detectives=int(data.get("min_detectives", data["detectives"])),
        max_detectives=int(data.get("max_detectives", data["detectives"])),
        detective_tickets=_tickets(data.get("detective_tickets"), origin, "detective_tickets"),
        mrx_tickets=_tickets(data.get("mrx_tickets"), origin, "mrx_tickets"),
        secret_per_detective=bool(data.get("secret_per_detective", False)),
        tickets_to_mrx=bool(data.get("tickets_to_mrx", False)),
        reveal_moves=reveals, max_moves=max_moves,
        double_moves=bool(data.get("double_moves", False)),
        secret_moves=bool(data.get("secret_moves", False)), ferry=ferry,
        random_starts=bool(data.get("random_starts", False)),
    )
    _validate(rules, origin)
    return rules


def _tickets(raw: Any, origin: str, key: str) -> tuple[int, ...] | None:
    if raw is None or raw is False:
        return None
    if isinstance(raw, list | tuple):
        raw = {Ticket(i).name.lower(): n for i, n in enumerate(raw)}
    if not isinstance(raw, dict):
        raise RulesetError(f"{origin}: {key} must be a table of ticket counts or absent")
    counts = [0] * len(Ticket)
    for name, value in raw.items():
        try:
            ticket = Ticket[name.upper()]
        except KeyError:
            raise RulesetError(f"{origin}: {key} has unknown ticket {name!r}") from None
        if not isinstance(value, int) or value < 0:
            raise RulesetError(f"{origin}: {key}.{name} must be a non-negative integer")
        counts[ticket] = value
    return tuple(counts)


def _validate(rules: Ruleset, origin: str) -> None:
    board = rules.board
    if rules.max_moves < 1 or any(not 1 <= m <= rules.max_moves for m in rules.reveal_moves):
        raise RulesetError(f"{origin}: reveal moves must lie in 1..max_moves ({rules.max_moves})")
    if not 1 <= rules.min_detectives <= rules.detectives <= rules.max_detectives:
        raise RulesetError(f"{origin}: need 1 <= min_detectives <= detectives <= max_detectives")
    det = rules.detective_tickets
    if det is not None and (det[Ticket.SECRET] or det[Ticket.DOUBLE]):
        raise RulesetError(f"{origin}: detectives cannot hold secret or double tickets")
    if not rules.random_starts:
        if len(board.detective_starts) < rules.max_detectives or not board.mrx_starts:
            raise RulesetError(f"{origin}: board {board.name} has too few start stations")
    elif board.n_stations <= rules.max_detectives:
        raise RulesetError(f"{origin}: board {board.name} is too small")
    if rules.mrx_tickets is None and (rules.double_moves or rules.secret_moves):
        raise RulesetError(f"{origin}: secret and double moves need Mister X to hold tickets")


@cache
def _raw_builtin(name: str) -> dict[str, Any]:
    if name not in BUILTIN:
        raise RulesetError(f"unknown ruleset {name!r}; built-in rulesets: {', '.join(BUILTIN)}")
    text = resources.files("game").joinpath("rulesets", f"{name}.toml").read_text()
    return tomllib.loads(text)


def _flat_builtin(name: str) -> dict[str, Any]:
    """A built-in ruleset's data with its own ``extends`` chain applied."""
    raw = _raw_builtin(name)
    if "extends" not in raw:
        return raw
    return {**_flat_builtin(str(raw["extends"])),
            **{k: v for k, v in raw.items() if k != "extends"}}


@cache
def _load_builtin(name: str) -> Ruleset:
    return ruleset_from_dict(_raw_builtin(name), f"game/rulesets/{name}.toml")


def load_ruleset(spec: str) -> Ruleset:
    """A ruleset by built-in name or by path to a TOML file."""
    if spec in BUILTIN:
        return _load_builtin(spec)
    if spec.endswith(".toml"):
        path = Path(spec)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise RulesetError(f"{path}: cannot read ruleset file: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise RulesetError(f"{path}: not a UTF-8 text file") from None
        except tomllib.TOMLDecodeError as exc:
            raise RulesetError(f"{path}: invalid TOML: {exc}") from None
        board = data.get("board")
        if isinstance(board, str) and board.endswith(".json"):
            # A map file named by a ruleset file is found relative to that file.
            data["board"] = str(path.parent / board)
        return ruleset_from_dict(data, str(path))
    raise RulesetError(f"unknown ruleset {spec!r}; built-in rulesets: {', '.join(BUILTIN)}, "
                       "or give a path to a .toml file")


def builtin_rulesets() -> list[Ruleset]:
    """The five shipped rulesets."""
    return [load_ruleset(name) for name in BUILTIN]
