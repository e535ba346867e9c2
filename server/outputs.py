"""What the sans-I/O core asks of its shell (:data:`Output`: send, close, store a finished
game, check an account) and the shell's answer to an account check (:class:`AccountVerdict`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

from protocol import Error, ErrorCode, MatchResult, Message
from records import GameRecord


class Send(NamedTuple):
    """Send ``message`` on connection ``conn`` (a named tuple: several per move)."""

    conn: int
    message: Message


@dataclass(frozen=True)
class Close:
    """Close connection ``conn`` (``code``: the websocket close code, 1000 when omitted
    except for violations, 1008)."""

    conn: int
    reason: str
    code: int | None = None


@dataclass(frozen=True)
class Finished:
    """Store ``record``; then send ``result`` to ``notify`` (the admin that started it)."""

    record: GameRecord
    notify: int | None
    result: MatchResult


@dataclass(frozen=True)
class Authenticate:
    """Check account ``name``'s ``token`` (a bot's, or a person's claim ``human:NAME``;
    with ``register``: make the account) and
    hand the :class:`AccountVerdict` to :meth:`server.core.Core.authenticated` (database
    and hashing work: the shell does it off the event loop). ``token`` is a secret: never
    log it."""

    conn: int
    name: str
    token: str | None = field(repr=False)
    register: bool = False


Output = Send | Close | Finished | Authenticate


class AccountStatus(Enum):
    """What an account check found."""

    OK = "ok"                    # the token is the account's
    REGISTERED = "registered"    # a new account was made (its token is in the verdict)
    UNKNOWN = "unknown"          # no account of that name
    WRONG_TOKEN = "wrong_token"  # the account exists; the token is not its own
    REVOKED = "revoked"          # the account's token was revoked
    TAKEN = "taken"              # registration: the name (or one like it) has an account
    INVALID = "invalid"          # registration: the name is not one an account may have
    UNAVAILABLE = "unavailable"  # the accounts cannot be read now (database error)


@dataclass(frozen=True)
class AccountVerdict:
    """The answer to :class:`Authenticate`: ``token`` only for ``REGISTERED``; ``like``:
    for ``TAKEN``, the account whose name it is or looks like; ``reason``: for
    ``INVALID``, what is wrong with the name."""

    status: AccountStatus
    token: str | None = field(default=None, repr=False)
    like: str | None = None
    reason: str | None = None


def refuse_hello(conn: int, code: ErrorCode, text: str) -> list[Output]:
    """Refuse connection ``conn``'s ``hello``: an ``error`` (``code``, ``text``), then close."""
    return [Send(conn, Error(code, text, "hello")), Close(conn, text)]
