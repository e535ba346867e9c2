"""Who is connected: a :class:`Connection` per websocket and a :class:`Session` per
authenticated client (it survives reconnects). Plain state, kept by
:class:`server.core.Core` and read by its lobby and ladder games."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from protocol import Hello, Role, Side
from protocol.names import GUEST_PREFIX, PERSON_PREFIX
from server.ratelimit import TokenBucket

SERVER_VERSION = "yard-server/0.1"
"""The server's name and version, as ``welcome`` gives it."""

HUMAN_PREFIX = PERSON_PREFIX
"""People (``hello`` role ``human``) who claimed their name play under ``human:NAME``,
guests under ``guest:NAME`` (:data:`protocol.names.GUEST_PREFIX`): never a bot's name."""


@dataclass
class Session:
    """An authenticated client; survives reconnects via its resume token."""

    id: str
    name: str
    version: str
    role: Role
    admin: bool
    resume_token: str
    conn: int | None
    games: set[str] = field(default_factory=set)
    instance: str | None = None
    #: The account it authenticated with (``None``: no account needed, or a fixed token).
    account: str | None = None
    #: Ladder rulesets it asked to be matched on, and its most games at once there.
    ladder: frozenset[str] = frozenset()
    max_games: int = 1
    #: The sides it plays on the ladder and the Play page (``hello.roles``).
    roles: frozenset[Side] = frozenset(Side)
    #: It asked for no new games (``leave``): it plays the games it has, nothing more.
    leaving: bool = False


@dataclass
class Connection:
    """One websocket connection. ``foreign_origin``: the ``Origin`` of the web page that
    opened it, when the shell does not allow that origin (its ``hello`` is refused);
    ``pending``: its ``hello`` while the shell checks the account token; ``address``: the
    remote address it comes from (``None``: unknown): registrations are counted per address,
    and people's games bounded by it (one at a time; not on loopback, where a reverse
    proxy's clients all come from)."""

    id: int
    bucket: TokenBucket
    session: Session | None = None
    violations: int = 0
    limited_notice: bool = False
    watching: set[str] = field(default_factory=set)
    foreign_origin: str | None = None
    pending: Hello | None = None
    address: str | None = None
    #: Digests of the boards this connection was sent (``board``, once each).
    boards: set[str] = field(default_factory=set)


def session_name(hello: Hello) -> str:
    """The name ``hello``'s session plays under: a bot's own name; a person's as
    ``human:NAME`` when it claims the name or proves its claim (``register``, ``token``),
    else as the guest ``guest:NAME``."""
    if hello.role is not Role.HUMAN:
        return hello.name
    claimed = hello.register or hello.token is not None
    return (PERSON_PREFIX if claimed else GUEST_PREFIX) + hello.name


def is_guest(name: str) -> bool:
    """``name`` is a guest's (a person who did not claim a name: not rated)."""
    return name.startswith(GUEST_PREFIX)


def live_bots(sessions: Iterable[Session]) -> list[Session]:
    """The bot sessions of ``sessions`` that have a connection now."""
    return [s for s in sessions if s.role is Role.BOT and s.conn is not None]


def open_bots(sessions: Iterable[Session]) -> list[Session]:
    """The bot sessions of ``sessions`` that have a connection now and take new games
    (not leaving)."""
    return [s for s in sessions if s.role is Role.BOT and s.conn is not None
            and not s.leaving]
