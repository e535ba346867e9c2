"""A match server put to work: serving as a process (``yard serve``, :mod:`host.run`) or on
a thread of its own (inside ``yard tournament run`` and ``yard match``,
:mod:`host.hosted`), with its database writer (:mod:`host.writer`), account checks
(:mod:`host.accounts`), house bots (:mod:`host.house`) and web pages (:mod:`host.web`).

:mod:`server` referees and speaks websockets; it imports neither the database nor any bot.
This package hands it what it needs (a :class:`server.app.Recorder` for finished games, an
:class:`server.app.AccountCheck` for tokens, the page server's ``process_request``).
"""
