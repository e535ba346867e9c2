"""The ladder's shown rank (ratings/ranking.py): the full-history ML Elo, equal to the
offline fit, refitted only when games came in and its interval has passed."""

from __future__ import annotations

import random

import pytest

from ratings.elo import fit_elo
from ratings.outcomes import GameOutcome
from ratings.ranking import Ranking

TRUTH = {"alphabeta": 300.0, "mcts": 150.0, "greedy": 0.0, "random": -300.0}


def _history(seed: int, games: int) -> list[GameOutcome]:
    """Random pairings drawn from the Elo model (Mister X advantage 80)."""
    rng = random.Random(seed)
    names = list(TRUTH)
    out = []
    for _ in range(games):
        a, b = rng.sample(names, 2)
        p = 1 / (1 + 10 ** (-(TRUTH[a] - TRUTH[b] + 80) / 400))
        out.append(GameOutcome(a, b, rng.random() < p, None, "grid5"))
    return out


def _ranking(games: list[GameOutcome], refresh_s: float = 0.0) -> Ranking:
    ranking = Ranking(refresh_s)
    for game in games:
        ranking.record(game.mrx, game.detectives, game.mrx_won)
    return ranking


def test_an_unambiguous_history_is_ranked_as_the_offline_fit() -> None:
    games = _history(1, 2000)
    ranking = _ranking(games)
    assert ranking.refresh(None)
    fit = fit_elo(games)
    rows = ranking.rows()
    assert [r.name for r in rows] == ["alphabeta", "mcts", "greedy", "random"]
    assert [r.name for r in rows] == sorted(fit.ratings, key=lambda p: -fit.ratings[p])
    for row in rows:
        assert row.elo == pytest.approx(fit.ratings[row.name], abs=1e-6)
        assert row.games == sum(row.name in (g.mrx, g.detectives) for g in games)
        if row.name == "random":  # the anchor: 0 by definition
            assert row.ci is None and row.elo == pytest.approx(0.0, abs=1e-9)
        else:
            assert row.ci is not None and row.ci[0] < row.elo < row.ci[1]
    assert [r.rank for r in rows] == [1, 2, 3, 4]


def test_the_rank_holds_across_polls_while_new_games_leave_the_fit_order_alone() -> None:
    games = _history(2, 1500)
    ranking = _ranking(games, refresh_s=2.0)
    ranking.refresh(0.0)
    first = [r.name for r in ranking.rows()]
    rng = random.Random(3)
    for poll in range(1, 41):
        # mcts beats alphabeta every time: a live rating would move, the fit over
        # everything does not
        mrx, det = rng.choice([("mcts", "alphabeta"), ("alphabeta", "mcts")])
        games.append(GameOutcome(mrx, det, mrx == "mcts", None, "grid5"))
        ranking.record(mrx, det, mrx == "mcts")
        fit = fit_elo(games)
        assert sorted(fit.ratings, key=lambda p: -fit.ratings[p]) == first
        ranking.refresh(poll * 1.0)
        assert [r.name for r in ranking.rows()] == first
    assert ranking.fits == 21  # the first, then one every 2 s of the 40 polls


def test_a_refit_waits_for_new_games_and_for_its_interval() -> None:
    ranking = _ranking(_history(4, 300), refresh_s=10.0)
    assert ranking.stale and ranking.refresh(100.0) and not ranking.stale
    assert not ranking.refresh(200.0)  # nothing new
    ranking.record("greedy", "random", True)
    ranking.record("greedy", "greedy", True)  # a bot against itself: not counted
    ranking.record("greedy", "random", None)  # no winner: not counted
    assert not ranking.refresh(105.0) and ranking.stale  # too soon
    assert ranking.refresh(110.0) and ranking.fits == 2
    assert ranking.refresh(None) is False  # nothing new


def test_a_refit_starts_from_the_last_and_lands_on_the_same_fit() -> None:
    games = _history(5, 1200)
    warm = _ranking(games[:600])
    warm.refresh(None)
    for game in games[600:]:
        warm.record(game.mrx, game.detectives, game.mrx_won)
    warm.refresh(None)
    cold = _ranking(games)
    cold.refresh(None)
    assert [(r.name, round(r.elo, 6)) for r in warm.rows()] == [
        (r.name, round(r.elo, 6)) for r in cold.rows()]
