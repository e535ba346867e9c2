"""The web pages and read-only JSON API, served by the match server's own port.

``host.web.http`` answers plain HTTP requests (the websockets library hands them over
through ``process_request``) and routes them to what they read: ``ratings_cache``
(leaderboards and matrices), ``listings`` (games and tournaments), ``replay`` (a stored
game from one perspective), ``live`` (games running now), ``boards`` (board drawings).
The pages themselves are static files in ``host/web/static``.
"""
