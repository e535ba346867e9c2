"""Who may connect: the admin token and the file that keeps it, and which web pages (by
their ``Origin``) may open a websocket.

**Admin token.** Admin connections (starting matches) always need the admin token. ``yard
serve`` takes it from ``--admin-token`` (or ``$YARD_ADMIN_TOKEN``), the ``--token-file``'s
``admin_token``, or else a token file (``--admin-token-file``, default
:func:`default_admin_token_file`) that it creates with a fresh token, readable only by its
user, when it does not exist. Admin clients on the same machine (``yard match --server``,
``yard tournament run --server``) read that file (:func:`client_admin_token`).

**Origins.** A browser sends the page's origin with every websocket handshake; other
clients send none. A connection from a page whose origin is neither the server's own (the
scheme-less host and port of the request's ``Host`` header) nor listed with
``--allow-origin`` may not say ``hello`` in any role (:func:`origin_allowed`), so no web
page elsewhere can drive a server on the user's machine.

>>> origin_allowed("http://127.0.0.1:8765", "127.0.0.1:8765", (), loopback=True)
True
>>> origin_allowed("https://evil.example", "127.0.0.1:8765", (), loopback=True)
False
>>> origin_allowed("https://evil.example", "127.0.0.1:8765", ("https://evil.example",),
...                loopback=True)
True
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

from game.errors import YardError
from protocol.tokens import TokenFileError, new_token, read_token_file, write_token_file

ADMIN_TOKEN_ENV = "YARD_ADMIN_TOKEN"
"""Environment variable holding the admin token (``yard serve``, ``yard match``, ``yard
tournament``): how a runner hands the token it made to the server it starts, without
putting it on a command line that other users can list."""

DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}


class AdminTokenError(YardError):
    """No admin token could be found for a server, or its file is unusable."""


def state_dir() -> Path:
    """Where yard keeps per-user state: ``$XDG_STATE_HOME/yard``, else
    ``~/.local/state/yard``."""
    base = os.environ.get("XDG_STATE_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "yard"


def default_admin_token_file() -> Path:
    """The admin token file ``yard serve`` creates, and admin clients read, by default."""
    return state_dir() / "admin-token"


def server_admin_token(path: Path) -> tuple[str, bool]:
    """The admin token in ``path``, and whether it was just created there (a fresh one,
    mode 0600, when the file did not exist). :class:`AdminTokenError` when the file
    cannot be written or read, or others may read it."""
    try:
        token = new_token()
        if write_token_file(path, token):
            return token, True
        return read_token_file(path, private=True), False
    except TokenFileError as exc:
        raise AdminTokenError(f"admin token: {exc}") from None


def client_admin_token(url: str, token: str | None = None,
                       token_file: str | Path | None = None) -> str:
    """The admin token to connect to ``url`` with: ``token``, else the one in
    ``token_file``, else (for a server on this machine: a loopback URL) the one in
    :func:`default_admin_token_file`. :class:`AdminTokenError` saying how to give one."""
    if token:
        return token
    try:
        if token_file is not None:
            return read_token_file(Path(token_file))
        default = default_admin_token_file()
        if is_loopback(urlsplit(url).hostname or "") and default.exists():
            return read_token_file(default)
    except TokenFileError as exc:
        raise AdminTokenError(f"admin token: {exc}") from None
    where = ("" if is_loopback(urlsplit(url).hostname or "")
             else " (the default file is only read for servers on this machine)")
    raise AdminTokenError(f"no admin token for {url}: pass --admin-token TOKEN, set "
                          f"${ADMIN_TOKEN_ENV}, or pass --admin-token-file PATH; a `yard "
                          f"serve` on this machine keeps its token in "
                          f"{default_admin_token_file()}{where}")


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (``[::1]`` brackets allowed)."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_origin(text: str) -> str:
    """``text`` as an ``--allow-origin`` value (lowercase, no trailing ``/``); raises
    :class:`ValueError` saying what is wrong. Forms: ``https://host[:port]``,
    ``host[:port]`` (any scheme), ``null`` (pages without an origin, e.g. files)."""
    value = text.strip().lower().rstrip("/")
    if value == "*":
        raise ValueError("'*' would let every web page in; list each origin")
    if value != "null" and _parts(value) is None:
        raise ValueError(f"{text!r} is not an origin such as https://example.org, "
                         "http://localhost:3000 or example.org:8080")
    return value


def origin_allowed(origin: str, host: str | None, allowed: Iterable[str], *,
                   loopback: bool) -> bool:
    """Whether a websocket handshake with header ``Origin: origin`` may say ``hello``: the
    origin is the server's own (same host and port as the ``Host`` header ``host``, the
    scheme's default port when none is written) or matches an ``allowed`` entry (from
    :func:`check_origin`). ``loopback``: the server listens on loopback only; then its own
    origin must also name a loopback host, so a page whose name was re-pointed at
    127.0.0.1 (DNS rebinding) is not taken for the server's own."""
    value = origin.strip().lower().rstrip("/")
    parts = _parts(value)
    for entry in allowed:
        if entry == value:
            return True
        wanted = _parts(entry)
        if parts is not None and wanted is not None and _same(parts, wanted):
            return True
    if parts is None or host is None:
        return False
    own = _parts(host.strip().lower())
    if own is None or (loopback and not is_loopback(own[1])):
        return False
    return _same(parts, (None, own[1], own[2]))


def _parts(text: str) -> tuple[str | None, str, int | None] | None:
    """``(scheme, host, port)`` of ``scheme://host[:port]`` or ``host[:port]``; the port
    ``None`` when not written; ``None`` for anything else (paths, user names)."""
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "", text
    if not rest or any(c in rest for c in "/?#@\\ ") or (sep and not scheme.isalpha()):
        return None
    try:
        split = urlsplit("//" + rest)
        hostname, port = split.hostname, split.port
    except ValueError:
        return None
    if not hostname:
        return None
    return scheme or None, hostname, port


def _same(origin: tuple[str | None, str, int | None],
          other: tuple[str | None, str, int | None]) -> bool:
    """Same host and port (an unwritten port is the origin scheme's default); same scheme
    when ``other`` names one."""
    scheme, host, port = origin
    if other[0] is not None and other[0] != scheme:
        return False
    default = DEFAULT_PORTS.get(scheme or "")
    return host == other[1] and (port or default) == (other[2] or default)
