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
