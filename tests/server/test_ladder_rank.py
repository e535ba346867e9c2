"""The ladder's standings are ordered by the full-history Elo (ratings/ranking.py), not
by the live OpenSkill rating that matchmaking uses."""

from __future__ import annotations

import random

from game import Termination, Winner
from ratings.elo import fit_elo
from ratings.outcomes import GameOutcome
from server.ladder import Ladder, Result


def _result(mrx: str, det: str, mrx_won: bool) -> Result:
    return Result("grid5", mrx, det, Winner.MRX if mrx_won else Winner.DETECTIVES,
                  Termination.SURVIVED if mrx_won else Termination.CAUGHT)


def test_standings_follow_the_fit_and_keep_the_live_rating_beside_it() -> None:
    ladder = Ladder(["grid5"], rng=random.Random(1), rank_refresh_s=5.0)
    rng = random.Random(2)
    truth = {"a": 200.0, "b": 100.0, "c": 0.0}
    games = []
    for _ in range(600):
        mrx, det = rng.sample(list(truth), 2)
        won = rng.random() < 1 / (1 + 10 ** (-(truth[mrx] - truth[det]) / 400))
        ladder.result(_result(mrx, det, won), 0.0)
        games.append(GameOutcome(mrx, det, won, None, "grid5"))
    # then b wins ten in a row against a: the live rating jumps, the fit barely moves
    for k in range(10):
        mrx, det = ("b", "a") if k % 2 else ("a", "b")
        ladder.result(_result(mrx, det, mrx == "b"), 0.0)
        games.append(GameOutcome(mrx, det, mrx == "b", None, "grid5"))
    fit = fit_elo(games)
    expected = sorted(fit.ratings, key=lambda p: -fit.ratings[p])
    rows = ladder.standings("grid5", ["a"], now=0.0)
    assert [r["name"] for r in rows] == expected == ["a", "b", "c"]
    assert [r["rank"] for r in rows] == [1, 2, 3]
    live_order = [n for n, _ in ladder.ratings["grid5"].ranked()]
    for row in rows:
        assert row["elo"] == round(fit.ratings[str(row["name"])], 1)
        assert isinstance(row["elo_ci"], list) and len(row["elo_ci"]) == 2
        assert row["live_rank"] == live_order.index(str(row["name"])) + 1
        assert {"mu", "sigma", "ordinal", "games", "connected"} <= set(row)
    # polls within the refit interval show the same order whatever comes in
    ladder.result(_result("c", "a", True), 1.0)
    assert [r["name"] for r in ladder.standings("grid5", now=2.0)] == expected
    assert ladder.ranks["grid5"].stale


def test_a_bot_with_no_decided_game_is_ranked_below_the_fitted_ones() -> None:
    ladder = Ladder(["grid5"], rng=random.Random(1))
    ladder.join("new", ["grid5"])
    ladder.result(_result("a", "b", True), 0.0)
    rows = ladder.standings("grid5")
    assert [r["name"] for r in rows] == ["a", "b", "new"]
    assert rows[2]["elo"] is None and rows[2]["live_rank"] is None
