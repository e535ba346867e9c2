"""The yard wire protocol: typed messages, one JSON codec, error codes and JSON Schemas.

See docs/protocol.md for the conversation; :mod:`protocol.messages` for the types.
"""

from protocol.codec import DEFAULT_MAX_SIZE, decode, encode, encode_bytes, from_json, to_json
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import (
    BOT_ERROR_TEXT,
    MESSAGE_TYPES,
    PROTOCOL_VERSION,
    BoardMsg,
    BotErrorMsg,
    BotErrorReason,
    BotInfo,
    Bots,
    Clock,
    Effort,
    Error,
    GameOver,
    GameStart,
    Hello,
    Leave,
    Leaving,
    ListBots,
    MatchOver,
    MatchResult,
    MatchStarted,
    Message,
    MoveMsg,
    MoveOk,
    OnTimeout,
    Ping,
    Play,
    Policy,
    Pong,
    Queued,
    Rating,
    Resign,
    Role,
    Side,
    Standing,
    StartMatch,
    TimeControl,
    Update,
    Watch,
    Watching,
    Welcome,
    YourTurn,
)

__all__ = [
    "BOT_ERROR_TEXT", "DEFAULT_MAX_SIZE", "MESSAGE_TYPES", "PROTOCOL_VERSION", "BoardMsg",
    "BotErrorMsg", "BotErrorReason", "BotInfo", "Bots", "Clock",
    "Effort", "Error", "ErrorCode", "GameOver", "GameStart", "Hello", "Leave", "Leaving",
    "ListBots", "MatchOver", "MatchResult", "MatchStarted", "Message", "MoveMsg", "MoveOk",
    "OnTimeout", "Ping", "Play", "Policy", "Pong", "ProtocolError", "Queued", "Rating",
    "Resign", "Role", "Side", "Standing", "StartMatch", "TimeControl", "Update", "Watch",
    "Watching", "Welcome", "YourTurn", "decode", "encode", "encode_bytes", "from_json",
    "to_json",
]
