"""Warm a bot up before it connects: one move on each side it plays, on each ruleset.

A bot's first move can cost far more than the others: numba compiles the MCTS rules kernel
and Alpha-Beta's search (or loads them from its cache), a network loads its weights. On a
ladder the clock of the first game would pay for that (a fresh server's house bots timed
out and were paused within half a minute). :func:`warm_up` pays it before ``hello``: it
plays one move with a fresh bot of the same spec from a real position of each side it
plays, exactly the code the games run. ``yard bot --ladder`` calls it.

A ladder ruleset the bot cannot load here (a server's own ruleset from a TOML file, known
by its name only there) is skipped: the server sends its definition with each game, and
the compiling is the same on any ruleset, so the bot warms up on the others, or on
:data:`FALLBACK` when none is left.

>>> from bots.registry import make_bot
>>> [w.side for w in warm_up(lambda: make_bot("rush"), ["grid5"])]
['detectives']
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bots.base import Bot
from game import MRX, Ruleset, State, YardError, load_ruleset, new_game

log = logging.getLogger(__name__)

WARM_SEED = 1
"""The deal of the warm-up positions (any: only the code path matters)."""

FALLBACK = "grid5"
"""The ruleset of a warm-up when none of the given ones can be loaded here."""


@dataclass(frozen=True)
class WarmUp:
    """One warm-up move: the ruleset, the side, the seconds it took, and the error it
    raised (``None``: it played; a failing bot fails again in its game, where the server
    hears of it)."""

    rules: str
    side: str
    seconds: float
    error: str | None = None


def warm_up(factory: Callable[[], Bot], rules: Sequence[str]) -> list[WarmUp]:
    """Play one move with a fresh bot from ``factory`` for each side it plays (its class's
    ``roles``) on each ruleset of ``rules`` that loads here (else on :data:`FALLBACK`);
    never raises for the bot's own errors."""
    done: list[WarmUp] = []
    roles = factory().roles
    for name, ruleset in _loadable(rules):
        start = new_game(ruleset, WARM_SEED)
        for side in ("mrx", "detectives"):
            if side not in roles:
                continue
            position = _to_move(start, side)
            seats = [MRX] if side == "mrx" else list(range(1, start.n_detectives + 1))
            began = time.perf_counter()
            error = None
            try:
                bot = factory()
                bot.begin(ruleset, seats, WARM_SEED)
                bot.choose(position.view(position.to_move), position.legal_moves())
            except Exception as exc:  # the game will report it; warming up must go on
                error = f"{type(exc).__name__}: {exc}"
                log.warning("warming up on %s as %s failed: %s", name, side, error)
            done.append(WarmUp(name, side, time.perf_counter() - began, error))
    return done


def _loadable(names: Sequence[str]) -> list[tuple[str, Ruleset]]:
    """The rulesets of ``names`` that load here (a skipped one is logged), else
    :data:`FALLBACK`'s."""
    loaded = []
    for name in names:
        try:
            loaded.append((name, load_ruleset(name)))
        except YardError as exc:
            log.info("not warming up on %s (%s): the server sends its rules with each game",
                     name, exc)
    return loaded or [(FALLBACK, load_ruleset(FALLBACK))]


def ladder_names(entries: Sequence[str]) -> list[str]:
    """What a ladder server calls each ``--ladder`` entry: a ruleset file (``.toml``) by
    the ``name`` inside it (as ``yard serve --ladder FILE.toml`` does), anything else as
    given. A file that does not load raises its :class:`game.RulesetError`.

    >>> ladder_names(["grid5", "classic"])
    ['grid5', 'classic']
    """
    return [load_ruleset(entry).name if entry.endswith(".toml") else entry
            for entry in entries]


def _to_move(state: State, side: str) -> State:
    """``state``, or the first position after it where ``side`` is to move (Mister X moves
    first: the detectives wait for his first move)."""
    while (state.to_move == MRX) != (side == "mrx") and state.outcome is None:
        state = state.apply_unchecked(state.legal_moves()[0])
    return state
