"""Account checks for ``yard serve --accounts`` (and people's claimed names), off the event
loop.

The core asks (:class:`server.outputs.Authenticate`) and the shell runs
:meth:`AccountChecker.verify`: the account is read from the database and the token checked
against its scrypt hash on a small thread pool of its own, so neither the database nor the
hashing (tens of milliseconds of CPU) ever blocks the loop, and a flood of bad tokens
cannot take the threads that store finished games. New accounts (registrations, claims:
a hash and a write each) are made on one thread of their own, so logins never wait behind
them; the core bounds how many wait there (:mod:`server.registration`). A new name is
refused when it is, or looks like, an account's name (:mod:`protocol.names`). A token
that passed once is remembered
(its SHA-256, compared in constant time, for as long as the account's stored hash is the
same), so reconnecting bots cost one database read and no scrypt. The account is read on
every ``hello``, resumes included: a token revoked or rotated with ``yard accounts`` (from
any process) is refused from the next ``hello`` on. Sessions already open keep playing
until they disconnect: a CLI in another process cannot reach the server.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Protocol

from db.errors import AccountError, DatabaseError
from db.store.accounts import TOUCH_EVERY, check_account_name, token_matches
from protocol.names import PERSON_PREFIX
from records import AccountInfo
from server.outputs import AccountStatus, AccountVerdict, Authenticate

log = logging.getLogger(__name__)

CACHE_LIMIT = 10_000
"""Accounts whose last good token is remembered (the memo is emptied when full)."""


class AccountStore(Protocol):
    """What the checker needs of the database (:class:`db.store.Database` has it)."""

    def account(self, name: str) -> AccountInfo | None:
        """Account ``name``, or ``None``."""

    def add_account(self, name: str, source: str = "cli") -> str:
        """Add an account; returns its token."""

    def account_like(self, name: str) -> str | None:
        """The account whose name is ``name`` or looks like it, or ``None``."""

    def touch_account(self, name: str, when: datetime | None = None) -> None:
        """Note that the account's token was accepted."""


class AccountChecker:
    """Checks account tokens (and registers new accounts) for the server shell: the
    :class:`server.app.AccountCheck` of a served match server (``server.accounts``)."""

    def __init__(self, store: AccountStore, workers: int = 2) -> None:
        """Check tokens against ``store`` on ``workers`` threads."""
        self.store = store
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="yard-accounts")
        self._registrations = ThreadPoolExecutor(1, thread_name_prefix="yard-register")
        self._lock = threading.Lock()
        #: name -> (the stored hash it was checked against, SHA-256 of the good token).
        self._good: dict[str, tuple[str, bytes]] = {}

    async def verify(self, request: Authenticate) -> AccountVerdict:
        """:meth:`check` on the checker's threads (registrations on their own)."""
        loop = asyncio.get_running_loop()
        pool = self._registrations if request.register else self._pool
        return await loop.run_in_executor(pool, self.check, request.name, request.token,
                                          request.register)

    def check(self, name: str, token: str | None, register: bool = False) -> AccountVerdict:
        """Blocking: whether ``token`` is account ``name``'s; with ``register``, make the
        account (its token in the verdict) unless the name is taken."""
        try:
            if register:
                return self._register(name)
            account = self.store.account(name)
            if account is None:
                return AccountVerdict(AccountStatus.UNKNOWN)
            if not account.active:
                return AccountVerdict(AccountStatus.REVOKED)
            if token is None or not self._matches(account, token):
                return AccountVerdict(AccountStatus.WRONG_TOKEN)
        except DatabaseError as exc:
            log.error("cannot check account %r: %s", name, exc)
            return AccountVerdict(AccountStatus.UNAVAILABLE)
        now = datetime.now(UTC)
        if account.last_used is None or account.last_used < now - TOUCH_EVERY:
            try:  # a write only now and then; a failed one does not refuse the bot
                self.store.touch_account(name, now)
            except DatabaseError as exc:
                log.warning("cannot note the use of account %r: %s", name, exc)
        return AccountVerdict(AccountStatus.OK)

    def _register(self, name: str) -> AccountVerdict:
        like = self.store.account_like(name)
        if like is not None:
            return AccountVerdict(AccountStatus.TAKEN, like=like)
        source = "play" if name.startswith(PERSON_PREFIX) else "registration"
        try:
            check_account_name(name, source)
        except AccountError as exc:
            return AccountVerdict(AccountStatus.INVALID, reason=str(exc))
        try:
            token = self.store.add_account(name, source)
        except AccountError:  # taken meanwhile (another registration won)
            return AccountVerdict(AccountStatus.TAKEN)
        log.info("account %r registered (%s)", name, source)
        return AccountVerdict(AccountStatus.REGISTERED, token)

    def _matches(self, account: AccountInfo, token: str) -> bool:
        digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        with self._lock:
            known = self._good.get(account.name)
        if known is not None and known[0] == account.token_hash:
            return hmac.compare_digest(known[1], digest)
        if not token_matches(token, account.token_hash):
            return False
        with self._lock:
            if len(self._good) >= CACHE_LIMIT:
                self._good.clear()
            self._good[account.name] = (account.token_hash, digest)
        return True

    def close(self) -> None:
        """Stop the threads (checks still running finish first)."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._registrations.shutdown(wait=True, cancel_futures=True)
