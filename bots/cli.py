"""``yard-bot``: the slim client's command line (distribution ``yard-client``, which needs
only websockets; the full install has it too). argparse, not click: click is not a
dependency of the slim client.

- ``yard-bot run SPEC --url URL [...]``: a bot (``file.py:Class``, ``package.module:Class``,
  a built-in one the install has) as a network client, as ``yard bot`` runs it.
- ``yard-bot new-bot NAME``: a starter bot, its test and README (:mod:`bots.starter`).
- ``yard-bot check SPEC``: whole games in-process against random (:mod:`bots.quickcheck`).
- ``yard-bot standing NAME --url URL``: its rating, rank and recent games on a ladder
  server (:mod:`bots.standing`).

User mistakes (a :class:`~game.errors.YardError`) print one line and exit 2.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from bots.quickcheck import check_locally
from bots.registry import bot_from_spec, default_name
from bots.sdk import add_client_options, connect
from bots.spec import parse_spec
from bots.standing import RECENT, fetch_standing, standing_lines
from bots.starter import new_bot
from bots.warmup import ladder_names, warm_up
from game.errors import YardError

log = logging.getLogger(__name__)


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.command(args)
    except YardError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130
    return status


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="yard-bot", description="Run, make, check a yard "
                                     "bot and see its standing on a ladder server.")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run a bot as a client of a server",
                              description="Run SPEC (file.py:Class, package.module:Class, "
                              "with :key=value options) as a client of the server at --url.")
    run.add_argument("spec", metavar="SPEC")
    add_client_options(run, os.environ.get("YARD_BOT_NAME") or None)
    run.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                     help="bot option (repeatable; same as SPEC:KEY=VALUE)")
    run.add_argument("--seed", type=int, help="seed for bots created before a game's seed")
    run.add_argument("--warm-up", action=argparse.BooleanOptionalAction, default=None,
                     help="before connecting, play one move on each side on each --ladder "
                     "ruleset (default: on with --ladder)")
    run.add_argument("-v", "--verbose", action="store_true", help="log connection events")
    run.set_defaults(command=_run)

    new = commands.add_parser("new-bot", help="write a starter bot, its test and README",
                              description="Write a starter bot NAME into a folder NAME "
                              "(or --dir): NAME.py, test_NAME.py, README.md.")
    new.add_argument("name", metavar="NAME")
    new.add_argument("--dir", type=Path, help="folder to write into (default ./NAME)")
    new.add_argument("--force", action="store_true", help="overwrite files that exist")
    new.set_defaults(command=_new_bot)

    check = commands.add_parser("check", help="play whole games in-process against random",
                                description="Play a few whole games of SPEC against the "
                                "random bot in-process, on each ruleset it claims and in "
                                "each role it plays. Exit 1 on a failure. (The protocol "
                                "battery is `yard bot-check`, in the full install.)")
    check.add_argument("spec", metavar="SPEC")
    check.add_argument("--rules", help="comma-separated rulesets (default: those the bot "
                       "claims, else grid5,classic)")
    check.add_argument("--games", type=int, default=3, help="games per ruleset and role")
    check.add_argument("--seed", type=int, default=1, help="seed of the first game")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.set_defaults(command=_check)

    standing = commands.add_parser("standing", help="a bot's rating, rank and recent games",
                                   description="Bot NAME's standing on the ladders of the "
                                   "server at --url (its ws:// or http:// address): rating "
                                   "and uncertainty, rank, games by role, forfeits, pause "
                                   "state, recent games with replay links.")
    standing.add_argument("name", metavar="NAME")
    standing.add_argument("--url", required=True, help="the server, e.g. wss://HOST or "
                          "http://127.0.0.1:8765")
    standing.add_argument("--rules", help="comma-separated ladders (default: every one the "
                          "bot is on)")
    standing.add_argument("--recent", type=int, default=RECENT,
                          help=f"recent games shown per ladder (default {RECENT})")
    standing.add_argument("--json", action="store_true", help="print one JSON object")
    standing.set_defaults(command=_standing)
    return parser


def _run(args: argparse.Namespace) -> int:
    spec = parse_spec(args.spec).with_options(_pairs(args.option))
    probe = bot_from_spec(spec, args.seed)  # fail fast on unknown bots and options
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    args.name = args.name or default_name(spec.ref)
    rulesets = [r for r in (args.ladder or "").split(",") if r]
    ladder_names(rulesets)  # a ruleset file that does not load fails here, before warming up
    if args.warm_up or (args.warm_up is None and rulesets):
        for move in warm_up(lambda: bot_from_spec(spec, args.seed), rulesets or ["grid5"]):
            log.info("%s: warmed up on %s as %s in %.2f s", args.name, move.rules,
                     move.side, move.seconds)
    played = connect(lambda: bot_from_spec(spec, args.seed), args, roles=probe.roles)
    print(f"{args.name}: played {played} games", file=sys.stderr)
    return 0


def _pairs(options: list[str]) -> list[tuple[str, str]]:
    pairs = []
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or not key:
            raise YardError(f"--option {option!r}: give KEY=VALUE")
        pairs.append((key, value))
    return pairs


def _new_bot(args: argparse.Namespace) -> int:
    for line in new_bot(args.name, args.dir, args.force):
        print(line)
    return 0


def _check(args: argparse.Namespace) -> int:
    spec = parse_spec(args.spec)
    bot_from_spec(spec, args.seed)  # an unknown bot or option: one line, exit 2
    rules = [r for r in (args.rules or "").split(",") if r]
    lines = check_locally(lambda: bot_from_spec(spec, args.seed), rules, args.games,
                          args.seed)
    passed = all(line.passed for line in lines)
    full = shutil.which("yard") is not None
    if args.json:
        print(json.dumps({"spec": args.spec, "passed": passed,
                          "checks": [line.to_dict() for line in lines]}))
    else:
        for line in lines:
            print(line.line())
        print(f"{'passed' if passed else 'FAILED'}: {sum(c.passed for c in lines)} of "
              f"{len(lines)} in-process checks")
        if full:
            print(f"the protocol battery (dropped connection, deadline, unknown fields): "
                  f"yard bot-check {args.spec}")
        else:
            print("the protocol battery (dropped connection, deadline, unknown fields) is "
                  "`yard bot-check`, in the full yard install")
    return 0 if passed else 1


def _standing(args: argparse.Namespace) -> int:
    rules = [r for r in (args.rules or "").split(",") if r]
    standing = fetch_standing(args.url, args.name, rules, args.recent)
    if args.json:
        print(json.dumps(standing))
    else:
        for line in standing_lines(standing):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
