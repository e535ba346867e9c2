"""Protocol error codes and the exception that carries them.

Every error the server sends is an ``error`` message whose ``code`` is one of
:class:`ErrorCode`. The codec raises :class:`ProtocolError` for bad input::

    YardError
    └── ProtocolError       a frame is not a valid message (code says why)
"""

from __future__ import annotations

from enum import Enum

from game.errors import YardError


class ErrorCode(Enum):
    """Machine-readable reasons carried by ``error`` messages."""

    BAD_JSON = "bad_json"
    TOO_LARGE = "too_large"
    UNKNOWN_TYPE = "unknown_type"
    MISSING_FIELD = "missing_field"
    EXTRA_FIELD = "extra_field"
    WRONG_TYPE = "wrong_type"
    BAD_VALUE = "bad_value"
    UNSUPPORTED_VERSION = "unsupported_version"
    NOT_AUTHENTICATED = "not_authenticated"
    ALREADY_AUTHENTICATED = "already_authenticated"
    BAD_TOKEN = "bad_token"
    BAD_RESUME_TOKEN = "bad_resume_token"
    FORBIDDEN = "forbidden"
    UNKNOWN_GAME = "unknown_game"
    NOT_YOUR_SEAT = "not_your_seat"
    NOT_YOUR_TURN = "not_your_turn"
    STALE_TURN = "stale_turn"
    BAD_MOVE = "bad_move"
    ILLEGAL_MOVE = "illegal_move"
    GAME_OVER = "game_over"
    BOT_NOT_CONNECTED = "bot_not_connected"
    BAD_MATCH = "bad_match"
    RATE_LIMITED = "rate_limited"
    SHUTTING_DOWN = "shutting_down"
    STORE_FAILED = "store_failed"
    FORBIDDEN_ORIGIN = "forbidden_origin"
    NAME_TAKEN = "name_taken"
    ACCOUNT_LIMIT = "account_limit"
    ACCOUNTS_UNAVAILABLE = "accounts_unavailable"
    LADDER_PAUSED = "ladder_paused"
    BOT_BUSY = "bot_busy"
    LADDER_CHECK_FAILED = "ladder_check_failed"
    REGISTRATION_LIMIT = "registration_limit"


class ProtocolError(YardError):
    """A frame or message is invalid; ``code`` says how, the message says where."""

    def __init__(self, code: ErrorCode, message: str, ref: str | None = None) -> None:
        """An error with wire ``code`` and ``message`` (``ref``: what it was about)."""
        super().__init__(message)
        self.code = code
        #: What the refused message was about (its ``game``, else its type), when known.
        self.ref = ref
