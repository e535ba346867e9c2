"""Who may come in: the checks a ``hello`` passes before the core opens a session.

:class:`Admission` holds what the core asks of a ``hello`` that is not about sessions:
whether its labels and name are acceptable (:mod:`protocol.names`: a valid name in its
normal form that does not look like one taken), whether it may register a new account or
claim a person's name (within :class:`server.registration.Registrations`), and how a
failed account check is refused. Sans-I/O like the core: it returns refusals as outputs.

>>> from protocol import Hello, Role
>>> check_labels(Hello(1, "", role=Role.BOT))
'hello.name must not be empty'
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable, Iterator

from protocol import ErrorCode, Hello, Role
from protocol.names import PERSON_PREFIX, BadName, check_bot_name, enforce_person, look_alike
from server.config import ServerConfig
from server.ladder import Ladder
from server.outputs import AccountStatus, AccountVerdict, Output, refuse_hello
from server.registration import Registrations
from server.session import Connection, Session, session_name

log = logging.getLogger(__name__)

LABEL_LIMIT = 64
"""Most characters in a ``hello`` name, version or instance."""


class Admission:
    """The checks of a ``hello`` on a server with ``config`` (its fixed tokens, accounts,
    registration limits and reserved names); ``reserved`` names no bot may look like
    besides the configured ones (the ladder's checker)."""

    def __init__(self, config: ServerConfig, reserved: Iterable[str] = ()) -> None:
        """Admission for a server with ``config``; ``reserved``: more names no bot may
        look like."""
        self.config = config
        self.reserved = tuple(reserved)
        #: New accounts per address, in all, and being made now.
        self.registrations = Registrations(
            config.registrations_per_address, config.registrations_total,
            config.registration_window_s, config.registration_queue)

    def name_refused(self, conn: Connection, hello: Hello, sessions: Iterable[Session],
                     ladder: Ladder | None) -> list[Output] | None:
        """The refusal of a bot's or person's name that is not a valid name in its normal
        form, starts like a person's, or looks like a name that is taken
        (:mod:`protocol.names`), or ``None``. A bot's name may not look like another bot's
        that is connected (``sessions``), has a fixed token, is a house bot or is rated on
        the ``ladder``; a person's not like another person's who is connected. Names of
        accounts are checked against the stored ones when the account is made (by the
        account check, :class:`server.outputs.Authenticate`, the form first): an account
        made before these rules, or a fixed token's name, keeps its name."""
        try:
            if hello.role is Role.BOT:
                # The operator's names (fixed tokens, accounts) were admitted when made.
                vouched = self.config.accounts or hello.name in self.config.bot_tokens
                check_bot_name(hello.name, self._bot_names(sessions, ladder),
                               form=not vouched)
            elif hello.role is Role.HUMAN:
                name = session_name(hello)
                like = look_alike(name, (s.name for s in sessions if s.role is Role.HUMAN))
                if like is not None:
                    raise BadName(ErrorCode.NAME_TAKEN,
                                  f"name {hello.name!r:.80} looks like {like!r}, who is "
                                  "playing here now: pick a name that reads differently",
                                  like)
                enforce_person(hello.name)
        except BadName as exc:
            return refuse_hello(conn.id, exc.code, str(exc))
        return None

    def _bot_names(self, sessions: Iterable[Session], ladder: Ladder | None
                   ) -> Iterator[str]:
        """The names a new bot's may not look like: connected bots (and those in their
        grace period), fixed tokens, house bots, the ladder's rated bots, the checker."""
        yield from self.config.reserved_names
        yield from self.config.bot_tokens
        yield from self.reserved
        for session in sessions:
            if session.role is Role.BOT:
                yield session.name
        if ladder is not None:
            yield from ladder.entrants

    def registration_refused(self, conn: Connection, hello: Hello, now: float
                             ) -> list[Output] | None:
        """The refusal of a ``hello`` with ``register``, or ``None`` if it may register
        (whether the name is free is for the account check): a bot's on a server with open
        registration, a person's claim on one with games for people (the ladder), within
        the registration limits (:class:`server.registration.Registrations`)."""
        if hello.role is not Role.HUMAN and not (self.config.accounts
                                                 and self.config.open_registration):
            return refuse_hello(conn.id, ErrorCode.FORBIDDEN,
                                "this server does not register bots (its operator adds "
                                "accounts: yard accounts add NAME, or starts it with "
                                "yard serve --accounts --open-registration)")
        if hello.role not in (Role.BOT, Role.HUMAN) or hello.resume is not None:
            return refuse_hello(conn.id, ErrorCode.BAD_VALUE,
                                "hello.register is for a bot's or a person's first "
                                "connection (role bot or human, no resume)")
        if hello.name in self.config.bot_tokens:
            return refuse_hello(conn.id, ErrorCode.NAME_TAKEN,
                                f"bot name {hello.name!r:.40} is taken")
        reason = self.registrations.refusal(conn.address, now)
        if reason is not None:
            log.warning("registration of %r refused: %s", hello.name[:40], reason)
            return refuse_hello(conn.id, ErrorCode.REGISTRATION_LIMIT, reason)
        return None

    def refusal(self, conn: int, hello: Hello, verdict: AccountVerdict) -> list[Output]:
        """The refusal of ``hello`` on connection ``conn`` whose account check failed
        (``verdict``: anything but ``OK`` and ``REGISTERED``)."""
        if verdict.status is AccountStatus.INVALID:
            return refuse_hello(conn, ErrorCode.BAD_VALUE, verdict.reason or "bad name")
        if hello.role is Role.HUMAN:
            return _refuse_claim(conn, hello, verdict)
        return self._refuse_bot(conn, hello, verdict)

    def _refuse_bot(self, conn: int, hello: Hello, verdict: AccountVerdict) -> list[Output]:
        name = f"{hello.name!r:.40}"
        match verdict.status:
            case AccountStatus.UNKNOWN:
                how = (", or register it (hello with \"register\": true)"
                       if self.config.open_registration else "")
                return refuse_hello(conn, ErrorCode.BAD_TOKEN,
                                    f"bot {name} has no account on this server: ask its "
                                    f"operator for one (yard accounts add NAME){how}")
            case AccountStatus.WRONG_TOKEN:
                return refuse_hello(conn, ErrorCode.BAD_TOKEN,
                                    f"bot {name} needs its account's token")
            case AccountStatus.REVOKED:
                return refuse_hello(conn, ErrorCode.BAD_TOKEN,
                                    f"the token of account {name} was revoked")
            case AccountStatus.TAKEN:
                like = ("" if verdict.like in (None, hello.name)
                        else f" (it looks like {verdict.like!r}, which has an account)")
                return refuse_hello(conn, ErrorCode.NAME_TAKEN,
                                    f"bot name {name} is taken{like}: connect with its "
                                    "account's token, or register another name")
        return refuse_hello(conn, ErrorCode.ACCOUNTS_UNAVAILABLE,
                            "the server cannot check accounts now; try again later")


def check_labels(hello: Hello) -> str | None:
    """Why ``hello``'s name, version or instance is refused, or ``None``: the name must be
    1 to 64 printable characters, version and instance at most 64 (stored with games and
    written to logs, so no control characters)."""
    fields = {"name": hello.name, "version": hello.version, "instance": hello.instance}
    for key, value in fields.items():
        if value is None:
            continue
        if key == "name" and not value:
            return "hello.name must not be empty"
        if len(value) > LABEL_LIMIT:
            return f"hello.{key} is longer than {LABEL_LIMIT} characters ({len(value)})"
        if not value.isprintable():
            return f"hello.{key} contains control or unprintable characters"
    return None


def _refuse_claim(conn: int, hello: Hello, verdict: AccountVerdict) -> list[Output]:
    """The refusal of a person's ``hello`` whose claim of its name failed."""
    name = f"{hello.name!r:.40}"
    match verdict.status:
        case AccountStatus.UNKNOWN:
            return refuse_hello(conn, ErrorCode.BAD_TOKEN,
                                f"nobody has claimed the name {name} on this server: claim "
                                "it (hello with \"register\": true) or play as a guest")
        case AccountStatus.WRONG_TOKEN | AccountStatus.REVOKED:
            return refuse_hello(conn, ErrorCode.BAD_TOKEN,
                                f"the name {name} is claimed, and this is not its token (the "
                                "browser that claimed it keeps it): pick another name or "
                                "play as a guest")
        case AccountStatus.TAKEN:
            like = ("" if verdict.like in (None, PERSON_PREFIX + hello.name)
                    else f" (it looks like {verdict.like!r})")
            return refuse_hello(conn, ErrorCode.NAME_TAKEN,
                                f"the name {name} is claimed by someone else{like}: pick "
                                "another name or play as a guest")
    return refuse_hello(conn, ErrorCode.ACCOUNTS_UNAVAILABLE,
                        "the server cannot check claimed names now; try again later or "
                        "play as a guest")


def secret_matches(expected: str | None, given: str | None) -> bool:
    """``given`` equals the secret ``expected``, compared in constant time (no timing leak
    of how much of a token is right); ``False`` when either is missing."""
    if expected is None or given is None:
        return False
    return secrets.compare_digest(expected.encode(), given.encode())
