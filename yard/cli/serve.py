"""``yard serve`` (run a match server) and ``yard match`` (play one game between bots)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from bots.spec import BotSpec
from host.house import HouseBot
from host.run import run_server, server_config
from protocol import OnTimeout, Policy, StartMatch, TimeControl, to_json
from protocol.messages import MatchResult
from server.auth import client_admin_token
from yard.cli.options import (
    BOT_SPEC,
    BOT_SPEC_LIST,
    EngineCommand,
    admin_token_options,
    db_option,
    engine_option,
    json_option,
    rules_option,
)

if TYPE_CHECKING:
    from tournament.engines import Engine


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535),
              help="Port (0 picks a free one).")
@db_option
@click.option("--token-file", type=click.Path(dir_okay=False),
              help='TOML file: [bots] name = "token", and optional admin_token.')
@click.option("--bot-token", multiple=True, metavar="NAME=TOKEN", help="Require a bot token.")
@click.option("--admin-token", envvar="YARD_ADMIN_TOKEN",
              help="Token for admin actions (env YARD_ADMIN_TOKEN; default: the one in "
              "--admin-token-file).")
@click.option("--admin-token-file", type=click.Path(dir_okay=False),
              help="File with the admin token, created (mode 0600, a fresh token) if "
              "missing  [default: $XDG_STATE_HOME/yard/admin-token, else "
              "~/.local/state/yard/admin-token]")
@click.option("--allow-origin", multiple=True, metavar="ORIGIN",
              help="Let web pages from ORIGIN (https://host[:port], host[:port] or null) "
              "connect, besides the server's own pages (repeatable).")
@click.option("--accounts", is_flag=True,
              help="Every bot name needs its account's token (yard accounts; names in "
              "--token-file/--bot-token keep their fixed tokens).")
@click.option("--open-registration", is_flag=True,
              help="With --accounts: a bot may register an unused name (hello with "
              "register; yard bot --register) and gets its token once.")
@click.option("--registrations-per-address", default=10, show_default=True,
              type=click.IntRange(1),
              help="New accounts (bots registering, people claiming a name on the Play "
              "page) one remote address may make per --registration-window.")
@click.option("--registrations-total", default=100, show_default=True,
              type=click.IntRange(1),
              help="New accounts made in all per --registration-window.")
@click.option("--registration-window", default=3600.0, show_default=True,
              type=click.FloatRange(0, min_open=True),
              help="Seconds over which registrations are counted (a sliding window).")
@click.option("--registration-queue", default=8, show_default=True, type=click.IntRange(1),
              help="Registrations being made at once (each hashes a token on a thread of "
              "its own, never the one logins use); more are refused with "
              "registration_limit.")
@click.option("--max-account-connections", default=16, show_default=True,
              type=click.IntRange(1), help="Live connections per account.")
@click.option("--max-account-games", default=64, show_default=True, type=click.IntRange(1),
              help="Games one account may play at once.")
@click.option("--move-time", default=10.0, show_default=True,
              type=click.FloatRange(0, min_open=True), help="Default seconds per move.")
@click.option("--bank-time", default=0.0, show_default=True, type=click.FloatRange(0),
              help="Default bank seconds.")
@click.option("--grace", default=10.0, show_default=True, type=click.FloatRange(0),
              help="Seconds a disconnected bot has to resume before it forfeits.")
@click.option("--ready-file", type=click.Path(dir_okay=False),
              help="Write the server URL here once listening.")
@click.option("--max-connections", default=1024, show_default=True,
              type=click.IntRange(1), help="Open sockets in all (more get HTTP 503).")
@click.option("--max-per-address", default=256, show_default=True,
              type=click.IntRange(1), help="Open sockets per remote address.")
@click.option("--hello-timeout", default=5.0, show_default=True,
              type=click.FloatRange(0, min_open=True),
              help="Seconds a connection has to send hello before it is closed.")
@click.option("--send-buffer-kib", default=1024, show_default=True, type=click.IntRange(1),
              help="KiB of unread messages a client may have before it is disconnected.")
@click.option("--loop", "loop_name", default="asyncio", show_default=True,
              type=click.Choice(["auto", "asyncio", "uvloop"]),
              help="Event loop: auto is uvloop when installed (it is, except on Windows).")
@click.option("--ladder", metavar="RULES[,RULES...]", default="",
              help="Run a standing ladder on these rulesets (built-in names or ruleset "
              "TOML files, each known by its ruleset's name): bots that connect with "
              "--ladder are matched in role-swapped pairs and rated after every game, and "
              "people can play them on the Play page (docs/ladder.md).")
@click.option("--house", "house", multiple=True, type=BOT_SPEC, metavar="BOT_SPEC",
              help="A built-in bot the server starts and keeps on its ladder, e.g. random "
              "or mcts:iterations=200 (repeatable; needs --ladder). It plays under its spec, "
              "or under the name its name= option gives (greedy:name=greedy-house).")
@click.option("--house-games", default=4, show_default=True, type=click.IntRange(1),
              help="Games at once each --house bot takes.")
@click.option("--house-rate", default=1.0, show_default=True, type=click.FloatRange(0),
              metavar="GAMES_PER_MIN",
              help="Most ladder games a minute the --house bots play against each other, on "
              "average (0: none; their games with other bots and people are not paced).")
@click.option("--ladder-placement", default=6, show_default=True, type=click.IntRange(0),
              help="Rated games a new ladder bot plays against opponents spread over the "
              "ladder before it is matched near its rating.")
@click.option("--ladder-pause-after", default=3, show_default=True, type=click.IntRange(1),
              help="Forfeits in a row (timeouts, errors, disconnects...) that pause a bot "
              "from the ladder: 10 minutes, doubled for each further pause in a row; the bot "
              "is told until when (reconnecting does not lift a pause) and is matched again "
              "as soon as it ends.")
@click.option("--ladder-check", is_flag=True,
              help="A bot new to the ladder first plays two check games (as Mister X, then "
              "as the detectives) against the server's random player; one that faults "
              "(timeout, illegal move, error...) is told why and not matched.")
@click.option("--ladder-max-games", default=16, show_default=True, type=click.IntRange(1),
              help="Most games at once a ladder bot may ask for (hello max_games).")
@click.option("--play-move-time", default=60.0, show_default=True,
              type=click.FloatRange(0, min_open=True),
              help="Seconds per move of a person on the Play page.")
@click.option("--play-bank-time", default=600.0, show_default=True,
              type=click.FloatRange(0), help="Bank seconds of a person on the Play page.")
def serve(host: str, port: int, db_url: str, token_file: str | None,
          bot_token: tuple[str, ...], admin_token: str | None, admin_token_file: str | None,
          allow_origin: tuple[str, ...], accounts: bool, open_registration: bool,
          registrations_per_address: int, registrations_total: int,
          registration_window: float, registration_queue: int,
          max_account_connections: int, max_account_games: int, move_time: float,
          bank_time: float, grace: float, ready_file: str | None, max_connections: int,
          max_per_address: int, hello_timeout: float, send_buffer_kib: int,
          loop_name: str, ladder: str, house: tuple[BotSpec, ...], house_games: int,
          house_rate: float,
          ladder_placement: int, ladder_pause_after: int, ladder_check: bool,
          ladder_max_games: int, play_move_time: float, play_bank_time: float) -> None:
    """Run a match server until SIGINT/SIGTERM (running games are stored as aborted).

    Every option is checked, and the port bound, before the database is opened or created.
    Admin connections always need the admin token: without --admin-token the server uses
    the one in --admin-token-file, creating that file if needed, and says where on stderr.
    """
    houses = house_bots(house, min(house_games, ladder_max_games))
    config = server_config(host, token_file, bot_token, admin_token, move_time, bank_time,
                           grace, max_connections, max_per_address, hello_timeout,
                           send_buffer_kib, admin_token_file=admin_token_file,
                           allow_origin=allow_origin, accounts=accounts,
                           open_registration=open_registration,
                           max_account_connections=max_account_connections,
                           max_account_games=max_account_games,
                           ladder=tuple(r.strip() for r in ladder.split(",") if r.strip()),
                           ladder_placement=ladder_placement,
                           ladder_pause_after=ladder_pause_after,
                           ladder_max_games=ladder_max_games, play_move_time=play_move_time,
                           play_bank_time=play_bank_time, ladder_check=ladder_check,
                           registrations_per_address=registrations_per_address,
                           registrations_total=registrations_total,
                           registration_window=registration_window,
                           registration_queue=registration_queue,
                           house=tuple(str(spec) for spec in house), house_rate=house_rate)
    if house and not config.ladder:
        raise click.UsageError("--house bots play on the ladder: give --ladder RULES too")
    run_server(config, db_url, host, port, ready_file, loop_name, houses)


def house_bots(specs: tuple[BotSpec, ...], games: int) -> list[HouseBot]:
    """The ``--house`` bots: each plays under its spec, or the name its ``name=`` option
    gives (``greedy:name=greedy-house``; the option is not the bot's own)."""
    houses: list[HouseBot] = []
    for spec in specs:
        options = spec.option_dict()
        name = options.pop("name", None)
        plain = str(BotSpec(spec.ref, tuple(options.items())))
        if name is not None and not (0 < len(name) <= 64 and name.isprintable()
                                     and not name.startswith("human:")):
            raise click.UsageError(f"--house {spec}: name= must be 1 to 64 printable "
                                   "characters, not starting with human:")
        house = HouseBot(plain, name or plain, games)
        if any(h.name == house.name for h in houses):
            raise click.UsageError(f"--house: two house bots named {house.name!r} (give "
                                   "one another name=)")
        houses.append(house)
    return houses


@click.command(cls=EngineCommand)
@rules_option()
@click.option("--mrx", required=True, type=BOT_SPEC,
              help="Bot playing Mister X: a connected bot's name with --server, else a bot "
              "spec (built-in or installed bot, file.py:Class, an --engine name; options "
              "as mcts:iterations=200).")
@click.option("--detectives", required=True, type=BOT_SPEC_LIST,
              help="Bot(s) per detective seat, comma separated (cycled).")
@engine_option
@click.option("--server", "server_url", help="Running server URL (else start one locally).")
@click.option("--seed", type=int, help="Game seed (random when omitted).")
@click.option("--n-detectives", type=int, help="Number of detectives (ruleset default).")
@click.option("--move-time", default=10.0, show_default=True, help="Seconds per move.")
@click.option("--bank-time", default=0.0, show_default=True, help="Bank seconds per seat.")
@click.option("--on-timeout", type=click.Choice([p.value for p in OnTimeout]),
              default="forfeit", show_default=True)
@click.option("--max-illegal", default=3, show_default=True, help="Bad tries before forfeit.")
@admin_token_options
@db_option
@json_option("Print the result as JSON.")
def match(rules: str, mrx: BotSpec, detectives: list[BotSpec], engines: tuple[Engine, ...],
          server_url: str | None, seed: int | None, n_detectives: int | None,
          move_time: float, bank_time: float, on_timeout: str, max_illegal: int,
          admin_token: str | None, admin_token_file: str | None, db_url: str,
          as_json: bool) -> None:
    """Play one game between connected bots (or bots started here) and print it."""
    # One game: with --seed its bots' seeds are reproducible too (the seat seed is the
    # seed); without, the server draws both.
    request = StartMatch(rules, mrx.ref, [d.ref for d in detectives], seed, n_detectives,
                         TimeControl(move_time, bank_time),
                         Policy(OnTimeout(on_timeout), max_illegal), seat_seed=seed)
    if server_url:
        admin_token = client_admin_token(server_url, admin_token, admin_token_file)
    # Here, not at the top: `yard serve` (every tournament run starts one) never needs
    # the match runner or the numpy it brings.
    from tournament.match import play_match

    result = play_match(request, [mrx, *detectives], list(engines), server_url, admin_token,
                        db_url)
    _print_result(result, as_json)


def _print_result(result: MatchResult, as_json: bool) -> None:
    if as_json:
        data: dict[str, Any] = to_json(result)
        click.echo(json.dumps(data, indent=2))
        return
    winner = result.winner.value if result.winner else "nobody"
    seat = f", seat {result.seat}" if result.seat else ""
    click.echo(f"game {result.game}: {winner} won ({result.termination.value}{seat}) "
               f"after {result.moves} moves")
