"""Errors of the storage layer. All are :class:`game.YardError`, so the ``yard`` CLI turns
them into one ``error: ...`` line and exit status 2.

::

    YardError
    └── DatabaseError            the database cannot be opened, migrated or written
        ├── GameNotFoundError    no stored game has the given id
        ├── TournamentError      unknown tournament, bad spec, schedule conflict
        │   └── AlreadyPlayedError   a second game for a schedule entry already played
        ├── ReplayError          a stored game cannot be replayed by the engine
        ├── RecordError          a game record (export file line) is malformed or
        │                        inconsistent with its own moves
        └── AccountError         an account name is invalid, unknown or taken
"""

from __future__ import annotations

from game.errors import YardError


class DatabaseError(YardError):
    """The database cannot be opened, migrated, read or written."""


class GameNotFoundError(DatabaseError, KeyError):
    """No stored game has the requested id."""

    def __str__(self) -> str:
        """The message, without the quotes ``KeyError`` adds."""
        return str(self.args[0]) if self.args else "game not found"


class TournamentError(DatabaseError):
    """An unknown tournament, an invalid spec, or a conflicting schedule or result."""


class AlreadyPlayedError(TournamentError):
    """A finished game for a schedule entry that already has a stored game (e.g. a cluster
    worker whose lease expired and whose game another worker played and stored first):
    refused, so each scheduled game is stored exactly once. Retrying cannot succeed."""


class ReplayError(DatabaseError):
    """A stored game's moves do not replay with the engine."""


class RecordError(DatabaseError):
    """A self-contained game record (``yard export --what records``) is malformed, or
    its moves, path or result do not replay with the engine."""


class AccountError(DatabaseError):
    """A bot account cannot be added (invalid or taken name) or is unknown."""
