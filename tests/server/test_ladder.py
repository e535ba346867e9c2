"""The ladder's matchmaking and live ratings (server/ladder.py, ratings/live.py), pure."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from game import Termination, Winner
from ratings.live import LiveRatings
from server.ladder import Ladder, LadderGame, Result, ladder_id, ladder_rules


def _ladder(names: list[str], *, placement: int = 0, rules: tuple[str, ...] = ("grid5",)
            ) -> Ladder:
    ladder = Ladder(rules, placement=placement, rng=random.Random(7))
    for name in names:
        ladder.join(name, rules)
    return ladder


def _win(ladder: Ladder, game: LadderGame, winner: str) -> None:
    ladder.result(Result(game.rules, game.mrx, game.detective,
                         Winner.MRX if winner == game.mrx else Winner.DETECTIVES,
                         Termination.CAUGHT if winner == game.detective
                         else Termination.SURVIVED), 0.0)


def test_ids_name_the_ruleset() -> None:
    assert ladder_rules(ladder_id("grid5")) == "grid5"
    assert ladder_rules("abc123") is None and ladder_rules(None) is None


def test_live_ratings_move_towards_the_winner_and_grow_surer() -> None:
    live = LiveRatings()
    for _ in range(20):
        live.record("a", "b", winner_is_first=True)
    a, b = live.rating("a"), live.rating("b")
    assert a.mu > 25 > b.mu and a.sigma < 25 / 3 and a.games == 20
    assert live.win_probability("a", "b") > 0.9
    assert live.quality("a", "b") < live.quality("a", "a")
    assert [name for name, _ in live.ranked()] == ["a", "b"]
    live.record("a", "b", winner_is_first=None)  # no winner: nothing changes
    assert live.rating("a") == a


def test_a_pair_is_role_swapped_from_one_deal_and_its_second_game_waits_for_free_bots(
        ) -> None:
    ladder = _ladder(["a", "b"])
    first = ladder.propose({"a": 1, "b": 1})
    assert len(first) == 1 and ladder.pending
    (game,) = first
    (second,) = ladder.pending
    assert (second.mrx, second.detective) == (game.detective, game.mrx)
    assert second.seed == game.seed and second.mrx_seed != game.mrx_seed
    assert ladder.propose({"a": 0, "b": 1}) == []  # a is still playing
    _win(ladder, game, game.mrx)
    assert ladder.propose({"a": 1, "b": 1}) == [second] and not ladder.pending


def test_both_games_of_a_pair_start_at_once_when_both_bots_have_two_slots() -> None:
    ladder = _ladder(["a", "b"])
    games = ladder.propose({"a": 2, "b": 2})
    assert len(games) == 2 and not ladder.pending
    assert {(g.mrx, g.detective) for g in games} == {("a", "b"), ("b", "a")}


def test_a_bot_that_leaves_drops_its_waiting_second_game() -> None:
    ladder = _ladder(["a", "b", "c"])
    (game,) = [g for g in ladder.propose({"a": 1, "b": 1}) if g.leg == 1]
    ladder.left(game.mrx)
    assert not ladder.pending


def test_no_slot_is_overbooked_and_busy_bots_are_not_offered() -> None:
    ladder = _ladder([f"b{i}" for i in range(7)])
    free = {f"b{i}": 1 + i % 3 for i in range(7)}
    games = ladder.propose(free)
    used = Counter(n for g in games for n in {g.mrx, g.detective})
    assert games and all(used[n] <= free[n] for n in used)
    assert all(g.mrx != g.detective for g in games)


def test_placement_spreads_a_new_bot_over_the_ladder() -> None:
    names = [f"b{i}" for i in range(9)]
    ladder = _ladder(names)
    for i, a in enumerate(names):  # a settled ladder: b0 best ... b8 worst
        for b in names[i + 1:]:
            for _ in range(3):
                ladder.ratings["grid5"].record(a, b, winner_is_first=True)
    ladder.placement = 5
    ladder.join("new", ["grid5"])
    seen: list[str] = []
    for _ in range(5):
        free = {n: 1 for n in names} | {"new": 1}
        games = [g for g in ladder.propose(free) if "new" in (g.mrx, g.detective)]
        assert len(games) == 1
        game = games[0]
        seen.append(game.detective if game.mrx == "new" else game.mrx)
        ladder.pending.clear()
        ladder.ratings["grid5"].record("new", "b0", winner_is_first=False)  # one game
    ranks = sorted(int(n[1:]) for n in seen)
    assert ranks[0] <= 2 and ranks[-1] >= 6  # both ends of the ladder, not one place


def test_after_placement_opponents_are_near_in_rating_and_no_pair_is_overplayed() -> None:
    names = [f"b{i}" for i in range(8)]
    ladder = _ladder(names)
    strength = {n: i for i, n in enumerate(names)}  # b7 strongest
    rng = random.Random(3)
    for _ in range(600):
        games = ladder.propose({n: 1 for n in names})
        ladder.pending.clear()
        for game in games:
            p_mrx = 1 / (1 + 10 ** ((strength[game.detective] - strength[game.mrx]) / 2))
            _win(ladder, game, game.mrx if rng.random() < p_mrx else game.detective)
    order = [n for n, _ in ladder.ratings["grid5"].ranked()]
    assert order[:2] == ["b7", "b6"] or order[0] == "b7"
    met = ladder.meetings
    neighbours = sum(met[("grid5", f"b{i}", f"b{i + 1}")] for i in range(7))
    far = sum(met[("grid5", f"b{i}", f"b{i + 5}")] for i in range(3))
    assert neighbours / 7 > far / 3  # near ratings meet more often than far ones
    counts = [met[k] for k in met]
    assert max(counts) <= 4 * (sum(counts) / len(counts))  # no pair played much more


def test_repeated_forfeits_pause_a_bot_with_its_reason_for_a_while() -> None:
    ladder = _ladder(["good", "bad", "other"])
    ladder.pause_s = 100.0

    def forfeit(now: float) -> str | None:
        return ladder.result(Result("grid5", "bad", "good", Winner.DETECTIVES,
                                    Termination.TIMEOUT, "bad"), now)

    reasons = [forfeit(10.0) for _ in range(3)]
    assert reasons[:2] == [None, None] and reasons[2] is not None
    assert "until 1970-01-01T00:01:50+00:00 (100 s) after 3 forfeits in a row (last: timeout)" \
        in reasons[2]
    free = {"good": 4, "bad": 4, "other": 4}
    assert all("bad" not in (g.mrx, g.detective) for g in ladder.propose(free, 50.0))
    ladder.pending.clear()
    ladder.join("bad", ["grid5"])  # a reconnect does not lift the pause
    row = next(r for r in ladder.standings("grid5", now=60.0) if r["name"] == "bad")
    assert row["paused"] == reasons[2] and row["forfeits"] == {"timeout": 3}
    assert ladder.paused("bad", 110.0) is None  # the pause is over
    assert any("bad" in (g.mrx, g.detective) for g in ladder.propose(free, 110.0))
    again = [forfeit(120.0) for _ in range(3)]
    assert again[2] is not None and "200 s" in again[2]  # doubled: a second pause in a row


def test_a_clean_game_resets_the_forfeit_count() -> None:
    ladder = _ladder(["a", "b"])
    for _ in range(2):
        ladder.result(Result("grid5", "a", "b", Winner.DETECTIVES, Termination.TIMEOUT, "a"),
                      0.0)
    ladder.result(Result("grid5", "a", "b", Winner.MRX, Termination.SURVIVED), 0.0)
    ladder.result(Result("grid5", "a", "b", Winner.DETECTIVES, Termination.TIMEOUT, "a"), 0.0)
    assert ladder.entrants["a"].paused is None and ladder.entrants["a"].forfeits_in_a_row == 1


def test_aborted_games_are_not_rated() -> None:
    ladder = _ladder(["a", "b"])
    assert ladder.result(Result("grid5", "a", "b", None, Termination.ABORTED), 0.0) is None
    assert ladder.rating("grid5", "a").games == 0


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        Ladder(["grid5"], pause_after=0)
