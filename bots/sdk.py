"""The public SDK for custom Python bots.

Subclass :class:`Bot`, implement ``choose``, call :func:`run`. Your bot then plays on any
yard server exactly like the built-in ones::

    from bots.sdk import Bot, run

    class Coin(Bot):
        name = "coin"

        def choose(self, view, legal):
            return self.rng.choice(legal)

    if __name__ == "__main__":
        run(Coin)          # python coin.py --url ws://127.0.0.1:8765

``view`` is the seat's :class:`game.View` (``view.seat``, ``view.detectives``,
``view.possible``, ``view.log``, ``view.rules.board``; Mister X's view adds ``view.mrx``);
``legal`` lists the legal :class:`game.Move` values; return one of them (or its text,
``"taxi:4"``, exactly as :meth:`Move.__str__ <game.Move.__str__>` writes it).

A failing ``choose`` costs the game at once, never a silent wait for the clock: if it
raises, the game ends ``bot_error`` and the server stores ``choose raised TYPE: first line
of the message`` as the reason (``yard replay`` shows it, to the opponent too; the
traceback goes only to this process's log, and directories are cut from absolute paths).
If it returns anything but a legal move (``None``, a move or text not in ``legal``), the
game ends ``illegal_move`` with what it returned as the reason; it is not retried, since
the same view gives the same answer. An exception while starting a game (``new_game``)
gives that game up the same way. See ``docs/protocol.md`` (``bot_error``).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable, Sequence

from bots.base import Bot
from bots.client import LOOPS, BotClient, account_token, run_client, run_on_loop
from bots.options import Range
from bots.warmup import ladder_names
from game import MRX, Move, Ruleset, Ticket, View

__all__ = ["MRX", "Bot", "Move", "Range", "Ruleset", "Ticket", "View", "run"]


def run(bot: type[Bot] | Callable[[], Bot], argv: Sequence[str] | None = None, *,
        ladder: Sequence[str] | None = None) -> int:
    """Connect ``bot`` (a class or a zero-argument factory) to a server and play until the
    server shuts down, ``--games`` are played, or the process is interrupted. Either way
    but a server shutdown it leaves gracefully: once it has been given ``--games`` games,
    or at the first Ctrl-C, it asks the server for no new games (``leave``), plays out the
    games it has and exits, so stopping costs no forfeit (a second Ctrl-C quits at once).

    Command line: ``--url`` (default ``$YARD_URL``, else ``ws://127.0.0.1:8765``),
    ``--name`` (default ``$YARD_BOT_NAME``, else the class's ``name``), ``--token``,
    ``--token-file`` (a file holding the token), ``--register`` (get an account on a
    server with open registration: the token is written to ``--token-file``, else printed
    once; a ``--token-file`` that exists is used instead), ``--version``, ``--games``,
    ``--instance`` (a label telling several processes of one bot apart; default
    ``$YARD_BOT_INSTANCE``), ``--loop`` (``auto``: uvloop when installed; ``asyncio``,
    ``uvloop``), ``--ladder`` (comma-separated rulesets of the server's standing ladder to
    be matched on, added to ``ladder``) and ``--max-games`` (most ladder games at once,
    default 1). On a ladder a bot class that plays one side only (``roles``) is matched
    only in that side. A launcher (``yard tournament run --engine``) sets the variables.
    Returns games played.

    Call ``self.report(playouts=..., nodes=..., depth=...)`` in ``choose`` to send the
    move's search effort with it (shown in tournament summaries).
    """
    default_name = os.environ.get("YARD_BOT_NAME") or getattr(bot, "name", "custom")
    parser = argparse.ArgumentParser(description=f"yard bot {default_name}")
    add_client_options(parser, default_name)
    args = parser.parse_args(argv)
    return connect(bot, args, ladder=ladder, roles=getattr(bot, "roles", None))


def add_client_options(parser: argparse.ArgumentParser, default_name: str | None) -> None:
    """The command-line options of :func:`run` (also ``yard-bot run``'s; ``--name``
    defaults to ``default_name``, ``None``: the caller's to fill in)."""
    parser.add_argument("--url", default=os.environ.get("YARD_URL") or "ws://127.0.0.1:8765",
                        help="the server's address (default $YARD_URL, else "
                        "ws://127.0.0.1:8765)")
    parser.add_argument("--name", default=default_name,
                        help=f"name announced to the server (default "
                        f"{default_name or 'the bot class name'})")
    parser.add_argument("--token", help="this bot's token, if the server requires one")
    parser.add_argument("--token-file", help="file holding this bot's token (with "
                        "--register: where the new token is written)")
    parser.add_argument("--register", action="store_true",
                        help="register the name on a server with open registration")
    parser.add_argument("--version", default="")
    parser.add_argument("--games", type=int, help="leave after this many games (no new "
                        "ones asked for once they are given; they are played out)")
    parser.add_argument("--ladder", help="comma-separated rulesets of the server's ladder "
                        "to be matched on, e.g. grid5 (yard serve --ladder); a ruleset "
                        "file (.toml) stands for the name inside it")
    parser.add_argument("--max-games", type=int, help="most ladder games at once (default 1)")
    parser.add_argument("--instance", default=os.environ.get("YARD_BOT_INSTANCE") or None)
    parser.add_argument("--loop", choices=LOOPS, default="auto",
                        help="event loop (auto: uvloop when installed)")


def connect(factory: Callable[[], Bot], args: argparse.Namespace, *,
            ladder: Sequence[str] | None = None, roles: Iterable[str] | None = None) -> int:
    """Play as :func:`run` does with the options ``args`` parsed by
    :func:`add_client_options` (``ladder`` adds rulesets to ``--ladder``; ``roles``: the
    sides the bot plays, default both); returns games played."""
    token, register, on_token = account_token(args.name, args.token, args.token_file,
                                              args.register)
    rulesets = ladder_names(list(ladder or ()) + [r for r in (args.ladder or "").split(",")
                                                  if r])
    client = BotClient(factory, args.url, args.name, args.version, token, args.games,
                       instance=args.instance, register=register, on_token=on_token,
                       ladder=rulesets or None, concurrent=args.max_games, roles=roles)
    return run_on_loop(run_client(client), args.loop)
