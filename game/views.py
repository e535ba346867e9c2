"""Per-seat views: what Mister X, a detective, or a spectator may see.

A :class:`DetectiveView` has no field for Mister X's position; his travel log shows the
tickets, and stations only on reveal slots. Servers serialise only views, never states.

Views are built from a :class:`~game.State` by :meth:`game.State.view` (or
:func:`view_dict` for the wire form); the state memoises each audience's travel log along
its parent chain with :func:`extend_shown_log`. :meth:`game.State.from_view` goes back.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, fields
from functools import cache, cached_property
from operator import itemgetter
from typing import TYPE_CHECKING, Any, TypeVar

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
            "log": [dict(e.wire) for e in self.log],  # copies: entries are shared by games
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


def _values(view: View) -> tuple[Any, ...]:
    """A view's field values in field order (its dataclass constructor's arguments)."""
    return tuple(getattr(view, f.name) for f in fields(view))


def _view_eq(kind: type[View]) -> Callable[[View, object], bool]:
    """``__eq__`` of a lazy view: equal to any ``kind`` view with the same field values."""
    def eq(self: View, other: object) -> bool:
        if not isinstance(other, kind):
            return NotImplemented  # type: ignore[no-any-return]
        return _values(self) == _values(other)
    return eq


def _view_ne(self: View, other: object) -> bool:
    """``__ne__`` of a lazy view (a tuple's would compare the tuples)."""
    equal = self == other
    return not equal


def _unordered(self: View, other: object) -> bool:
    """``<``, ``>``...: a lazy view is no more ordered than an eager one."""
    return NotImplemented  # type: ignore[no-any-return]  # views are not ordered (the tuple underneath is no value)


def _view_repr(kind: type[View]) -> Callable[[View], str]:
    """``__repr__`` of a lazy view: the eager view's."""
    return lambda self: repr(kind(*_values(self)))


def _view_reduce(kind: type[View]) -> Callable[[View], tuple[Any, ...]]:
    """``__reduce__`` of a lazy view: pickled (and copied) as the eager view."""
    return lambda self: (kind, _values(self))


def _eager_new(kind: type[View]) -> Callable[..., View]:
    """``__new__`` of a lazy view, called with fields (``dataclasses.replace``): the eager
    view."""
    def new(cls: type, *args: Any, **kwargs: Any) -> View:
        return kind(*args, **kwargs)
    return staticmethod(new)


_V = TypeVar("_V")


def _as_eager(kind: type[View]) -> Callable[[type[_V]], type[_V]]:
    """Class decorator for a lazy view class: compared, hashed, printed, pickled, copied and
    replaced (``dataclasses.replace``) as the eager ``kind`` view with its field values, and
    no more ordered than one (a tuple underneath is no value)."""
    def dress(cls: type[_V]) -> type[_V]:
        for name, value in (("__eq__", _view_eq(kind)), ("__ne__", _view_ne),
                            ("__hash__", kind.__hash__), ("__lt__", _unordered),
                            ("__le__", _unordered), ("__gt__", _unordered),
                            ("__ge__", _unordered), ("__repr__", _view_repr(kind)),
                            ("__reduce__", _view_reduce(kind)), ("__new__", _eager_new(kind))):
            setattr(cls, name, value)
        return cls
    return dress


class _OnTrail:
    """The public fields of a lazy view, read from its :class:`PublicTrail` (item 0 of
    the tuple the view is)."""

    if TYPE_CHECKING:
        def __getitem__(self, index: int) -> Any: ...  # the tuple's, first in the MRO

    @property
    def _trail(self) -> PublicTrail:
        trail: PublicTrail = self[0]
        return trail

    @property
    def rules(self) -> Ruleset:
        """The ruleset."""
        return self[0].rules  # type: ignore[no-any-return]

    @property
    def to_move(self) -> int:
        """The seat to move."""
        return self[0].to_move  # type: ignore[no-any-return]

    @property
    def detectives(self) -> tuple[int, ...]:
        """Detectives' stations in seat order."""
        return self[0].detectives  # type: ignore[no-any-return]

    @property
    def tickets(self) -> tuple[tuple[int, ...], ...]:
        """Every seat's tickets."""
        return self[0].tickets  # type: ignore[no-any-return]

    @property
    def outcome(self) -> Outcome | None:
        """How the game ended, if it has."""
        return self[0].outcome  # type: ignore[no-any-return]


@_as_eager(DetectiveView)
class _LazyDetectiveView(tuple[Any, ...], _OnTrail, DetectiveView):
    """A :class:`DetectiveView` as :meth:`game.State.view` builds it for a seat other than
    the one to move (and not a spectator): the pair ``(trail, seat)``, every field but the
    seat read from the state's :class:`PublicTrail`. Equal to, hashed and pickled as the
    eager view. A tuple underneath only because a tuple is Python's cheapest object to
    build (one is built per turn); do not index it."""

    @property
    def seat(self) -> int | None:
        """The detective's seat."""
        return self[1]  # type: ignore[no-any-return]

    @property
    def log(self) -> tuple[LogEntryView, ...]:
        """Mister X's travel log as detectives see it."""
        return self[0].shown()[0]  # type: ignore[no-any-return]

    @property
    def possible(self) -> frozenset[int]:
        """Where Mister X may be."""
        return self[0].belief()  # type: ignore[no-any-return]


@_as_eager(MrXView)
class _LazyMrXView(tuple[Any, ...], _OnTrail, MrXView):
    """A :class:`MrXView` as :meth:`game.State.view` builds it: the triple ``(trail, his
    station, his true travel log)``, the public fields read from the state's
    :class:`PublicTrail`; ``log`` and ``possible`` are built on first access. Equal to,
    hashed and pickled as the eager view (a tuple underneath: see
    :class:`_LazyDetectiveView`)."""

    @property
    def seat(self) -> int:
        """Mister X's seat (0)."""
        return MRX

    @property
    def mrx(self) -> int:
        """His station."""
        return self[1]  # type: ignore[no-any-return]

    @cached_property
    def log(self) -> tuple[LogEntryView, ...]:
        """Mister X's own travel log, every station shown."""
        return tuple([_log_entry(ticket, station) for ticket, station in self[2]])

    @property
    def possible(self) -> frozenset[int]:
        """Where the detectives think he may be."""
        return self[0].belief()  # type: ignore[no-any-return]


_log_entry = cache(LogEntryView)
"""Shared :class:`LogEntryView` values (few: tickets times stations)."""
_tuple = tuple.__new__


def lazy_detective_view(trail: PublicTrail, seat: int | None) -> DetectiveView:
    """The view of detective ``seat`` (``None``: a spectator) at the state whose public
    part is ``trail``: no state, no hidden station, nothing built until read (the trail
    itself when ``seat`` is its :attr:`PublicTrail.seat`)."""
    if seat == trail[1]:
        return trail
    view: DetectiveView = _tuple(_LazyDetectiveView, (trail, seat))
    return view


def lazy_mrx_view(trail: PublicTrail, mrx: int, own_log: tuple[LogEntry, ...]) -> MrXView:
    """Mister X's view at the state whose public part is ``trail``: he stands on ``mrx``
    and ``own_log`` is his true travel log; ``log`` and ``possible`` are built on first
    access."""
    view: MrXView = _tuple(_LazyMrXView, (trail, mrx, own_log))
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
    if len(log) == done + 1:  # one new entry (a single move: the common case)
        ticket, station = log[done]
        return ((ticket, station if done + 1 in reveal_moves else None),)
    return tuple([(ticket, station if slot in reveal_moves else None)
                  for slot, (ticket, station) in enumerate(log[done:], start=done + 1)])


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


@_as_eager(DetectiveView)
class PublicTrail(tuple[Any, ...], DetectiveView):
    """The public part of one state, linked to its parent's: what every seat may know of
    the game so far, and nothing else; itself the :class:`DetectiveView` of the detective
    to move (:attr:`seat`; ``None``, a spectator's view, when Mister X is to move or the
    game is over), so a turn of the arena builds one object.

    A node holds the ruleset, the seat to move, the detectives' stations, everyone's
    tickets, the outcome, its parent node, the travel-log entries the move that led here
    added as detectives see them (Mister X's station on reveal slots only) and, after a
    detective's move, that move. It never holds Mister X's true station or a hidden log
    station, so a detective's view may keep one: the views :meth:`game.State.view` builds
    are nodes, or read their fields from one, and their possible-location set and travel
    log on first access (:meth:`belief`, :meth:`shown`), each memoised here (shared by
    every seat's view of the state) and built from the parent node's.

    Build nodes with :func:`trail_node` (calling the class with view fields, as
    ``dataclasses.replace`` does, gives an eager :class:`DetectiveView`). A tuple
    underneath only because a tuple is Python's cheapest object to build: do not index it.

    >>> from game import new_game
    >>> state = new_game("grid5", seed=1)
    >>> trail = state.apply(state.legal_moves()[0]).public_trail()
    >>> trail.shown()[0][0].station is None and state.mrx_station in trail.possible
    True
    """

    _possible: frozenset[int] | None = None  # memo (instance __dict__ once built)
    _shown: ShownLog | None = None  # memo

    rules = property(itemgetter(0), doc="The ruleset.")
    seat = property(itemgetter(1), doc="The detective to move, or None.")
    to_move = property(itemgetter(2), doc="The seat to move.")
    detectives = property(itemgetter(3),
                          doc="Detectives' stations in seat order.")
    tickets = property(itemgetter(4), doc="Every seat's tickets.")
    outcome = property(itemgetter(5), doc="How the game ended, if it has.")
    parent = property(itemgetter(6), doc="The previous state's node (None at a root).")
    entries = property(itemgetter(7), doc="Log entries the move added, as detectives see "
                       "them (ShownEntry tuples).")
    move = property(itemgetter(8), doc="The detective's move that led here (None after "
                    "Mister X's).")

    @property
    def log(self) -> tuple[LogEntryView, ...]:
        """Mister X's travel log as detectives see it."""
        return self.shown()[0]

    @property
    def possible(self) -> frozenset[int]:
        """Where Mister X may be."""
        return self.belief()

    def belief(self) -> frozenset[int]:
        """Where Mister X may be (see :mod:`game.belief`): the root's set (given, or his
        start stations minus the detectives') stepped along every node to this one."""
        possible = self._possible
        if possible is not None:
            return possible
        chain: list[PublicTrail] = []
        node: PublicTrail | None = self
        while node is not None and node._possible is None:
            chain.append(node)
            node = node[6]
        if node is None:
            root = chain.pop()
            possible = initial_belief(root[0], root[3])
            root.__dict__["_possible"] = possible
        else:
            possible = node._possible
            assert possible is not None
        for child in reversed(chain):
            possible = child._after(possible)
            child.__dict__["_possible"] = possible
        return possible

    def _after(self, possible: frozenset[int]) -> frozenset[int]:
        """This node's set given its parent's: the public effect of its move."""
        move = self[8]
        if move is not None:
            outcome = self[5]
            caught = outcome is not None and outcome.termination is Termination.CAUGHT
            return after_detective_move(possible, move, caught)
        return after_shown_entries(self[0], possible, self[7], self[3])

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
            node = node[6]
        built: ShownLog = EMPTY_LOG if node is None else node.shown()
        reveal_moves = self[0].reveal_moves
        for child in reversed(chain):
            if child[7]:
                built = _append_shown(built, child[7], reveal_moves)
            child.__dict__["_shown"] = built
        return built


def trail_node(rules: Ruleset, parent: PublicTrail | None, to_move: int,
               detectives: tuple[int, ...], tickets: tuple[tuple[int, ...], ...],
               outcome: Outcome | None, entries: tuple[ShownEntry, ...],
               move: Move | None = None, possible: frozenset[int] | None = None
               ) -> PublicTrail:
    """A :class:`PublicTrail` node on ``parent`` (``None``: a root, which may be given its
    ``possible`` set): the public values of its state and what the move that led there
    showed (``entries``: log entries as detectives see them; ``move``: a detective's
    move). :meth:`game.State.view` builds the same tuple inline after a detective's move."""
    seat = None if to_move == MRX or outcome is not None else to_move
    node: PublicTrail = _tuple(PublicTrail, (rules, seat, to_move, detectives, tickets,
                                              outcome, parent, entries, move))
    if possible is not None:
        node.__dict__["_possible"] = possible
    return node


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


def lazy_view_from_dict(data: dict[str, Any], rules: Ruleset) -> MrXView | DetectiveView:
    """:func:`view_from_dict`, built on the first read of a field (a network client gets a
    view on every turn, and a bot may never read it). Equal to, hashed and pickled as the
    eager view; a malformed ``data`` raises (as :func:`view_from_dict`) on that first read.
    ``data`` is kept until then: do not modify it."""
    view: MrXView | DetectiveView = (_new(_WireMrXView) if "mrx" in data
                                     else _new(_WireDetectiveView))
    view.__dict__["_wire"] = (data, rules)
    return view


_new = object.__new__


def _wire_field(view: View, name: str) -> Any:
    """A field of a view from :func:`lazy_view_from_dict`, building the view's fields on
    first use (then plain attributes: no more calls here)."""
    attrs = view.__dict__
    wire = attrs.get("_wire")
    if wire is None or name.startswith("__"):
        raise AttributeError(f"{type(view).__name__!r} object has no attribute {name!r}")
    eager = view_from_dict(*wire)
    del attrs["_wire"]
    attrs.update(vars(eager))
    if name not in attrs:
        raise AttributeError(f"{type(view).__name__!r} object has no attribute {name!r}")
    return attrs[name]


@_as_eager(DetectiveView)
class _WireDetectiveView(DetectiveView):
    """A :class:`DetectiveView` from the wire, its fields built from the dict on first
    read (:func:`lazy_view_from_dict`)."""

    __getattr__ = _wire_field

@_as_eager(MrXView)
class _WireMrXView(MrXView):
    """A :class:`MrXView` from the wire, built on first read (:func:`lazy_view_from_dict`)."""

    __getattr__ = _wire_field

def _tickets_tuple(raw: dict[str, int] | None) -> tuple[int, ...]:
    if raw is None:
        return (0, 0, 0, 0, 0)
    return tuple(raw.get(TICKET_NAMES[t], 0) for t in Ticket)


def rules_from_definition(definition: dict[str, Any] | str) -> Ruleset:
    """A ruleset from its name or from :meth:`Ruleset.definition` (sent in ``game_start``)."""
    if isinstance(definition, str):
        return load_ruleset(definition)
    return ruleset_from_dict(dict(definition), "game_start.ruleset")
