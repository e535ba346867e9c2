"""Every message a stored game sent, rebuilt from its record.

The server does not store what it sends. A record of a game it refereed carries a
:class:`~records.MatchLog` (the moves as received, clocks as event times, faults,
disconnections), and :class:`server.match.Match` is deterministic, so a fresh match re-run on
the log sends the same messages again (:func:`regenerate`). Records stored before logs
existed carry their ``transcripts`` themselves (:func:`transcripts` returns either).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from game import Move, YardError, seat_name, to_text
from game.views import rules_from_definition
from protocol import OnTimeout, Policy, TimeControl, to_json
from records import GameRecord, TurnRecord
from server.match import PUBLIC, Match, MatchSpec, Outputs, Player

PUBLIC_KEY = "public"
"""The key of the spectators' messages in :func:`transcripts`."""


class TranscriptError(YardError):
    """A record's log cannot be re-run (malformed, or not what this yard's engine gives)."""


@dataclass
class Regenerated:
    """What a game sent, rebuilt: ``holders[i]`` is every message the connection holding
    ``seats_of[i]`` received from the game (in order; nothing while it was disconnected),
    ``public`` every message to spectators, ``turns`` the refereed turns (without reported
    effort, which the log does not keep) and ``watching`` the spectator snapshots
    (``watching[k]``: what ``watch`` answered after ``k`` moves, i.e. ``k`` updates)."""

    seats_of: list[list[int]]
    holders: list[list[dict[str, Any]]]
    public: list[dict[str, Any]]
    turns: list[TurnRecord]
    watching: list[dict[str, Any]] = field(default_factory=list)

    @property
    def seats(self) -> dict[str, list[dict[str, Any]]]:
        """Per seat name (``mrx``, ``d1``, ...): what that seat's holder received."""
        return {seat_name(seat): self.holders[i]
                for i, seats in enumerate(self.seats_of) for seat in seats}

    def transcripts(self) -> dict[str, list[dict[str, Any]]]:
        """Per seat name plus ``public``."""
        return {**self.seats, PUBLIC_KEY: self.public}


def regenerate(record: GameRecord) -> Regenerated:
    """Re-run the game of ``record`` from its log; :class:`TranscriptError` if it has none or
    the re-run does not end as the record says."""
    game_log = record.log
    if game_log is None:
        raise TranscriptError(f"game {record.game_id} has no match log (not refereed by a "
                              f"server that logs, or imported)")
    try:
        match, sessions = _fresh_match(record)
    except (YardError, KeyError, TypeError, ValueError, IndexError) as exc:
        raise TranscriptError(f"game {record.game_id}: cannot set up the re-run: "
                              f"{exc}") from None
    index = {s: i for i, s in enumerate(sessions)}
    out = Regenerated([list(h) for h in game_log.holders], [[] for _ in sessions], [], [])
    offline: set[str] = set()
    _deliver(match.start(0.0), out, index, offline)
    for number, event in enumerate(game_log.events):
        try:
            if isinstance(event, dict) and event.get("kind") == "attach":
                offline.discard(sessions[event["h"]])
            sent = match.replay(event, sessions)
            if isinstance(event, dict) and event.get("kind") == "detach":
                offline.add(sessions[event["h"]])
        except (YardError, KeyError, TypeError, ValueError, IndexError, AttributeError
                ) as exc:
            raise TranscriptError(f"game {record.game_id}: event {number} ({event!r:.80}) "
                                  f"cannot be re-run: {exc!r}") from None
        _deliver(sent, out, index, offline)
    if match.outcome != record.outcome:
        raise TranscriptError(f"game {record.game_id}: the re-run ends {match.outcome}, the "
                              f"record says {record.outcome}")
    out.turns = list(match.turns)
    state = match.start_state
    out.watching.append(to_json(match.watching(state)))
    for turn in out.turns:
        if turn.move is not None:
            state = state.apply(Move.parse(turn.move))
            out.watching.append(to_json(match.watching(state)))
    return out


def transcripts(record: GameRecord) -> dict[str, list[dict[str, Any]]]:
    """What each seat's holder and the spectators (``public``) were sent: rebuilt from the
    log, or as stored in an older record (``{}`` when a record has neither)."""
    if record.log is None:
        return record.transcripts
    return regenerate(record).transcripts()


def _fresh_match(record: GameRecord) -> tuple[Match, list[str]]:
    game_log = record.log
    assert game_log is not None
    rules = rules_from_definition(record.ruleset_definition or record.ruleset)
    names = {s.seat: s.bot_name for s in record.seats}
    sessions = [f"holder-{i}" for i in range(len(game_log.holders))]
    holder_of = {seat: sessions[i] for i, seats in enumerate(game_log.holders)
                 for seat in seats}
    if sorted(holder_of) != sorted(names) or sum(map(len, game_log.holders)) != len(names):
        raise ValueError(f"holders {game_log.holders} do not split the seats "
                         f"{sorted(names)}")
    if record.seed is None:
        raise ValueError("no seed")
    players = [Player(holder_of[seat], names[seat]) for seat in sorted(names)]
    spec = MatchSpec(record.game_id, rules, players, record.seed,
                     TimeControl(game_log.move_s, game_log.bank_s),
                     Policy(OnTimeout(game_log.on_timeout), game_log.max_illegal),
                     game_log.grace_s, mrx_seed=record.mrx_seed,
                     seat_seed=game_log.seat_seed)
    match = Match(spec)
    if _deal(to_text(match.start_state)) != _deal(record.start_position):
        raise ValueError("the seed deals another start than the record's")
    if match.sessions() != sessions:
        raise ValueError(f"holders {game_log.holders} are not in seat order")
    return match, sessions


def _deal(position: str) -> str:
    """A start position's text without the possible-location set (which ``to_text`` writes
    only once it has been computed)."""
    return position.split(" possible=", 1)[0]


def _deliver(sent: Outputs, out: Regenerated, index: dict[str, int], offline: set[str]
             ) -> None:
    for recipient, message in sent:
        data = to_json(message)
        if recipient is PUBLIC:
            out.public.append(data)
        elif recipient in index and recipient not in offline:
            out.holders[index[recipient]].append(data)
