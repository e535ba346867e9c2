"""The web pages and read-only JSON API, served by the match server's own port.

``server.web.http`` answers plain HTTP requests (the websockets library hands them over
through ``process_request``); ``server.web.data`` reads the database (cached ratings,
game lists, replays); the pages themselves are static files in ``server/web/static``.
"""
