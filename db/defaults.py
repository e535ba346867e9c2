"""Defaults the command line shows without loading SQLAlchemy (``yard bot`` and other
commands that never open a database start faster)."""

DEFAULT_DB_URL = "sqlite:///yard.db"
"""The database of every command without ``--db`` or ``$YARD_DB``: ``yard.db`` here."""
