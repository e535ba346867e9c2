"""Learn Location Categorization weights from self-play games.

Plays ``--games`` games of MCTS against MCTS (every enhancement on except LC itself, a
fixed iteration budget; ``--mrx`` / ``--detectives`` choose other bots), counts at every
detective decision which distance categories were possible and which one held Mister X, and
writes ``hits / possibilities`` per category for the ruleset into ``--out`` (the packaged
``bots/mcts/data/lc_weights.json`` by default).
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from pathlib import Path

from bots.arena import GameResult, play_game
from bots.base import Bot
from bots.mcts.bot import TUNED, MctsBot
from bots.mcts.lc import DEFAULT_FILE, LcCounts, observe_game, save_weights
from bots.registry import bot_from_spec
from game import State, load_ruleset


def _states(result: GameResult) -> Iterator[State]:
    state = result.start
    for _, move in result.moves:
        yield state
        state = state.apply_unchecked(move)


def learn(rules_name: str, games: int, seed: int, iterations: int, mrx: str | None = None,
          detectives: str | None = None) -> LcCounts:
    """Play ``games`` games and count categories (seeds ``seed, seed+1, ...``).

    Both sides are the tuned MCTS bot without LC at ``iterations`` unless ``mrx`` /
    ``detectives`` give bot specs (``mcts:iterations=1000,time=0``): the weights describe
    how *that* Mister X hides from *those* detectives.
    """
    rules = load_ruleset(rules_name)
    counts = LcCounts()

    def side(spec: str | None, game_seed: int) -> Bot:
        if spec is not None:
            return bot_from_spec(spec, game_seed)
        return MctsBot(seed=game_seed, iterations=iterations, r=TUNED["r"],
                       epsilon=TUNED["epsilon"], filter=True)

    for i in range(games):
        game_seed = seed + i
        observe_game(counts, _states(play_game(rules, side(mrx, game_seed),
                                               [side(detectives, game_seed)], game_seed)))
    return counts


def _default_out() -> Path:
    return Path(str(resources.files("bots.mcts").joinpath("data", DEFAULT_FILE)))


def learn_and_save(rules_name: str, games: int, seed: int, iterations: int,
                   mrx: str | None = None, detectives: str | None = None,
                   out: Path | None = None) -> tuple[Path, LcCounts]:
    """:func:`learn`, then write the weights into ``out`` (default: the packaged file) with
    how they were learned; returns the file and the counts. A bad bot spec fails before
    any game is played."""
    for spec in (mrx, detectives):
        if spec is not None:
            bot_from_spec(spec, 0)
    counts = learn(rules_name, games, seed, iterations, mrx, detectives)
    target = out or _default_out()
    meta: dict[str, object] = {"games": games, "seed": seed, "iterations": iterations}
    meta.update({k: v for k, v in (("mrx", mrx), ("detectives", detectives)) if v})
    save_weights(target, load_ruleset(rules_name).name, counts, meta)
    return target, counts
