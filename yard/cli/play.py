"""``yard play``: play games in-process between bots and summarise the results.

Examples::

    yard play --rules classic --mrx run --detectives rush --games 200 --seed 1
    yard play --rules grid5 --mrx greedy --detectives rush,random --json
    yard play --mrx mcts --detectives rush --option mcts:iterations=200
    yard play --mrx random --detectives examples/closer_bot.py:Closer
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from bots.arena import GameResult, Summary, play_many, wilson_interval
from bots.base import Bot, require_role
from bots.registry import BotOptionError, bot_from_spec
from bots.spec import BotSpec, merge_options
from game.rules import Ruleset, load_ruleset
from yard.cli.options import BOT_OPTION, BOT_SPEC, BOT_SPEC_LIST, json_option

ProgressFn = Callable[[int, GameResult], None]


def build_bots(mrx: BotSpec, detectives: list[BotSpec], options: tuple[BotSpec, ...],
               seed: int) -> tuple[Bot, list[Bot]]:
    """Mister X's bot and the detectives' bots (one per spec); ``options`` are
    ``--option BOT:key=value`` specs, merged into every spec with that ref."""
    by_bot = merge_options(options)
    unused = set(by_bot) - {mrx.ref, *(d.ref for d in detectives)}
    if unused:
        raise BotOptionError(f"--option given for bot(s) not playing: {', '.join(sorted(unused))}")
    mrx_bot = bot_from_spec(mrx, seed, by_bot.get(mrx.ref))
    require_role(mrx_bot, "mrx")
    det_bots = [bot_from_spec(d, seed, by_bot.get(d.ref)) for d in detectives]
    for bot in det_bots:
        require_role(bot, "detectives")
    return mrx_bot, det_bots


def _rate(wins: int, games: int) -> str:
    lo, hi = wilson_interval(wins, games)
    share = wins / games if games else 0.0
    return f"{wins:6d}  {share:6.1%}  (95% CI {lo:.1%} to {hi:.1%})"


def format_summary(rules: Ruleset, header: str, summary: Summary) -> str:
    """The human-readable summary printed by ``yard play``."""
    ends = ", ".join(f"{name} {n}" for name, n in sorted(summary.terminations.items(),
                                                          key=lambda kv: -kv[1]))
    return "\n".join([
        header,
        f"Mister X wins   {_rate(summary.mrx_wins, summary.games)}",
        f"detective wins  {_rate(summary.detective_wins, summary.games)}",
        f"mean length     {summary.mean_moves:.2f} Mister X moves (of {rules.max_moves})",
        f"terminations    {ends}",
        f"speed           {summary.games_per_s:.1f} games/s ({summary.seconds:.2f} s)",
    ])


@contextmanager
def progress_bar(games: int, enabled: bool) -> Iterator[ProgressFn | None]:
    """A rich progress bar on stderr (only on a terminal and for long runs)."""
    from rich.console import Console
    from rich.progress import Progress

    console = Console(stderr=True)
    if not enabled or games < 20 or not console.is_terminal:
        yield None
        return
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task("playing", total=games)

        def advance(done: int, _result: GameResult) -> None:
            bar.update(task, completed=done)

        yield advance


@click.command()
@click.option("--rules", "rules_spec", default="classic", show_default=True,
              help="Built-in ruleset name or path to a ruleset .toml file.")
@click.option("--mrx", "mrx_spec", default="random", show_default=True, type=BOT_SPEC,
              help="Bot spec playing Mister X (a built-in or installed bot, or "
              "file.py:Class, with options: mcts:iterations=200).")
@click.option("--detectives", "det_specs", default="random", show_default=True, type=BOT_SPEC_LIST,
              help="Bot spec for every detective, or a comma list assigned to seats "
              "(cycled).")
@click.option("--games", default=100, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=0, show_default=True, type=int,
              help="Game i uses seed SEED+i (same seed, same games).")
@click.option("--option", "option_specs", multiple=True, type=BOT_OPTION,
              metavar="BOT:KEY=VALUE", help="A bot option, e.g. mcts:iterations=200 "
              "(repeatable).")
@json_option("Print one JSON object.")
def play(rules_spec: str, mrx_spec: BotSpec, det_specs: list[BotSpec], games: int, seed: int,
         option_specs: tuple[BotSpec, ...], as_json: bool) -> None:
    """Play GAMES games in-process and print who won, how long games took and how fast."""
    rules = load_ruleset(rules_spec)
    mrx_bot, det_bots = build_bots(mrx_spec, det_specs, option_specs, seed)
    mrx, detectives = str(mrx_spec), ",".join(str(d) for d in det_specs)
    with progress_bar(games, not as_json) as progress:
        summary = play_many(rules, mrx_bot, det_bots, games, seed=seed, progress=progress)
    if as_json:
        record: dict[str, Any] = {"rules": rules.name, "mrx": mrx, "detectives": detectives,
                                  "seed": seed, **summary.to_dict()}
        click.echo(json.dumps(record))
        return
    header = (f"{rules.name}: {games} games, Mister X {mrx} vs detectives {detectives} "
              f"({rules.detectives} detectives), seeds {seed}..{seed + games - 1}")
    click.echo(format_summary(rules, header, summary))
