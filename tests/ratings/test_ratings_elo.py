"""Elo by maximum likelihood: hand-computed cases, symmetry, order invariance, anchor,
convergence, per-role ratings, and conversion of database rows."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import pytest

from game import Termination, Winner
from ratings.elo import ELO_PER_NAT, expected_mrx_score, fit_elo
from ratings.outcomes import GameOutcome, RatingsError, from_results, split_by_ruleset


def logit(p: float) -> float:
    return math.log(p / (1 - p))


def games(mrx: str, det: str, wins: int, losses: int, ruleset: str = "grid5",
          pair: str | None = None) -> list[GameOutcome]:
    return ([GameOutcome(mrx, det, True, pair, ruleset)] * wins
            + [GameOutcome(mrx, det, False, pair, ruleset)] * losses)


def simulate(truth: dict[str, float], advantage: float, per_pairing: int, seed: int,
             roles: dict[str, tuple[float, float]] | None = None) -> list[GameOutcome]:
    """Every ordered pairing plays ``per_pairing`` games drawn from the model."""
    rng = random.Random(seed)
    out = []
    for mrx in truth:
        for det in truth:
            if mrx == det:
                continue
            m = roles[mrx][0] if roles else truth[mrx]
            d = roles[det][1] if roles else truth[det]
            p = expected_mrx_score(m, d, advantage)
            out += [GameOutcome(mrx, det, rng.random() < p, None, "grid5")
                    for _ in range(per_pairing)]
    return out


def test_two_players_closed_form_with_advantage() -> None:
    # a hunts b: Mister X (a) wins 7 of 10; b hunts a: Mister X (b) wins 4 of 10.
    # logit(0.7) = Ra - Rb + A and logit(0.4) = Rb - Ra + A (in natural units).
    data = games("a", "b", 7, 3) + games("b", "a", 4, 6)
    fit = fit_elo(data, prior_sd=math.inf)
    gap = (logit(0.7) - logit(0.4)) / 2 * ELO_PER_NAT
    advantage = (logit(0.7) + logit(0.4)) / 2 * ELO_PER_NAT
    assert fit.ratings["a"] - fit.ratings["b"] == pytest.approx(gap, abs=1e-6)
    assert fit.mrx_advantage == pytest.approx(advantage, abs=1e-6)
    assert fit.ratings["a"] == pytest.approx(gap / 2, abs=1e-6)  # mean anchor
    assert fit.anchor == "mean"


def test_balanced_roles_give_no_advantage_and_the_plain_elo_gap() -> None:
    # a wins 3 of 4 in both roles: P = 0.75 = 1/(1 + 10^(-Δ/400)), Δ = 400·log10(3).
    data = games("a", "b", 3, 1) + games("b", "a", 1, 3)
    fit = fit_elo(data, prior_sd=math.inf)
    assert fit.mrx_advantage == pytest.approx(0.0, abs=1e-6)
    assert fit.ratings["a"] - fit.ratings["b"] == pytest.approx(400 * math.log10(3), abs=1e-6)


def test_tiny_prior_barely_moves_a_finite_estimate() -> None:
    data = games("a", "b", 7, 3) + games("b", "a", 4, 6)
    exact, ridged = fit_elo(data, prior_sd=math.inf), fit_elo(data)
    assert ridged.ratings["a"] == pytest.approx(exact.ratings["a"], abs=2.0)
    assert ridged.mrx_advantage == pytest.approx(exact.mrx_advantage, abs=2.0)


def test_undefeated_player_stays_finite_and_ahead() -> None:
    data = games("a", "b", 10, 0) + games("b", "a", 0, 10)
    fit = fit_elo(data)
    assert math.isfinite(fit.ratings["a"]) and fit.ratings["a"] > fit.ratings["b"] + 400
    assert fit.ratings["a"] < 3000


def test_swapping_names_swaps_ratings() -> None:
    data = simulate({"x": 0, "y": 150, "z": -100}, 80, 30, seed=3)
    rename = {"x": "y", "y": "z", "z": "x"}
    renamed = [GameOutcome(rename[g.mrx], rename[g.detectives], g.mrx_won, g.pair, g.ruleset)
               for g in data]
    fit, fit_renamed = fit_elo(data), fit_elo(renamed)
    for old, new in rename.items():
        assert fit_renamed.ratings[new] == pytest.approx(fit.ratings[old], abs=1e-6)
        assert fit_renamed.mrx_ratings[new] == pytest.approx(fit.mrx_ratings[old], abs=1e-6)
    assert fit_renamed.mrx_advantage == pytest.approx(fit.mrx_advantage, abs=1e-6)


def test_mirrored_results_negate_ratings_and_advantage() -> None:
    # Flip every result: Mister X's wins become losses; ratings and advantage change sign.
    data = simulate({"x": 0, "y": 150, "z": -100}, 80, 30, seed=4)
    flipped = [GameOutcome(g.detectives, g.mrx, g.mrx_won, g.pair, g.ruleset) for g in data]
    flipped = [GameOutcome(g.mrx, g.detectives, not g.mrx_won, g.pair, g.ruleset)
               for g in flipped]
    fit, fit_flipped = fit_elo(data), fit_elo(flipped)
    assert fit_flipped.mrx_advantage == pytest.approx(-fit.mrx_advantage, abs=1e-6)
    for name in fit.players:
        assert fit_flipped.ratings[name] == pytest.approx(fit.ratings[name], abs=1e-6)


def test_order_of_games_does_not_matter() -> None:
    data = simulate({"x": 0, "y": 150, "z": -100}, 80, 20, seed=5)
    shuffled = list(data)
    random.Random(9).shuffle(shuffled)
    assert fit_elo(shuffled) == fit_elo(data)


def test_error_shrinks_as_games_grow() -> None:
    truth = {"p": 0.0, "q": 200.0, "r": -150.0, "s": 400.0}
    errors = []
    for per_pairing in (20, 2000):
        fit = fit_elo(simulate(truth, 100.0, per_pairing, seed=11))
        centred = {k: v - sum(truth.values()) / len(truth) for k, v in truth.items()}
        errors.append(max(abs(fit.ratings[k] - centred[k]) for k in truth)
                      + abs(fit.mrx_advantage - 100.0))
    assert errors[1] < errors[0] / 3
    assert errors[1] < 40


def test_random_is_the_anchor_when_present() -> None:
    data = simulate({"random": 0, "rush": 300, "greedy": 500}, 50, 20, seed=6)
    fit = fit_elo(data)
    assert fit.anchor == "random" and fit.ratings["random"] == 0.0
    mrx, det = fit.mrx_ratings["random"], fit.det_ratings["random"]
    assert mrx is not None and det is not None
    assert (mrx + det) / 2 == pytest.approx(0.0, abs=1e-9)
    assert fit_elo(data, anchor="rush").ratings["rush"] == 0.0
    with pytest.raises(RatingsError, match="anchor 'nobody'"):
        fit_elo(data, anchor="nobody")


def test_mean_anchor_without_random() -> None:
    fit = fit_elo(simulate({"a": 0, "b": 300, "c": 500}, 50, 20, seed=6))
    assert sum(fit.ratings.values()) == pytest.approx(0.0, abs=1e-6)


def test_per_role_ratings_recover_role_strengths() -> None:
    # "hider" is strong as Mister X and weak as a detective; "seeker" the other way round.
    roles = {"hider": (300.0, -300.0), "seeker": (-300.0, 300.0), "plain": (0.0, 0.0)}
    data = simulate({k: 0.0 for k in roles}, 0.0, 1500, seed=8, roles=roles)
    fit = fit_elo(data, anchor="plain")
    for name, (mrx, det) in roles.items():
        assert fit.mrx_ratings[name] == pytest.approx(mrx, abs=60)
        assert fit.det_ratings[name] == pytest.approx(det, abs=60)
    assert abs(fit.ratings["hider"] - fit.ratings["seeker"]) < 60


def test_a_role_never_played_has_no_rating() -> None:
    fit = fit_elo(games("a", "team+x", 3, 2) + games("b", "team+x", 1, 4))
    assert fit.mrx_ratings["team+x"] is None and fit.det_ratings["a"] is None
    assert fit.det_ratings["team+x"] is not None


def test_bad_selections_are_rating_errors() -> None:
    with pytest.raises(RatingsError, match="no decided games"):
        fit_elo([])
    from ratings.leaderboard import leaderboard

    with pytest.raises(RatingsError, match="several rulesets"):
        leaderboard(games("a", "b", 1, 1, "grid5") + games("b", "a", 1, 1, "dash"))


@dataclass
class Row:
    ruleset: str
    mrx_player: str
    detective_player: str
    winner: object
    pair_key: str | None
    termination: Termination = Termination.CAUGHT


def test_result_rows_convert_and_aborted_games_are_counted() -> None:
    rows = [Row("grid5", "a", "b", Winner.MRX, "t/p0"),
            Row("grid5", "b", "a", "detectives", "t/p0"),
            Row("grid5", "a", "b", None, None), Row("dash", "a", "b", None, None),
            Row("dash", "a", "b", Winner.DETECTIVES, None)]
    conversion = from_results(rows)
    assert conversion.excluded == 2
    assert conversion.excluded_by_ruleset == {"grid5": 1, "dash": 1}
    assert [g.mrx_won for g in conversion.games] == [True, False, False]
    assert conversion.games[0] == GameOutcome("a", "b", True, "t/p0", "grid5")
    assert list(split_by_ruleset(conversion.games)) == ["dash", "grid5"]
    with pytest.raises(RatingsError, match="unknown winner"):
        from_results([Row("grid5", "a", "b", "draw", None)])
