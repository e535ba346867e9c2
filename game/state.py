"""The game state: an immutable value; applying a move gives the next state.

Turn order (all rulesets): Mister X moves first each round, then each detective in seat
order. A detective with no legal move is skipped. The state always has ``to_move`` set to
a seat that can move, or an :attr:`State.outcome`.

Rule endings, checked wherever they can arise (after every move, at set-up from explicit
positions and in :func:`new_game`):

* a detective moves onto Mister X: detectives win (``caught``);
* a round is due to start (Mister X to move) but the log is full: Mister X wins
  (``survived``);
* a round is due to start but no detective has a legal move (tickets spent, or boxed in by
  other detectives): Mister X wins (``detectives_stuck``) — Mister X's moves never change
  what the detectives can do, so the round could only end the same way;
* Mister X to move with no legal move: detectives win (``cornered``).

>>> from game import new_game
>>> state = new_game("classic", seed=1)
>>> state.to_move, len(state.legal_moves()) > 0
(0, True)
>>> after = state.apply(next(iter(state.legal_moves())))
>>> after.to_move
1

A state memoises what is derived from its public history, each built from its parent's:
its :class:`~game.views.PublicTrail` (which holds the possible-location set of
:mod:`game.belief` and the detectives' travel log) and Mister X's own travel log as he sees
it (:mod:`game.views`). Views read the trail, never the state. :meth:`State.to_text`
writes the one-line position text that :func:`game.position.from_text` reads.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from functools import cache
from typing import cast

from game.board import Board, Transport
from game.errors import GameOverError, IllegalMoveError, RulesetError
from game.moves import TICKET_NAMES, Move, Ticket
from game.outcome import MRX, Outcome, Termination, Winner, seat_name
from game.rules import Ruleset, load_ruleset
from game.views import (
    EMPTY_LOG,
    DetectiveView,
    MrXView,
    PublicTrail,
    ShownEntry,
    ShownLog,
    View,
    extend_shown_log,
    lazy_detective_view,
    lazy_mrx_view,
    shown_entries,
    trail_node,
)

_tuple = tuple.__new__

SECRET = int(Ticket.SECRET)
DOUBLE = int(Ticket.DOUBLE)

LogEntry = tuple[Ticket, int]
"""One entry of Mister X's travel log: the ticket shown and his true station."""


class MoveTables:
    """Per-board tables of prebuilt single moves, so move generation allocates nothing."""

    def __init__(self, board: Board) -> None:
        """Prebuild every single move of ``board``."""
        stations = range(board.n_stations + 1)
        adj = board.adjacency
        self.by_ticket: tuple[tuple[tuple[Move, ...], ...], ...] = tuple(
            tuple(tuple(Move(Ticket(t), d) for d in adj[t][s]) for s in stations)
            for t in (0, 1, 2))
        self.secret: tuple[tuple[Move, ...], ...] = tuple(
            tuple(Move(Ticket.SECRET, d) for d in sorted({d for t in Transport
                                                          for d in adj[t][s]}))
            for s in stations)
        # Ticketless detectives: one move per destination, shown with the cheapest transport.
        self.free_detective: tuple[tuple[Move, ...], ...] = tuple(
            tuple(Move(Ticket(min(t for t in (0, 1, 2) if d in adj[t][s])), d)
                  for d in sorted({d for t in (0, 1, 2) for d in adj[t][s]}))
            for s in stations)
        self._doubles: dict[Move, tuple[tuple[Move, ...], ...]] = {}

    def doubles_after(self, first: Move) -> tuple[tuple[Move, ...], ...]:
        """Double moves starting with ``first``, by second ticket (taxi, bus, underground,
        secret); built on first use, then shared."""
        found = self._doubles.get(first)
        if found is None:
            seconds = (*(self.by_ticket[t][first.to] for t in (0, 1, 2)), self.secret[first.to])
            found = tuple(tuple(Move(first.ticket, first.to, m.ticket, m.to) for m in legs)
                          for legs in seconds)
            self._doubles[first] = found
        return found


@cache
def move_tables(board: Board) -> MoveTables:
    """The (cached) move tables of a board."""
    return MoveTables(board)


class State:
    """A Scotland Yard position plus the public history that led to it.

    Seats: 0 is Mister X, ``1..k`` are the detectives. ``tickets[seat]`` is indexed by
    :class:`Ticket`. ``log`` is Mister X's travel log (ticket, true station) — the truth;
    use :meth:`view` for what a seat may see.
    """

    __slots__ = ("_legal", "_mrx_view_log", "_trail", "last_move", "log", "outcome", "parent",
                 "positions", "rules", "tables", "tickets", "to_move")

    rules: Ruleset
    tables: MoveTables
    positions: tuple[int, ...]
    tickets: tuple[tuple[int, ...], ...]
    log: tuple[LogEntry, ...]
    to_move: int
    outcome: Outcome | None
    parent: State | None
    last_move: Move | None
    _legal: tuple[Move, ...] | None
    _trail: PublicTrail | None  # the public history (memo)
    _mrx_view_log: ShownLog | None  # the travel log as Mister X sees it (memo)

    @classmethod
    def from_position(cls, rules: Ruleset, positions: tuple[int, ...],
                      tickets: tuple[tuple[int, ...], ...], log: tuple[LogEntry, ...],
                      to_move: int, possible: frozenset[int]) -> State:
        """A state set up from explicit values (no history): ``possible`` is the public
        possible-location set. The rule endings apply as after a move: Mister X on a
        detective's station is caught, a detective to move who cannot is skipped, and a game
        already decided is over. The values are taken as
        valid (:func:`game.position.from_text` checks them)."""
        state = cls._make(rules, positions, tickets, log, to_move)
        if positions[0] in positions[1:]:
            state._finish(Outcome(Winner.DETECTIVES, Termination.CAUGHT))
        else:
            state._settle()
        state._trail = state._trail_node(None, possible)
        return state

    @classmethod
    def from_view(cls, view: View, mrx_station: int | None = None) -> State:
        """A state consistent with ``view`` in which Mister X stands on ``mrx_station``
        (his own station for a :class:`MrXView`).

        For a detective view this is a *determinization*: hidden log stations are unknown
        and stored as 0; the possible-location set and the outcome are carried over from the
        view. Search bots use it to simulate from a sample of Mister X's location.
        """
        if isinstance(view, MrXView):
            mrx_station = view.mrx
        if mrx_station is None:
            raise ValueError("a detective view needs an assumed mrx_station to build a state")
        log = tuple((e.ticket, e.station if e.station is not None else 0) for e in view.log)
        state = cls._make(view.rules, (mrx_station, *view.detectives), view.tickets, log,
                          view.to_move)
        state.outcome = view.outcome
        state._trail = state._trail_node(None, view.possible)
        return state

    @classmethod
    def _make(cls, rules: Ruleset, positions: tuple[int, ...],
              tickets: tuple[tuple[int, ...], ...], log: tuple[LogEntry, ...], to_move: int,
              parent: State | None = None, last_move: Move | None = None) -> State:
        # A bare instance filled in here is cheaper than __init__'s call.
        state = object.__new__(cls)
        state.rules = rules
        state.tables = move_tables(rules.board)
        state.positions = positions
        state.tickets = tickets
        state.log = log
        state.to_move = to_move
        state.outcome = None
        state.parent = parent
        state.last_move = last_move
        state._legal = None
        state._trail = None
        state._mrx_view_log = None
        return state

    # ----------------------------------------------------------------- basic queries

    @property
    def board(self) -> Board:
        """The board being played on."""
        return self.rules.board

    @property
    def n_detectives(self) -> int:
        """Number of detectives in play."""
        return len(self.positions) - 1

    @property
    def mrx_station(self) -> int:
        """Mister X's true station (hidden information: never send it to a detective)."""
        return self.positions[0]

    @property
    def detective_stations(self) -> tuple[int, ...]:
        """Stations of detectives ``1..k`` in seat order."""
        return self.positions[1:]

    @property
    def move_number(self) -> int:
        """Number of entries in Mister X's travel log so far."""
        return len(self.log)

    @property
    def is_over(self) -> bool:
        """True once the game has an outcome."""
        return self.outcome is not None

    def is_reveal(self, log_slot: int) -> bool:
        """True if Mister X surfaces after filling travel-log slot ``log_slot`` (1-based)."""
        return log_slot in self.rules.reveal_moves

    def last_reveal(self) -> tuple[int, int] | None:
        """``(log slot, station)`` of the latest reveal so far, or ``None``."""
        for slot in range(len(self.log), 0, -1):
            if slot in self.rules.reveal_moves:
                return slot, self.log[slot - 1][1]
        return None

    # ----------------------------------------------------------------- legal moves

    def legal_moves(self) -> Sequence[Move]:
        """Legal moves of the seat to move (empty once the game is over), as an immutable
        tuple shared by every caller (cached)."""
        if self._legal is None:
            self._legal = () if self.outcome else tuple(_moves_for(self, self.to_move))
        return self._legal

    def is_legal(self, move: Move) -> bool:
        """True if ``move`` is legal for the seat to move."""
        return move in self.legal_moves()

    def moves_for(self, seat: int) -> list[Move]:
        """Moves ``seat`` could make if it were its turn now (ignores whose turn it is);
        a fresh list."""
        return _moves_for(self, seat)

    # ----------------------------------------------------------------- applying moves

    def apply(self, move: Move) -> State:
        """The state after ``move``; raises :class:`IllegalMoveError` if it is not legal (or
        not a :class:`Move` at all)."""
        if self.outcome is not None:
            raise GameOverError(f"move {move} applied after the game ended "
                                f"({self.outcome.termination.value})")
        if not isinstance(move, Move) or move not in self.legal_moves():
            raise IllegalMoveError(self._illegal_reason(move))
        return self.apply_unchecked(move)

    def apply_unchecked(self, move: Move) -> State:
        """Fast path for search: apply a move known to be legal, without validation."""
        seat = self.to_move
        positions = list(self.positions)
        tickets = list(self.tickets)
        rules = self.rules
        log = self.log
        if seat == MRX:
            if move.to2 is None:
                log = (*log, (move.ticket, move.to))
                positions[0] = move.to
            else:
                log = (*log, (move.ticket, move.to), cast(LogEntry, (move.ticket2, move.to2)))
                positions[0] = move.to2
            if rules.mrx_tickets is not None:
                own = list(tickets[0])
                own[move.ticket] -= 1
                if move.ticket2 is not None:
                    own[move.ticket2] -= 1
                    own[DOUBLE] -= 1
                tickets[0] = tuple(own)
        else:
            positions[seat] = move.to
            if rules.detective_tickets is not None:
                own = list(tickets[seat])
                own[move.ticket] -= 1
                tickets[seat] = tuple(own)
                if rules.tickets_to_mrx and rules.mrx_tickets is not None:
                    mrx = list(tickets[0])
                    mrx[move.ticket] += 1
                    tickets[0] = tuple(mrx)
        nxt = State._make(rules, tuple(positions), tuple(tickets), log, seat, self, move)
        if seat != MRX and move.to == positions[0]:
            nxt.outcome = Outcome(Winner.DETECTIVES, Termination.CAUGHT)
            nxt._legal = ()
            return nxt
        nxt._advance(seat + 1)
        return nxt

    def _advance(self, first: int) -> None:
        """Give the turn to the first detective from seat ``first`` on that can move (a
        detective with no legal move is skipped); past the last one the round ends and
        :meth:`_new_round` decides what comes next."""
        for seat in range(first, len(self.positions)):
            moves = _moves_for(self, seat)
            if moves:
                self.to_move = seat
                self._legal = tuple(moves)
                return
        self._new_round()

    def _new_round(self) -> None:
        """Start a round (Mister X to move), or end the game by the rule that prevents it:
        full log (``survived``), no detective able to move (``detectives_stuck``), Mister X
        unable to move (``cornered``), checked in that order."""
        if len(self.log) >= self.rules.max_moves:
            self._finish(Outcome(Winner.MRX, Termination.SURVIVED))
            return
        for seat in range(1, len(self.positions)):
            if _detective_can_move(self, seat):
                break
        else:
            # Mister X's move cannot free a detective (it changes neither their tickets
            # nor the stations that block them), so the round could only end stuck.
            self._finish(Outcome(Winner.MRX, Termination.DETECTIVES_STUCK))
            return
        self.to_move = MRX
        moves = _moves_for(self, MRX)
        if not moves:
            # Judged when his turn comes: tickets just handed to him count.
            self._finish(Outcome(Winner.DETECTIVES, Termination.CORNERED))
            return
        self._legal = tuple(moves)

    def _settle(self) -> None:
        """Apply the rule endings to a freshly set-up state whose ``to_move`` is given: a
        detective to move who cannot is skipped; see :meth:`_new_round` for Mister X."""
        if self.to_move == MRX:
            self._new_round()
            return
        moves = _moves_for(self, self.to_move)
        if moves:
            self._legal = tuple(moves)
        else:
            self._advance(self.to_move + 1)

    def _finish(self, outcome: Outcome) -> None:
        self.outcome = outcome
        self._legal = ()

    def _illegal_reason(self, move: object) -> str:
        where = f"{seat_name(self.to_move)} at station {self.positions[self.to_move]}"
        if not isinstance(move, Move):
            return f"{move!r} is not a Move ({where})"
        if not 1 <= move.to <= self.board.n_stations:
            return f"move {move}: station {move.to} is not on board {self.board.name} ({where})"
        if move.is_double and self.to_move != MRX:
            return f"move {move}: only Mister X may make a double move ({where})"
        if self.to_move != MRX and move.ticket in (Ticket.SECRET, Ticket.DOUBLE):
            return f"move {move}: detectives cannot use {move.ticket.name.lower()} tickets " \
                   f"({where})"
        return f"move {move} is not legal for {where} in move {len(self.log) + 1}"

    # ----------------------------------------------------------------- history & views

    def history(self) -> list[tuple[int, Move]]:
        """``(seat, move)`` pairs from the root state to this one, oldest first."""
        out: list[tuple[int, Move]] = []
        node: State | None = self
        while node is not None and node.parent is not None and node.last_move is not None:
            out.append((node.parent.to_move, node.last_move))
            node = node.parent
        out.reverse()
        return out

    def possible_locations(self) -> frozenset[int]:
        """Where Mister X may be, from public information only (see :mod:`game.belief`);
        memoised along the parent chain (on the :meth:`public_trail`)."""
        trail = self._trail or self.public_trail()
        possible = trail._possible
        return trail.belief() if possible is None else possible

    def public_trail(self) -> PublicTrail:
        """The public history up to this state (memoised: each state's node is built on
        the parent's)."""
        trail = self._trail
        if trail is not None:
            return trail
        chain: list[State] = []
        node: State | None = self
        while node is not None and node._trail is None:
            chain.append(node)
            node = node.parent
        trail = None if node is None else node._trail
        for child in reversed(chain):
            trail = child._trail = child._trail_node(trail)
        assert trail is not None
        return trail

    def _trail_node(self, parent: PublicTrail | None,
                    possible: frozenset[int] | None = None) -> PublicTrail:
        """This state's trail node on its parent state's node (``None`` at a root, which
        may be given its ``possible`` set): the public part of the move that led here."""
        before = self.parent
        if before is None:
            entries = shown_entries(self.log, 0, self.rules.reveal_moves)
            move = None
        elif before.to_move == MRX:
            entries = shown_entries(self.log, len(before.log), self.rules.reveal_moves)
            move = None
        else:  # a detective's move adds no log entry
            entries = ()
            move = self.last_move
        return trail_node(self.rules, parent, self.to_move, self.positions[1:], self.tickets,
                          self.outcome, entries, move, possible)

    def shown_log(self, mrx: bool) -> ShownLog:
        """The travel log as Mister X (``mrx``) or the detectives and spectators see it,
        memoised along the parent chain: each state extends its parent's with the entries
        its own move added, and shares it when the move added none."""
        if not mrx:
            return (self._trail or self.public_trail()).shown()
        shown = self._mrx_view_log
        if shown is not None:
            return shown
        parent = self.parent
        if parent is not None:
            shown = parent._mrx_view_log
            if shown is not None and len(shown[0]) == len(self.log):  # no new entry
                self._mrx_view_log = shown
                return shown
        chain: list[State] = []
        node: State | None = self
        while node is not None and node._mrx_view_log is None:
            chain.append(node)
            node = node.parent
        built: ShownLog = EMPTY_LOG if node is None else node._mrx_view_log or EMPTY_LOG
        reveal_moves = self.rules.reveal_moves
        for child in reversed(chain):
            if len(child.log) != len(built[0]):
                built = extend_shown_log(built, child.log, reveal_moves, True)
            child._mrx_view_log = built
        return built

    def view(self, seat: int | None) -> MrXView | DetectiveView:
        """What ``seat`` may see: Mister X's view for seat 0, otherwise the detectives' view
        (``None`` for a spectator). Its travel log and possible set are built on first
        read, from the :meth:`public_trail` (and for Mister X his own log): the view holds
        no reference to the state."""
        trail = self._trail
        if trail is None:
            parent = self.parent  # usually the parent's node exists: one step, no walk
            before = None if parent is None else parent._trail
            if before is None:
                trail = self.public_trail()
            else:
                # trail_node's node, built without calls (one per turn of every arena
                # game): a detective's move adds no log entry, Mister X's adds his as
                # detectives see it. Nothing hidden goes in.
                assert parent is not None
                if parent.to_move != MRX:
                    entries: tuple[ShownEntry, ...] = ()
                    move = self.last_move
                else:
                    entries = shown_entries(self.log, len(parent.log), self.rules.reveal_moves)
                    move = None
                to_move = self.to_move
                outcome = self.outcome
                trail = _tuple(PublicTrail, (
                    self.rules, None if to_move == MRX or outcome is not None else to_move,
                    to_move, self.positions[1:], self.tickets, outcome, before, entries,
                    move))
            self._trail = trail
        if seat == MRX:
            return lazy_mrx_view(trail, self.positions[0], self.log)
        if seat == trail[1]:  # PublicTrail.seat
            return trail  # the node is the view of the detective to move
        return lazy_detective_view(trail, seat)

    def to_text(self) -> str:
        """The position in the one-line text form of :mod:`game.position` (the possible
        set is written whenever it is not the one rebuilt from the start stations)."""
        rules = self.rules
        mrx_tickets = self.tickets[0] if rules.mrx_tickets is not None else None
        det_tickets = rules.detective_tickets is not None
        parts = [
            f"rules={rules.name}",
            f"turn={seat_name(self.to_move)}",
            f"mrx={_piece(self.positions[0], mrx_tickets)}",
            "det=" + ",".join(_piece(s, self.tickets[i] if det_tickets else None)
                              for i, s in enumerate(self.positions[1:], start=1)),
            "log=" + (",".join(f"{TICKET_NAMES[t]}:{s}" for t, s in self.log) or "-"),
        ]
        if self.parent is not None or (self._trail is not None
                                       and self._trail._possible is not None):
            parts.append("possible=" + ".".join(map(str, sorted(self.possible_locations()))))
        return " ".join(parts)

    def __repr__(self) -> str:
        """``State(...)`` around :meth:`to_text`."""
        return f"State({self.to_text()!r})"


def _piece(station: int, tickets: tuple[int, ...] | None) -> str:
    """A piece in :meth:`State.to_text`: its station, then its ticket counts if counted."""
    if tickets is None:
        return str(station)
    return f"{station}:" + ".".join(map(str, tickets))


def state_from_view(view: View, mrx_station: int | None = None) -> State:
    """:meth:`State.from_view`."""
    return State.from_view(view, mrx_station)


def _moves_for(state: State, seat: int) -> list[Move]:
    rules = state.rules
    tables = state.tables
    positions = state.positions
    here = positions[seat]
    if seat == MRX:
        blocked = positions[1:]
        if rules.mrx_tickets is None:
            return [m for t in (0, 1, 2) for m in tables.by_ticket[t][here]
                    if m.to not in blocked]
        return _mrx_ticket_moves(state, here, blocked)
    others = positions[1:seat] + positions[seat + 1:]
    if rules.detective_tickets is None:
        return [m for m in tables.free_detective[here] if m.to not in others]
    own = state.tickets[seat]
    return [m for t in (0, 1, 2) if own[t] for m in tables.by_ticket[t][here]
            if m.to not in others]


def _detective_can_move(state: State, seat: int) -> bool:
    """``bool(_moves_for(state, seat))`` for a detective, stopping at the first move."""
    here = state.positions[seat]
    others = state.positions[1:seat] + state.positions[seat + 1:]
    tables = state.tables
    if state.rules.detective_tickets is None:
        for m in tables.free_detective[here]:  # noqa: SIM110 (a loop is faster here)
            if m.to not in others:
                return True
        return False
    own = state.tickets[seat]
    for t in (0, 1, 2):
        if own[t]:
            for m in tables.by_ticket[t][here]:
                if m.to not in others:
                    return True
    return False


def _mrx_ticket_moves(state: State, here: int, blocked: tuple[int, ...]) -> list[Move]:
    tables = state.tables
    own = state.tickets[0]
    singles = [m for t in (0, 1, 2) if own[t] for m in tables.by_ticket[t][here]
               if m.to not in blocked]
    if own[SECRET]:
        singles += [m for m in tables.secret[here] if m.to not in blocked]
    rules = state.rules
    if not (own[DOUBLE] and rules.double_moves and len(state.log) + 2 <= rules.max_moves):
        return singles
    moves = list(singles)
    for first in singles:
        left = list(own)
        left[first.ticket] -= 1
        after = tables.doubles_after(first)
        for t in (0, 1, 2, SECRET):
            if left[t]:
                moves += [m for m in after[t] if m.to2 not in blocked]
    return moves


MAX_DEALS = 100
"""How many start positions :func:`new_game` draws at most before giving up on a playable one."""


def new_game(rules: Ruleset | str, seed: int | None = None,
             detectives: int | None = None, mrx_seed: int | None = None) -> State:
    """A fresh game. Start stations are drawn with ``random.Random(seed)``.

    Classic boards deal detectives from the detective start cards and Mister X from his
    own; ``random_starts`` rulesets (grids) draw distinct cells for everyone.

    A game is never decided before it starts: a deal where it would already be over
    (Mister X boxed in with no legal move, or no detective able to move) is thrown away and
    the next one drawn from the same generator, so the result stays a function of the seed
    and a seed whose first deal is playable gives the same start as ever. After
    :data:`MAX_DEALS` unplayable deals (a ruleset where no start is playable, such as
    detectives without tickets) the last one is returned, already over with its rule
    ending.

    With ``mrx_seed`` the deal is split (see :func:`_split_deal`): the detectives' starts come
    from ``seed`` alone and Mister X's from ``mrx_seed``, so two games with one ``seed`` and
    different ``mrx_seed`` share the detectives' starts and draw Mister X's independently.
    Without it every seed deals exactly as it always has.
    """
    if isinstance(rules, str):
        rules = load_ruleset(rules)
    if detectives is not None and detectives != rules.detectives:
        rules = rules.with_detectives(detectives)
    if mrx_seed is not None:
        return _split_deal(rules, seed, mrx_seed)
    rng = random.Random(seed)
    board = rules.board
    k = rules.detectives
    tickets = (rules.initial_mrx_tickets(),) + (rules.initial_detective_tickets(),) * k
    for _ in range(MAX_DEALS):
        if rules.random_starts:
            cells = rng.sample(range(1, board.n_stations + 1), k + 1)
            mrx, dets = cells[0], cells[1:]
        else:
            dets = rng.sample(board.detective_starts, k)
            choices = [s for s in board.mrx_starts if s not in dets]
            if not choices:
                raise RulesetError(f"ruleset {rules.name}: no free start station for Mister X")
            mrx = rng.choice(choices)
        state = State._make(rules, (mrx, *dets), tickets, (), MRX)
        state._new_round()
        if state.outcome is None:
            break
    return state


def _split_deal(rules: Ruleset, seed: int | None, mrx_seed: int) -> State:
    """A fresh game whose detectives are dealt from ``seed`` and Mister X from ``mrx_seed``
    (what :func:`new_game` does when given ``mrx_seed``).

    The detectives are drawn as in an ordinary deal from ``random.Random(seed)`` (on a
    ``random_starts`` grid the cells after the first of the sample). Mister X is then drawn
    with ``random.Random(mrx_seed)`` among the stations allowed to him (his start cards, or
    any cell) that no detective holds, and redrawn among the others while the game would be
    over before it starts (he would be boxed in). When no station is playable for him
    (the detectives are stuck, or block every station) the detectives are redrawn from
    their generator: whether a deal of detectives is kept depends on the detectives alone,
    so the detectives' starts are a function of ``seed`` only, whatever ``mrx_seed`` is.
    After :data:`MAX_DEALS` such detective deals the last one is returned, already over.
    """
    rng = random.Random(seed)
    mrx_rng = random.Random(mrx_seed)
    board = rules.board
    k = rules.detectives
    tickets = (rules.initial_mrx_tickets(),) + (rules.initial_detective_tickets(),) * k
    allowed = range(1, board.n_stations + 1) if rules.random_starts else board.mrx_starts
    state: State | None = None
    for _ in range(MAX_DEALS):
        if rules.random_starts:
            dets = rng.sample(range(1, board.n_stations + 1), k + 1)[1:]
        else:
            dets = rng.sample(board.detective_starts, k)
        choices = [s for s in allowed if s not in dets]
        if not choices:
            raise RulesetError(f"ruleset {rules.name}: no free start station for Mister X")
        while choices:
            mrx = choices.pop(mrx_rng.randrange(len(choices)))
            state = State._make(rules, (mrx, *dets), tickets, (), MRX)
            state._new_round()
            if state.outcome is None:
                return state
    assert state is not None
    return state


def play_out(state: State, choose: random.Random) -> Iterator[State]:
    """Yield successive states of a uniformly random continuation (for tests and demos)."""
    while state.outcome is None:
        state = state.apply_unchecked(choose.choice(state.legal_moves()))
        yield state
