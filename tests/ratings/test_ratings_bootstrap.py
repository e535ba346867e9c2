"""Bootstrap intervals over role-swapped pairs, likelihood of superiority, the leaderboard
built from them, and the Wilson interval."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ratings.bootstrap import bootstrap, interval, superiority
from ratings.elo import expected_mrx_score
from ratings.leaderboard import Role, leaderboard
from ratings.outcomes import GameOutcome
from ratings.stats import wilson_interval


def paired_games(truth: dict[str, float], advantage: float, pairs: int, seed: int
                 ) -> list[GameOutcome]:
    """Role-swapped pairs for every two players, results drawn from the model."""
    rng = random.Random(seed)
    names = sorted(truth)
    out = []
    for number in range(pairs):
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                key = f"{a}|{b}|{number}"
                for mrx, det in ((a, b), (b, a)):
                    p = expected_mrx_score(truth[mrx], truth[det], advantage)
                    out.append(GameOutcome(mrx, det, rng.random() < p, key, "grid5"))
    return out


def test_interval_covers_the_truth_in_most_simulations() -> None:
    truth = {"random": 0.0, "strong": 200.0}
    covered = 0
    for seed in range(12):
        data = paired_games(truth, 100.0, 60, seed)
        board = leaderboard(data, samples=100, seed=seed)
        row = next(r for r in board.rows if r.player == "strong")
        assert row.ci is not None
        covered += row.ci[0] <= 200.0 <= row.ci[1]
    assert covered >= 9  # 95% nominal; P(covered < 9 of 12) is below 0.2%


def test_bootstrap_is_reproducible_and_depends_on_the_seed() -> None:
    data = paired_games({"a": 0.0, "b": 100.0, "c": -100.0}, 50.0, 10, seed=1)
    first = bootstrap(data, ["a", "b", "c"], 0, samples=30, seed=7)
    again = bootstrap(data, ["a", "b", "c"], 0, samples=30, seed=7)
    other = bootstrap(data, ["a", "b", "c"], 0, samples=30, seed=8)
    assert np.array_equal(first.overall, again.overall, equal_nan=True)
    assert not np.array_equal(first.overall, other.overall, equal_nan=True)


def test_bootstrap_ignores_game_order() -> None:
    data = paired_games({"a": 0.0, "b": 100.0}, 50.0, 10, seed=2)
    data += [GameOutcome("a", "b", True, None, "grid5"), GameOutcome("b", "a", True, None,
                                                                     "grid5")]
    shuffled = list(data)
    random.Random(3).shuffle(shuffled)
    assert leaderboard(shuffled, samples=40, seed=1) == leaderboard(data, samples=40, seed=1)


def test_pairs_are_resampled_together() -> None:
    # In every pair the same player wins both games, so any resample keeps each player's
    # Mister X and detective records equal: the advantage estimate is always 0.
    data = []
    for number in range(20):
        winner_is_a = number % 3 != 0
        key = f"a|b|{number}"
        data.append(GameOutcome("a", "b", winner_is_a, key, "grid5"))
        data.append(GameOutcome("b", "a", not winner_is_a, key, "grid5"))
    boot = bootstrap(data, ["a", "b"], None, samples=50, seed=4, prior_sd=float("inf"))
    assert np.allclose(boot.advantage, 0.0, atol=1e-6)


def test_superiority_between_neighbours() -> None:
    data = paired_games({"random": 0.0, "strong": 400.0, "twin": 400.0}, 0.0, 40, seed=5)
    board = leaderboard(data, samples=100, seed=2)
    assert [r.player for r in board.rows][-1] == "random"
    top, second, last = board.rows
    assert second.superiority is not None and second.superiority > 0.97
    assert top.superiority is not None and 0.3 < top.superiority < 0.95
    assert last.superiority is None


def test_superiority_and_interval_helpers() -> None:
    assert superiority(np.array([2.0, 1.0, np.nan]), np.array([1.0, 1.0, 5.0])) == 0.75
    assert superiority(np.array([np.nan]), np.array([1.0])) is None
    assert interval(np.array([np.nan])) is None
    low, high = interval(np.arange(101.0)) or (0.0, 0.0)
    assert (low, high) == pytest.approx((2.5, 97.5))


def test_role_leaderboard_sorts_by_role_and_drops_players_without_it() -> None:
    data = [GameOutcome("a", "team", True, None, "grid5"),
            GameOutcome("b", "team", False, None, "grid5"),
            GameOutcome("a", "b", True, None, "grid5")] * 3
    board = leaderboard(data, role=Role.MRX, samples=20)
    assert [r.player for r in board.rows] == ["a", "b"]
    det = leaderboard(data, role=Role.DETECTIVES, samples=20)
    assert [r.player for r in det.rows] == ["team", "b"]
    row = det.rows[0]
    assert (row.as_det.games, row.as_det.wins, row.as_mrx.games) == (6, 3, 0)
    assert det.to_dict()["rows"][0]["detective_wins"] == 3


@pytest.mark.parametrize(("k", "n", "expected"), [
    (5, 10, (0.236593, 0.763407)),
    (0, 10, (0.0, 0.277528)),
    (10, 10, (0.722472, 1.0)),
    (81, 263, (0.255, 0.366)),
    (0, 0, (0.0, 1.0)),
])
def test_wilson_interval_known_values(k: int, n: int, expected: tuple[float, float]) -> None:
    assert wilson_interval(k, n) == pytest.approx(expected, abs=1e-3)


def test_wilson_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError, match="3/2"):
        wilson_interval(3, 2)


def test_one_pair_gives_every_replicate_the_fit_of_the_pair_itself() -> None:
    """With one role-swapped pair every resample is that pair (fitted once, reused): each
    replicate is exactly the fit of the two games."""
    from ratings.elo import DEFAULT_PRIOR_SD, fit_cells, ridge_for, tabulate

    players = ["greedy", "random"]
    games = [GameOutcome("greedy", "random", True, "p0", "grid5"),
             GameOutcome("random", "greedy", False, "p0", "grid5")]
    samples = bootstrap(games, players, 0, samples=50, seed=1)
    direct = fit_cells(tabulate(games, players), 2, 0, ridge_for(DEFAULT_PRIOR_SD))
    for replicates, fitted in ((samples.overall, direct.overall), (samples.mrx, direct.mrx),
                               (samples.det, direct.det)):
        assert replicates.shape == (50, 2)
        assert all(np.array_equal(row, fitted, equal_nan=True) for row in replicates)
    assert np.all(samples.advantage == direct.advantage)
