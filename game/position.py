"""Explicit positions as one line of text, like a chess FEN.

Format (fields separated by spaces, any order)::

    rules=classic turn=d2 mrx=58:4.3.3.2.5 det=13:10.8.4,26:9.8.4 log=taxi:46,bus:58

* ``mrx``/``det``: station, then ``:`` and ticket counts taxi.bus.underground[.secret.double]
  (omitted for a side that needs no tickets). ``det`` lists detectives in seat order.
* ``log``: Mister X's travel log so far, ``ticket:station`` (his true stations), or ``-``.
* ``possible`` (optional): the public possible-location set, ``1.2.3``. Without it the set is
  rebuilt from the log: from the last reveal (or the start stations) along the tickets
  shown, minus the detectives' current stations; a superset of the exact set.

:meth:`State.to_text <game.State.to_text>` writes the form (:func:`to_text`); :func:`from_text`
parses and checks it.

>>> from game import new_game
>>> state = new_game("classic", seed=3)
>>> from_text(to_text(state)).positions == state.positions
True
"""

from __future__ import annotations

from game.belief import initial_belief, step
from game.errors import PositionError, RulesetError
from game.moves import Ticket
from game.outcome import MRX, parse_seat, seat_name
from game.rules import Ruleset, load_ruleset
from game.state import State


def to_text(state: State) -> str:
    """The position of ``state`` in the one-line text form (:meth:`State.to_text`)."""
    return state.to_text()


def from_text(text: str, rules: Ruleset | None = None) -> State:
    """Parse a position; raises :class:`PositionError` naming the bad field (also for a
    value that is not a string)."""
    fields = _fields(text)
    try:
        base = rules or load_ruleset(fields.pop("rules", "classic"))
    except RulesetError as exc:
        raise PositionError(f"position: {exc}") from None
    fields.pop("rules", None)
    mrx_station, mrx_tickets = _parse_piece(fields.pop("mrx", ""), "mrx")
    dets = [_parse_piece(p, f"d{i}") for i, p in
            enumerate(fields.pop("det", "").split(","), start=1) if p]
    try:
        rules_k = base.with_detectives(len(dets))
    except RulesetError as exc:
        raise PositionError(f"position: {exc}") from None
    log = _parse_log(fields.pop("log", "-"))
    turn = _parse_turn(fields.pop("turn", "mrx"), len(dets))
    possible_text = fields.pop("possible", None)
    if fields:
        raise PositionError(f"position: unknown fields {sorted(fields)}")
    positions = (mrx_station, *(s for s, _ in dets))
    tickets = (_side_tickets(rules_k, MRX, mrx_tickets),
               *(_side_tickets(rules_k, i, t) for i, (_, t) in enumerate(dets, start=1)))
    _validate(rules_k, positions, tickets, log)
    possible = (_parse_possible(possible_text, rules_k) if possible_text is not None
                else _rebuilt_belief(rules_k, positions, log))
    if mrx_station not in possible:
        raise PositionError(f"position: possible set does not contain Mister X's station "
                            f"{mrx_station}")
    # Rule endings apply: a stuck detective is skipped, a decided game is over.
    return State.from_position(rules_k, positions, tickets, log, turn, possible)


def _fields(text: object) -> dict[str, str]:
    if not isinstance(text, str) or len(text) > 10_000:
        raise PositionError("position must be a string of at most 10000 characters")
    out: dict[str, str] = {}
    for token in text.split():
        key, sep, value = token.partition("=")
        if not sep or key in out:
            raise PositionError(f"position: bad or repeated field {token!r}")
        out[key] = value
    return out


def _parse_piece(text: str, who: str) -> tuple[int, tuple[int, ...] | None]:
    station_text, sep, ticket_text = text.partition(":")
    try:
        station = int(station_text)
        tickets = tuple(int(x) for x in ticket_text.split(".")) if sep else None
    except ValueError:
        raise PositionError(f"position: {who}={text!r} is not 'station[:taxi.bus.underground"
                            "[.secret.double]]'") from None
    if tickets is not None and (len(tickets) not in (3, 5) or min(tickets) < 0):
        raise PositionError(f"position: {who} needs 3 or 5 non-negative ticket counts, "
                            f"got {ticket_text!r}")
    if tickets is not None and len(tickets) == 3:
        tickets = (*tickets, 0, 0)
    return station, tickets


def _side_tickets(rules: Ruleset, seat: int, tickets: tuple[int, ...] | None) -> tuple[int, ...]:
    uses = rules.mrx_tickets if seat == MRX else rules.detective_tickets
    if uses is None:
        if tickets is not None:
            raise PositionError(f"position: {seat_name(seat)} holds tickets but ruleset "
                                f"{rules.name} has none for that side")
        return (0, 0, 0, 0, 0)
    if tickets is None:
        raise PositionError(f"position: {seat_name(seat)} needs ticket counts in ruleset "
                            f"{rules.name}")
    if seat != MRX and (tickets[Ticket.SECRET] or tickets[Ticket.DOUBLE]):
        raise PositionError(f"position: detective {seat_name(seat)} cannot hold secret or "
                            "double tickets")
    return tickets


def _parse_log(text: str) -> tuple[tuple[Ticket, int], ...]:
    if text == "-":
        return ()
    entries = []
    for item in text.split(","):
        name, _, station = item.partition(":")
        try:
            ticket = Ticket[name.upper()]
            entries.append((ticket, int(station)))
        except (KeyError, ValueError):
            raise PositionError(f"position: log entry {item!r} is not 'ticket:station'") \
                from None
        if ticket is Ticket.DOUBLE:
            raise PositionError("position: the log holds the legs' tickets, not 'double'")
    return tuple(entries)


def _parse_turn(text: str, detectives: int) -> int:
    try:
        seat = parse_seat(text)
    except ValueError as exc:
        raise PositionError(f"position: turn: {exc}") from None
    if seat > detectives:
        raise PositionError(f"position: turn={text} but only {detectives} detectives")
    return seat


def _validate(rules: Ruleset, positions: tuple[int, ...], tickets: tuple[tuple[int, ...], ...],
              log: tuple[tuple[Ticket, int], ...]) -> None:
    n = rules.board.n_stations
    for seat, station in enumerate(positions):
        if not 1 <= station <= n:
            raise PositionError(f"position: {seat_name(seat)} on unknown station {station} "
                                f"(board {rules.board.name} has 1..{n})")
    if len(set(positions[1:])) != len(positions) - 1:  # Mister X on one of them: caught
        pieces = ", ".join(f"{seat_name(i)}={s}" for i, s in enumerate(positions) if i)
        raise PositionError(f"position: two detectives on one station ({pieces})")
    if len(log) > rules.max_moves:
        raise PositionError(f"position: log has {len(log)} entries, more than "
                            f"max_moves={rules.max_moves}")
    for _ticket, station in log:
        if not 1 <= station <= n:
            raise PositionError(f"position: log names unknown station {station}")
    if log and log[-1][1] != positions[0]:
        raise PositionError(f"position: the log's last station {log[-1][1]} is not Mister X's "
                            f"station {positions[0]}")
    if rules.mrx_tickets is not None and tickets[0][Ticket.DOUBLE] and not rules.double_moves:
        raise PositionError(f"position: ruleset {rules.name} has no double moves")


def _parse_possible(text: str, rules: Ruleset) -> frozenset[int]:
    try:
        stations = frozenset(int(x) for x in text.split(".") if x)
    except ValueError:
        raise PositionError(f"position: possible={text!r} is not 'station.station...'") \
            from None
    if not stations or not all(1 <= s <= rules.board.n_stations for s in stations):
        raise PositionError("position: possible must list known stations")
    return stations


def _rebuilt_belief(rules: Ruleset, positions: tuple[int, ...],
                    log: tuple[tuple[Ticket, int], ...]) -> frozenset[int]:
    possible = initial_belief(rules, ())
    for slot, (ticket, station) in enumerate(log, start=1):
        possible = (frozenset((station,)) if slot in rules.reveal_moves
                    else step(rules, possible, ticket, ()))
    return possible - frozenset(positions[1:])
