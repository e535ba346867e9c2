"""A bot's warm-up before it connects: one move of each side it plays, in this process.

A bot's first move pays for what its first call does once: numba compiles its kernels (tens
of seconds on a fresh install for ``mcts:profile=tuned`` and ``alphabeta``), tables are
built, weights loaded. On a server's clock that first move times out; so ``yard bot
--warm-up`` (and every house bot of ``yard serve --house``) plays it here, before its
``hello``, and the server sees the bot only once it is ready.

>>> from bots.simple import RandomBot
>>> warm_up(RandomBot, ["grid5"], seed=1)
['grid5 mrx', 'grid5 detectives']
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence

from bots.base import NO_VIEW, Bot, reads_view
from game import MRX, load_ruleset, new_game
from game.errors import YardError

log = logging.getLogger(__name__)


def warm_up(factory: Callable[[], Bot], rules: Sequence[str], seed: int | None = None
            ) -> list[str]:
    """Play one move of Mister X and one of the detectives on each of ``rules`` with a bot
    from ``factory`` each (the other side's moves at random); returns what was played
    (``"grid5 mrx"``...). A side the bot cannot play (its ``begin`` raises a
    :class:`~game.errors.YardError`, e.g. a role it does not take) is left out; a move that
    fails is logged and left out (the server's game would show the same failure)."""
    played: list[str] = []
    rng = random.Random(seed)
    for name in rules:
        ruleset = load_ruleset(name)
        state = new_game(ruleset, seed)
        detectives = list(range(1, state.n_detectives + 1))
        for side, seats in (("mrx", [MRX]), ("detectives", detectives)):
            bot = factory()
            try:
                bot.begin(ruleset, seats, seed)
            except YardError as exc:
                log.info("warm-up: %s %s left out: %s", name, side, exc)
                continue
            turn = state
            while turn.to_move not in seats and turn.outcome is None:
                turn = turn.apply_unchecked(rng.choice(turn.legal_moves()))
            if turn.outcome is not None:
                continue
            try:
                bot.choose(turn.view(turn.to_move) if reads_view(bot) else NO_VIEW,
                           turn.legal_moves())
            except Exception:
                log.exception("warm-up: the first %s move on %s failed", side, name)
                continue
            played.append(f"{name} {side}")
    return played
