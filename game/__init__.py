"""The Scotland Yard rules engine: a pure library (no I/O, no asyncio, no databases).

>>> from game import new_game, Move
>>> state = new_game("grid5", seed=7)
>>> move = state.legal_moves()[0]
>>> state = state.apply(move)
>>> state.view(1).to_dict()["log"][0]["station"] is None   # move 1 is not a reveal
True
"""

from game.board import Board, Transport, grid_board, load_board
from game.errors import (
    BoardError,
    GameOverError,
    IllegalMoveError,
    MoveParseError,
    PositionError,
    RulesetError,
    YardError,
)
from game.moves import Move, Ticket
from game.outcome import MRX, Outcome, Termination, Winner, parse_seat, seat_name
from game.position import from_text, to_text
from game.rules import BUILTIN, Ruleset, builtin_rulesets, load_ruleset
from game.state import State, new_game, state_from_view
from game.views import DetectiveView, MrXView, View

__all__ = [
    "BUILTIN", "MRX", "Board", "BoardError", "DetectiveView", "GameOverError",
    "IllegalMoveError", "Move", "MoveParseError", "MrXView", "Outcome", "PositionError",
    "Ruleset", "RulesetError", "State", "Termination", "Ticket", "Transport", "View",
    "Winner", "YardError", "builtin_rulesets", "from_text", "grid_board", "load_board",
    "load_ruleset", "new_game", "parse_seat", "seat_name", "state_from_view", "to_text",
]
