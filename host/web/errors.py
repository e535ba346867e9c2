"""The errors the web API answers with: each carries its HTTP status and code."""

from __future__ import annotations

from game import YardError


class WebError(YardError):
    """A request the API cannot answer; ``status`` is the HTTP status to send."""

    status = 400
    code = "bad_request"


class NotFound(WebError):
    """No such page, game, tournament or live game."""

    status = 404
    code = "not_found"


class Withheld(NotFound):
    """A stored game whose paired game (same tournament and pair) is still to be played:
    both start from the same deal, so its record stays private until that game is over."""

    code = "withheld"


class Busy(WebError):
    """Too many requests are waiting for the database or a board drawing; retry later."""

    status = 503
    code = "busy"
