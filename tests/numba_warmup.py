"""Compile the MCTS kernel and Alpha-Beta's compiled search (numba, ``cache=True``) once,
into numba's on-disk cache.

tests/conftest.py starts this script in the background when a test session starts; tests
that run the kernel (in the test process or in ``yard`` subprocesses) wait for it to end
and then load the compiled code from the cache. On a fresh clone the cache is empty and
compiling costs about a minute of CPU (65 CPU-s on 2 cores): without this, every test
worker and every subprocess that got there first would compile it again at the same time.

Run by hand: ``.venv/bin/python -m tests.numba_warmup``. (As a module: run as a file, its
folder would come first on ``sys.path`` and the test folders ``tests/bots``, ``tests/game``
would stand in for the packages of those names.)
"""

from __future__ import annotations

import random

import numpy as np

from bots.alphabeta import AlphaBetaBot
from bots.mcts import kernel as K
from bots.mcts.bot import MctsBot
from bots.mcts.compact import compact_state, move_key, to_move
from game import BUILTIN, State, load_ruleset, new_game


def _position(name: str, seed: int) -> State:
    rng = random.Random(seed)
    state = new_game(name, seed)
    for _ in range(rng.randrange(4, 12)):
        nxt = state.apply_unchecked(rng.choice(state.legal_moves()))
        if nxt.outcome is not None:
            break
        state = nxt
    return state


def warm() -> None:
    for name in ("grid5", "classic"):
        state = _position(name, 1)
        mrx = state
        while mrx.to_move != 0:
            mrx = mrx.apply_unchecked(mrx.legal_moves()[0])
        det = state
        while det.to_move == 0:
            det = det.apply_unchecked(det.legal_moves()[0])
        for position in (mrx, det):
            for profile in ("baseline", "tuned"):
                bot = MctsBot(seed=1, iterations=64, profile=profile)
                bot.choose(position.view(position.to_move), position.legal_moves())
            searcher = AlphaBetaBot(seed=1, depth=2, profile="kernel")
            searcher.choose(position.view(position.to_move), position.legal_moves())
    # The kernel's entry points as tests/bots/test_kernel.py calls them.
    for name in BUILTIN:
        rules = load_ruleset(name)
        tb = K.tables_for(rules)
        size = K.max_bound_from(tb)
        out = np.zeros((size, 4), np.int32)
        st = compact_state(new_game(rules, 3))
        n = K.search_moves(tb, st, out, False)
        K.apply_move(tb, st, *move_key(to_move(out[0])))
        K.random_playouts(tb, compact_state(new_game(rules, 3)), 4, 0.2, True, 7)
        fresh = compact_state(new_game(rules, 3))
        K.search_moves(tb, fresh, out, True)
        K.step(tb, fresh, out, 0, True)
        K.new_round(tb, st)
        assert n > 0


if __name__ == "__main__":
    warm()
