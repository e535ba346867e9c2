"""Per-seat views: what Mister X, a detective, or a spectator may see.

A :class:`DetectiveView` has no field for Mister X's position; his travel log shows the
tickets, and stations only on reveal slots. Servers serialise only views, never states.

Views are built from a :class:`~game.State` by :meth:`game.State.view` (or
:func:`view_dict` for the wire form); the state memoises each audience's travel log along
its parent chain with :func:`extend_shown_log`. :meth:`game.State.from_view` goes back.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, fields
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any

from game.belief import after_detective_move, after_shown_entries, initial_belief
from game.moves import TICKET_NAMES, Move, Ticket
from game.outcome import MRX, Outcome, Termination, parse_seat, seat_name
from game.rules import Ruleset, load_ruleset, ruleset_from_dict

if TYPE_CHECKING:
    from game.state import LogEntry, State


@dataclass(frozen=True)
class LogEntryView:
    """A travel-log entry as shown: the ticket, and the station only when revealed."""

    ticket: Ticket
    station: int | None

    @cached_property
    def wire(self) -> dict[str, Any]:
        """The entry as it appears in :meth:`View.to_dict` (built once per entry: entries
        are shared along a game's states; do not modify it)."""
        return {"ticket": _TICKET_NAME_LIST[self.ticket], "station": self.station}


@dataclass(frozen=True)
class View:
    """Public information shared by every view."""

    rules: Ruleset
    seat: int | None
    to_move: int
    detectives: tuple[int, ...]
    tickets: tuple[tuple[int, ...], ...]
    log: tuple[LogEntryView, ...]
    possible: frozenset[int]
    outcome: Outcome | None

    @property
    def move_number(self) -> int:
        """Entries in Mister X's travel log so far."""
        return len(self.log)

    def last_reveal(self) -> tuple[int, int] | None:
        """``(log slot, station)`` of the latest reveal, or ``None``."""
        for slot in range(len(self.log), 0, -1):
            station = self.log[slot - 1].station
            if slot in self.rules.reveal_moves and station is not None:
                return slot, station
        return None

    def rounds_to_reveal(self) -> int:
        """Log entries until the next reveal slot (0 if none is left)."""
        upcoming = [m for m in self.rules.reveal_moves if m > len(self.log)]
        return min(upcoming) - len(self.log) if upcoming else 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the protocol's ``view`` object)."""
        # Built on every turn of every served game: plain loops over precomputed names.
        reveal = self.last_reveal()
        return {
            "seat": None if self.seat is None else seat_name(self.seat),
            "to_move": seat_name(self.to_move),
            "move_number": len(self.log),
            "detectives": list(self.detectives),
            "tickets": _tickets_view(self.rules, self.tickets),
            "log": [e.wire for e in self.log],
            "last_reveal": None if reveal is None else {"move": reveal[0], "station": reveal[1]},
            "possible": sorted(self.possible),
            "outcome": None if self.outcome is None else self.outcome.to_dict(),
        }


@dataclass(frozen=True)
class DetectiveView(View):
    """The detectives' (or a spectator's) view. Mister X's station is not a field."""


@dataclass(frozen=True)
class MrXView(View):
    """Mister X's view: everything, including his own station and full log."""

    mrx: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, with ``mrx`` added."""
        return {**super().to_dict(), "mrx": self.mrx}


class _LazyDetectiveView(DetectiveView):
    """A :class:`DetectiveView` as :meth:`game.State.view` builds it: its seat plus the
    state's :class:`PublicTrail`, every other field read from the trail (``log`` and
    ``possible`` built on first access, so a bot that never reads them costs nothing).
    Equal to, hashed and pickled as the eager view."""

    _trail: PublicTrail

    @property
    def rules(self) -> Ruleset:
        """The ruleset."""
        return self._trail.rules

    @property
    def to_move(self) -> int:
        """The seat to move."""
        return self._trail.to_move

    @property
    def detectives(self) -> tuple[int, ...]:
        """Detectives' stations in seat order."""
        return self._trail.detectives

    @property
    def tickets(self) -> tuple[tuple[int, ...], ...]:
        """Every seat's tickets."""
        return self._trail.tickets

    @property
    def outcome(self) -> Outcome | None:
        """How the game ended, if it has."""
        return self._trail.outcome

    @property
    def log(self) -> tuple[LogEntryView, ...]:
        """Mister X's travel log as detectives see it."""
        return self._trail.shown()[0]

    @property
    def possible(self) -> frozenset[int]:
        """Where Mister X may be."""
        return self._trail.possible()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DetectiveView):
            return NotImplemented
        return _values(self) == _values(other)

    __hash__ = DetectiveView.__hash__

    def __repr__(self) -> str:
        return repr(DetectiveView(*_values(self)))

    def __reduce__(self) -> tuple[Any, ...]:
        return DetectiveView, _values(self)

    def __new__(cls, *args: Any, **kwargs: Any) -> DetectiveView:  # type: ignore[misc]
        """Called with fields (``dataclasses.replace``): the eager view."""
        return DetectiveView(*args, **kwargs)


class _LazyMrXView(MrXView):
    """A :class:`MrXView` as :meth:`game.State.view` builds it: his station, his own
    travel log (which he knows) and the state's :class:`PublicTrail`; ``log`` and
    ``possible`` are built on first access. Equal to, hashed and pickled as the eager
    view."""

    _trail: PublicTrail
    _own_log: tuple[LogEntry, ...]

    @property
    def rules(self) -> Ruleset:
        """The ruleset."""
        return self._trail.rules

    @property
    def to_move(self) -> int:
        """The seat to move."""
        return self._trail.to_move

    @property
    def detectives(self) -> tuple[int, ...]:
        """Detectives' stations in seat order."""
        return self._trail.detectives

    @property
    def tickets(self) -> tuple[tuple[int, ...], ...]:
        """Every seat's tickets."""
        return self._trail.tickets

    @property
    def outcome(self) -> Outcome | None:
        """How the game ended, if it has."""
        return self._trail.outcome

    @cached_property
    def log(self) -> tuple[LogEntryView, ...]:
        """Mister X's own travel log, every station shown."""
        return tuple([_log_entry(ticket, station) for ticket, station in self._own_log])

    @property
    def possible(self) -> frozenset[int]:
        """Where the detectives think he may be."""
        return self._trail.possible()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MrXView):
            return NotImplemented
        return _values(self) == _values(other)

    __hash__ = MrXView.__hash__

    def __repr__(self) -> str:
        return repr(MrXView(*_values(self)))

    def __reduce__(self) -> tuple[Any, ...]:
        return MrXView, _values(self)

    def __new__(cls, *args: Any, **kwargs: Any) -> MrXView:  # type: ignore[misc]
        """Called with fields (``dataclasses.replace``): the eager view."""
        return MrXView(*args, **kwargs)


def _values(view: View) -> tuple[Any, ...]:
    """A view's field values in field order (its dataclass constructor's arguments)."""
    return tuple(getattr(view, f.name) for f in fields(view))


_log_entry = cache(LogEntryView)
"""Shared :class:`LogEntryView` values (few: tickets times stations)."""
_new = object.__new__


def lazy_detective_view(trail: PublicTrail, seat: int | None) -> DetectiveView:
    """The view of detective ``seat`` (``None``: a spectator) at the state whose public
    part is ``trail``: no state, no hidden station, nothing built until read."""
    view = _new(_LazyDetectiveView)
    attrs = view.__dict__
    attrs["_trail"] = trail
    attrs["seat"] = seat
    return view


def lazy_mrx_view(trail: PublicTrail, mrx: int, own_log: tuple[LogEntry, ...]) -> MrXView:
    """Mister X's view at the state whose public part is ``trail``: he stands on ``mrx``
    and ``own_log`` is his true travel log; ``log`` and ``possible`` are built on first
    access."""
    view = _new(_LazyMrXView)
    attrs = view.__dict__
    attrs["_trail"] = trail
    attrs["seat"] = MRX
    attrs["mrx"] = mrx
    attrs["_own_log"] = own_log
    return view


def _tickets_view(rules: Ruleset, tickets: tuple[tuple[int, ...], ...]
                  ) -> dict[str, dict[str, int] | None]:
    """Every seat's tickets by seat name (``None`` where the ruleset counts none)."""
    counted = rules.detective_tickets is not None
    shown = ((rules.mrx_tickets is not None,) + (counted,) * (len(tickets) - 1))
    keys = _SEAT_NAMES if len(tickets) <= len(_SEAT_NAMES) else [
        seat_name(seat) for seat in range(len(tickets))]
    out: dict[str, dict[str, int] | None] = {}
    for key, own, counts in zip(keys, tickets, shown, strict=False):
        if not counts:
            out[key] = None
        elif len(own) == 5:  # one count per Ticket, as every state holds them
            out[key] = {"taxi": own[0], "bus": own[1], "underground": own[2],
                        "secret": own[3], "double": own[4]}
        elif len(own) <= len(_TICKET_NAME_LIST):
            out[key] = dict(zip(_TICKET_NAME_LIST, own, strict=False))
        else:
            out[key] = {TICKET_NAMES[Ticket(i)]: n for i, n in enumerate(own)}
    return out


_TICKET_NAME_LIST = [TICKET_NAMES[t] for t in sorted(Ticket)]
"""Ticket names by ticket number (a view is built on every turn: no enum calls)."""
TICKET_NAME_LIST: tuple[str, ...] = tuple(_TICKET_NAME_LIST)
"""The same, public (read-only)."""
assert _TICKET_NAME_LIST == ["taxi", "bus", "underground", "secret", "double"]
_SEAT_NAMES = [seat_name(seat) for seat in range(32)]
"""Seat names by seat number, for the usual seat counts."""


def _public(state: State) -> dict[str, Any]:
    return {"rules": state.rules, "to_move": state.to_move,
            "detectives": state.detective_stations, "tickets": state.tickets,
            "possible": state.possible_locations(), "outcome": state.outcome}


def detective_view(state: State, seat: int | None = None) -> DetectiveView:
    """The view of detective ``seat`` (or of all detectives / a spectator for ``None``).

    Built from public data only: reveal slots come from the ruleset schedule.
    """
    return DetectiveView(seat=seat, log=state.shown_log(False)[0], **_public(state))


def detective_log(state: State) -> tuple[LogEntryView, ...]:
    """Mister X's travel log as detectives (and spectators) see it: tickets, and stations
    on reveal slots only (memoised along the state's parent chain)."""
    return state.shown_log(False)[0]


ShownLog = tuple[tuple[LogEntryView, ...], tuple[dict[str, Any], ...], tuple[int, int] | None]
"""A travel log as one audience sees it: the entries, their wire dicts
(:attr:`LogEntryView.wire`) and the latest reveal ``(log slot, station)`` or ``None``."""
EMPTY_LOG: ShownLog = ((), (), None)
"""The empty travel log, as every audience sees it."""


def extend_shown_log(shown: ShownLog, log: tuple[LogEntry, ...], reveal_moves: Collection[int],
                     mrx: bool) -> ShownLog:
    """``shown`` (the first entries of ``log`` as one audience sees them) extended to the
    whole of ``log``. ``mrx``: Mister X's own log, every station shown; otherwise stations
    are shown on the ``reveal_moves`` slots only."""
    done = len(shown[0])
    new = log[done:] if mrx else shown_entries(log, done, reveal_moves)
    return _append_shown(shown, new, reveal_moves)


ShownEntry = tuple[Ticket, int | None]
"""A travel-log entry as detectives see it: the ticket, and the station on reveal slots
only (``None`` elsewhere)."""


def shown_entries(log: tuple[LogEntry, ...], done: int, reveal_moves: Collection[int]
                  ) -> tuple[ShownEntry, ...]:
    """The entries of ``log`` after the first ``done`` as detectives see them: Mister X
    surfaces only on the ``reveal_moves`` slots (1-based)."""
    return tuple((ticket, station if slot in reveal_moves else None)
                 for slot, (ticket, station) in enumerate(log[done:], start=done + 1))


def _append_shown(shown: ShownLog, new: tuple[ShownEntry, ...],
                  reveal_moves: Collection[int]) -> ShownLog:
    """``shown`` followed by the entries ``new`` (already as the audience sees them)."""
    entries, wires, reveal = shown
    done = len(entries)
    views = tuple(LogEntryView(ticket, station) for ticket, station in new)
    for slot, entry in enumerate(views, start=done + 1):
        if slot in reveal_moves and entry.station is not None:
            reveal = (slot, entry.station)
    names = _TICKET_NAME_LIST  # as LogEntryView.wire writes them
    return (entries + views, wires + tuple(
        {"ticket": names[e.ticket], "station": e.station} for e in views), reveal)


class PublicTrail:
    """The public part of one state, linked to its parent's: what every seat may know of
    the game so far, and nothing else.

    A node holds the seat to move, the detectives' stations, everyone's tickets, the
    outcome, the travel-log entries the move that led here added as detectives see them
    (Mister X's station on reveal slots only) and, after a detective's move, that move. It
    never holds Mister X's true station or a hidden log station, so a detective's view may
    keep one: the views :meth:`game.State.view` builds read their fields from it, and
    their possible-location set and travel log on first access (:meth:`possible`,
    :meth:`shown`), each memoised here (shared by every seat's view of the state) and built
    from the parent node's.

    >>> from game import new_game
    >>> state = new_game("grid5", seed=1)
    >>> trail = state.apply(state.legal_moves()[0]).public_trail()
    >>> trail.shown()[0][0].station is None and state.mrx_station in trail.possible()
    True
    """

    __slots__ = ("_possible", "_shown", "detectives", "entries", "move", "outcome", "parent",
                 "rules", "tickets", "to_move")

    def __init__(self, rules: Ruleset, parent: PublicTrail | None, to_move: int,
                 detectives: tuple[int, ...], tickets: tuple[tuple[int, ...], ...],
                 outcome: Outcome | None, entries: tuple[ShownEntry, ...],
                 move: Move | None = None, possible: frozenset[int] | None = None) -> None:
        self.rules = rules
        self.parent = parent
        self.to_move = to_move
        self.detectives = detectives
        self.tickets = tickets
        self.outcome = outcome
        self.entries = entries
        self.move = move  # a detective's move (public); None after Mister X's
        self._possible = possible
        self._shown: ShownLog | None = None

    def possible(self) -> frozenset[int]:
        """Where Mister X may be (see :mod:`game.belief`): the root's set (given, or his
        start stations minus the detectives') stepped along every node to this one."""
        possible = self._possible
        if possible is not None:
            return possible
        chain: list[PublicTrail] = []
        node: PublicTrail | None = self
        while node is not None and node._possible is None:
            chain.append(node)
            node = node.parent
        if node is None:
            root = chain.pop()
            possible = root._possible = initial_belief(root.rules, root.detectives)
        else:
            possible = node._possible
            assert possible is not None
        for child in reversed(chain):
            possible = child._possible = child._after(possible)
        return possible

    def _after(self, possible: frozenset[int]) -> frozenset[int]:
        """This node's set given its parent's: the public effect of its move."""
        if self.move is not None:
            outcome = self.outcome
            caught = outcome is not None and outcome.termination is Termination.CAUGHT
            return after_detective_move(possible, self.move, caught)
        return after_shown_entries(self.rules, possible, self.entries, self.detectives)

    def shown(self) -> ShownLog:
        """Mister X's travel log as detectives and spectators see it (shared with the
        parent node when the move added no entry)."""
        shown = self._shown
        if shown is not None:
            return shown
        chain: list[PublicTrail] = []
        node: PublicTrail | None = self
        while node is not None and node._shown is None:
            chain.append(node)
            node = node.parent
        built: ShownLog = EMPTY_LOG if node is None else node.shown()
        reveal_moves = self.rules.reveal_moves
        for child in reversed(chain):
            if child.entries:
                built = _append_shown(built, child.entries, reveal_moves)
            child._shown = built
        return built


def mrx_view(state: State) -> MrXView:
    """Mister X's view."""
    return MrXView(seat=MRX, log=state.shown_log(True)[0], mrx=state.mrx_station,
                   **_public(state))


def view_dict(state: State, seat: int | None) -> dict[str, Any]:
    """``state.view(seat).to_dict()``, built straight from the state without the view
    object (a server sends one on every turn of every game).

    The same construction as :func:`detective_view` and :func:`mrx_view`: for any seat but
    Mister X only public fields and the detectives' travel log are read, so Mister X's
    station is in the dict only for ``seat == MRX``.
    """
    rules = state.rules
    mrx = seat == MRX
    entries, wires, last = state.shown_log(mrx)
    names = _SEAT_NAMES
    to_move = state.to_move
    outcome = state.outcome
    out: dict[str, Any] = {
        "seat": None if seat is None else names[seat] if seat < len(names)
        else seat_name(seat),
        "to_move": names[to_move] if to_move < len(names) else seat_name(to_move),
        "move_number": len(entries),
        "detectives": list(state.positions[1:]),
        "tickets": _tickets_view(rules, state.tickets),
        "log": list(wires),
        "last_reveal": None if last is None else {"move": last[0], "station": last[1]},
        "possible": sorted(state.possible_locations()),
        "outcome": None if outcome is None else outcome.to_dict(),
    }
    if mrx:
        out["mrx"] = state.positions[0]
    return out


def view_from_dict(data: dict[str, Any], rules: Ruleset) -> MrXView | DetectiveView:
    """Rebuild a view from :meth:`View.to_dict` output (used by network clients)."""
    seat = None if data["seat"] is None else parse_seat(data["seat"])
    tickets = tuple(_tickets_tuple(data["tickets"][seat_name(i)])
                    for i in range(len(data["detectives"]) + 1))
    log = tuple(LogEntryView(Ticket[e["ticket"].upper()], e["station"]) for e in data["log"])
    outcome = Outcome.from_dict(data["outcome"]) if data.get("outcome") else None
    common: dict[str, Any] = {
        "rules": rules, "seat": seat, "to_move": parse_seat(data["to_move"]),
        "detectives": tuple(data["detectives"]), "tickets": tickets, "log": log,
        "possible": frozenset(data["possible"]), "outcome": outcome}
    if "mrx" in data:
        return MrXView(mrx=int(data["mrx"]), **common)
    return DetectiveView(**common)


def _tickets_tuple(raw: dict[str, int] | None) -> tuple[int, ...]:
    if raw is None:
        return (0, 0, 0, 0, 0)
    return tuple(raw.get(TICKET_NAMES[t], 0) for t in Ticket)


def rules_from_definition(definition: dict[str, Any] | str) -> Ruleset:
    """A ruleset from its name or from :meth:`Ruleset.definition` (sent in ``game_start``)."""
    if isinstance(definition, str):
        return load_ruleset(definition)
    return ruleset_from_dict(dict(definition), "game_start.ruleset")
