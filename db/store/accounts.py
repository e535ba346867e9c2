"""Accounts: a bot's name (or a person's claimed name, ``human:NAME``) bound to a token, of
which only a salted hash is stored. A new account's name must be a valid name in its normal
form that looks like no other account's (:mod:`protocol.names`: PRECIS, TS #39 skeletons).

A token is :func:`protocol.tokens.new_token` text (32 random bytes) shown once, when the
account is added or rotated. The row keeps ``scrypt$N$r$p$SALT$HASH`` (hashlib's scrypt,
16 random salt bytes per account, base64): :func:`token_matches` checks a token against it
in constant time. One check costs tens of milliseconds of CPU by design; the server runs
them off its event loop (:mod:`host.accounts`).

>>> stored = hash_token("s3cret")
>>> token_matches("s3cret", stored), token_matches("guess", stored)
(True, False)
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.orm import Session

from db.errors import AccountError
from db.models import AccountRow
from db.store.base import Connection, aware
from protocol.names import PERSON_PREFIX, BadName, check_bot_name, enforce_person, look_alike
from protocol.tokens import new_token
from records import AccountInfo

SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
"""scrypt cost parameters of new hashes (16 MiB of memory per check; stored with each
hash, so they can change without invalidating old ones)."""

SOURCES = ("cli", "registration", "play")
"""How an account was made: ``yard accounts add``, a bot's ``hello`` with ``register``, or
a person claiming a name on the Play page (``human:NAME``)."""

TOUCH_EVERY = timedelta(minutes=1)
"""``last_used`` is written at most this often per account (not on every ``hello``)."""


def hash_token(token: str) -> str:
    """The stored form of ``token``: ``scrypt$N$r$p$SALT$HASH`` with a fresh salt."""
    salt = os.urandom(16)
    digest = _scrypt(token, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
    return "$".join(["scrypt", str(SCRYPT_N), str(SCRYPT_R), str(SCRYPT_P),
                     _b64(salt), _b64(digest)])


def token_matches(token: str, stored: str) -> bool:
    """Whether ``token`` is the one ``stored`` (from :func:`hash_token`) was made of,
    compared in constant time; ``False`` for a malformed ``stored``."""
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt":
            return False
        expected = base64.b64decode(digest, validate=True)
        got = _scrypt(token, base64.b64decode(salt, validate=True), int(n), int(r), int(p))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, expected)


def _scrypt(token: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(token.encode("utf-8", "surrogatepass"), salt=salt, n=n, r=r, p=p,
                          maxmem=128 * r * n * p + (1 << 20), dklen=32)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def check_account_name(name: str, source: str = "cli") -> None:
    """Raise :class:`AccountError` unless ``name`` can be the name of a new account made by
    ``source``: a bot's name (:func:`protocol.names.check_bot_name`: a valid name in its
    normal form, not like a person's), or for ``play`` a person's ``human:NAME``."""
    try:
        if source == "play":
            if not name.startswith(PERSON_PREFIX):
                raise AccountError(f"a person's account name starts with {PERSON_PREFIX!r}, "
                                   f"not {name!r:.80}")
            enforce_person(name.removeprefix(PERSON_PREFIX))
        else:
            check_bot_name(name, what="account name")
    except BadName as exc:
        raise AccountError(str(exc)) from None


def to_info(row: AccountRow) -> AccountInfo:
    """A stored account as a plain record."""
    return AccountInfo(row.name, row.source, aware(row.created_at),
                       None if row.last_used is None else aware(row.last_used),
                       None if row.revoked_at is None else aware(row.revoked_at),
                       row.token_hash)


class Accounts(Connection):
    """Adding, listing, rotating and revoking bot accounts; what the server checks."""

    def add_account(self, name: str, source: str = "cli") -> str:
        """Add account ``name``; returns its new token (not stored: show it once).
        :class:`AccountError` when the name is invalid, or it or a name that looks like it
        already has an account (a revoked one included: names are not reused)."""
        if source not in SOURCES:
            raise ValueError(f"account source {source!r} is not one of {SOURCES}")
        like = self.account_like(name)
        if like is not None and like != name:
            raise AccountError(f"account name {name!r:.80} looks like {like!r}, which has "
                               "an account: pick a name that reads differently")
        check_account_name(name, source)
        token = new_token()
        row = AccountRow(name=name, token_hash=hash_token(token), source=source,
                         created_at=datetime.now(UTC))
        with self._errors("add an account"):
            try:
                with Session(self._writer) as session, session.begin():
                    session.add(row)
            except sa.exc.IntegrityError:  # the name is taken (also by a racing add)
                raise AccountError(f"account {name!r} exists (yard accounts rotate {name} "
                                   "gives it a new token)") from None
        return token

    def rotate_account(self, name: str) -> str:
        """Give account ``name`` a new token (returned; the old one stops working) and make
        it active again if it was revoked."""
        token = new_token()
        stored = hash_token(token)
        with self._write("rotate an account's token") as session:
            done = session.execute(sa.update(AccountRow).where(AccountRow.name == name)
                                   .values(token_hash=stored, revoked_at=None))
            if not getattr(done, "rowcount", 0):
                raise AccountError(f"no account {name!r} (yard accounts list shows them)")
        return token

    def revoke_account(self, name: str) -> None:
        """Refuse account ``name``'s token from now on (the name stays taken)."""
        with self._write("revoke an account") as session:
            row = session.get(AccountRow, name)
            if row is None:
                raise AccountError(f"no account {name!r} (yard accounts list shows them)")
            if row.revoked_at is None:
                row.revoked_at = datetime.now(UTC)

    def accounts(self) -> list[AccountInfo]:
        """Every account, by name."""
        with self._read("read accounts") as session:
            rows = session.scalars(sa.select(AccountRow).order_by(AccountRow.name)).all()
            return [to_info(row) for row in rows]

    def account_like(self, name: str) -> str | None:
        """The account named ``name``, else one whose name looks like it
        (:func:`protocol.names.look_alike`), or ``None``."""
        with self._read("read account names") as session:
            names = session.scalars(sa.select(AccountRow.name)).all()
        if name in names:
            return name
        return look_alike(name, names)

    def account(self, name: str) -> AccountInfo | None:
        """Account ``name``, or ``None``."""
        with self._read("read an account") as session:
            row = session.get(AccountRow, name)
            return None if row is None else to_info(row)

    def touch_account(self, name: str, when: datetime | None = None) -> None:
        """Note that ``name``'s token was accepted at ``when`` (default now); written only
        when the stored time is older than :data:`TOUCH_EVERY`."""
        when = when or datetime.now(UTC)
        with self._write("note an account's use") as session:
            session.execute(sa.update(AccountRow).where(
                AccountRow.name == name,
                sa.or_(AccountRow.last_used.is_(None),
                       AccountRow.last_used < when - TOUCH_EVERY)).values(last_used=when))
