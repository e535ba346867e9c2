"""The exception tree of the rules engine.

Every error the engine raises for bad input is a :class:`YardError`::

    YardError
    ├── BoardError          a map file or grid size is malformed
    ├── RulesetError        a ruleset name is unknown or a ruleset file is invalid
    ├── MoveParseError      a move's text form cannot be parsed
    ├── IllegalMoveError    a well-formed move is not legal in the given state
    ├── PositionError       an explicit position (setup) is invalid
    └── GameOverError       a move was applied to a finished game

Messages say what is wrong and where (file, station, seat, move).
"""

from __future__ import annotations


class YardError(Exception):
    """Base class of every error raised for bad input to the engine."""


class BoardError(YardError):
    """A board (map file or grid specification) is malformed."""


class RulesetError(YardError):
    """A ruleset is unknown or its definition is invalid."""


class MoveParseError(YardError, ValueError):
    """The text form of a move could not be parsed."""


class IllegalMoveError(YardError, ValueError):
    """A move is not legal in the state it was applied to."""


class PositionError(YardError, ValueError):
    """An explicit position (setup) is invalid."""


class GameOverError(YardError):
    """A move was applied to a game that has already ended."""
