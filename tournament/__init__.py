"""Tournaments: schedules, and playing them on match servers with bots as processes.

- :mod:`~tournament.schedule`: pure schedule generation (role-swapped pairs);
- :mod:`~tournament.spec`: a tournament's stored definition, validation, :func:`create`;
- :mod:`~tournament.discovery`: which bots exist and what each plays;
- :mod:`~tournament.runner`: plays a stored schedule on one machine;
- :mod:`~tournament.pool`, :mod:`~tournament.engines`, :mod:`~tournament.processes`: the
  bot and server processes it starts;
- :mod:`~tournament.cluster`, :mod:`~tournament.ray_setup`: the same on a Ray cluster;
- :mod:`~tournament.sprt`: SPRT tournaments; :mod:`~tournament.report`,
  :mod:`~tournament.compute`: leaderboards and per-bot compute;
- :mod:`~tournament.players`: ``--bots``/``--engine`` into players;
- :mod:`~tournament.match`: one game (``yard match``);
- :mod:`~tournament.botcheck`: the ``yard bot-check`` battery.
"""
