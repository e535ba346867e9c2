"""Secrets in files: tokens (an admin token, a bot's account token) kept in a file that
only its user may read, written whole or not at all.

>>> import tempfile, pathlib
>>> folder = tempfile.TemporaryDirectory()
>>> path = pathlib.Path(folder.name) / "sub" / "token"
>>> token = new_token()
>>> write_token_file(path, token)
True
>>> read_token_file(path) == token, oct(path.stat().st_mode & 0o777)
(True, '0o600')
>>> write_token_file(path, "other")  # an existing file is kept
False
>>> folder.cleanup()
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from game.errors import YardError

TOKEN_BYTES = 32
"""Random bytes in a token made by :func:`new_token` (43 URL-safe characters)."""


class TokenFileError(YardError):
    """A token file cannot be read or written, is empty, or others may read it."""


def new_token() -> str:
    """A fresh random token (URL-safe text, :data:`TOKEN_BYTES` random bytes)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def read_token_file(path: Path, *, private: bool = False) -> str:
    """The token in ``path`` (surrounding whitespace removed). ``private``: also refuse a
    file that another user owns or that its group or others may read."""
    try:
        with path.open("r", encoding="utf-8") as handle:
            if private:
                info = os.fstat(handle.fileno())
                if info.st_uid != os.geteuid():
                    raise TokenFileError(f"token file {path} belongs to another user "
                                         f"(uid {info.st_uid})")
                if info.st_mode & 0o077:
                    raise TokenFileError(f"token file {path} may be read by other users "
                                         f"(mode {info.st_mode & 0o777:o}): chmod 600 {path}")
            text = handle.read(4096)
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise TokenFileError(f"cannot read token file {path}: {reason}") from None
    token = text.strip()
    if not token or any(c.isspace() for c in token) or not token.isprintable():
        raise TokenFileError(f"token file {path} must hold one token (printable, no spaces)")
    return token


def write_token_file(path: Path, token: str) -> bool:
    """Write ``token`` to ``path`` (mode 0600; missing folders made with mode 0700) unless
    the file exists; whether it was written. The file appears complete or not at all, so
    two processes creating it at once agree on one token."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if path.exists():
            return False
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(token + "\n")
            try:
                os.link(temporary, path)  # fails if another process made it meanwhile
            except FileExistsError:
                return False
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
    except OSError as exc:
        raise TokenFileError(f"cannot write token file {path}: {exc.strerror or exc}"
                             ) from None
    return True
