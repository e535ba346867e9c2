"""``yard play``: play games in-process between built-in bots and summarise the results.

    yard play --rules classic --mrx run --detectives rush --games 200 --seed 1
    yard play --rules grid5 --mrx greedy --detectives rush,random --json
    yard play --mrx mcts --detectives rush --option mcts:iterations=200
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from bots.arena import GameResult, Summary, play_many, wilson_interval
from bots.base import Bot, require_role
from bots.registry import BotOptionError, make_bot, parse_options
from game.rules import Ruleset, load_ruleset

ProgressFn = Callable[[int, GameResult], None]


def options_by_bot(specs: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """``("mcts:iterations=200", ...)`` -> ``{"mcts": {"iterations": "200"}}``."""
    out: dict[str, dict[str, str]] = {}
    for spec in specs:
        bot, sep, pair = spec.partition(":")
        if not sep or not bot:
            raise BotOptionError(f"--option {spec!r} must look like BOT:key=value")
        out.setdefault(bot.strip(), {}).update(parse_options([pair]))
    return out


def build_bots(mrx: str, detectives: str, options: dict[str, dict[str, str]],
               seed: int) -> tuple[Bot, list[Bot]]:
    """Mister X's bot and the detectives' bots (one per comma-separated name)."""
    names = [n.strip() for n in detectives.split(",")]
    if not all(names):
        raise BotOptionError(f"--detectives {detectives!r}: empty bot name in the list")
    unused = set(options) - {mrx, *names}
    if unused:
        raise BotOptionError(f"--option given for bot(s) not playing: {', '.join(sorted(unused))}")
    mrx_bot = make_bot(mrx, seed, options.get(mrx))
    require_role(mrx_bot, "mrx")
    det_bots = [make_bot(n, seed, options.get(n)) for n in names]
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
@click.option("--mrx", default="random", show_default=True, help="Bot playing Mister X.")
@click.option("--detectives", default="random", show_default=True,
              help="Bot for every detective, or a comma list assigned to seats (cycled).")
@click.option("--games", default=100, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=0, show_default=True, type=int,
              help="Game i uses seed SEED+i (same seed, same games).")
@click.option("--option", "option_specs", multiple=True, metavar="BOT:KEY=VALUE",
              help="A bot option, e.g. mcts:iterations=200 (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def play(rules_spec: str, mrx: str, detectives: str, games: int, seed: int,
         option_specs: tuple[str, ...], as_json: bool) -> None:
    """Play GAMES games in-process and print who won, how long games took and how fast."""
    rules = load_ruleset(rules_spec)
    mrx_bot, det_bots = build_bots(mrx, detectives, options_by_bot(option_specs), seed)
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
