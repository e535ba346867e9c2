"""Game storage: SQLAlchemy 2 models, migrations and the storage API.

* :mod:`db.store` — :class:`db.store.Database`: ``connect(url)``, ``save_game``,
  ``load_game``, ``list_games``, ``results``, tournaments, schedules and leases (one
  module each), and the web pages' queries (:mod:`db.store.queries`).
* :mod:`db.portable` — the game record format (``docs/records.md``): what export writes,
  import reads and ``game_records`` stores; :mod:`db.legacy` reads rows of older yards.
* :mod:`db.migrations` — the ``schema_version`` table and ordered migrations.
* :mod:`db.engine` — engine creation (SQLite WAL, foreign keys, busy timeout).
* :mod:`db.replay` — a stored game move by move (``yard replay``).
* :mod:`db.exchange` — stored games as self-contained records and record files read back.
* :mod:`db.build` — a :class:`records.GameRecord` from an in-process engine game.

The records it stores and reads back are plain classes of :mod:`records`, below both the
server and this package. Importing :mod:`db` does not load SQLAlchemy.
"""
