"""Tournament schedules: role-swapped pairs, formats, seeds, bad input."""

from __future__ import annotations

import pytest

from tournament.schedule import (
    Format,
    ScheduleError,
    bots_of,
    make_schedule,
    mrx_bot,
    team_members,
)


def test_round_robin_covers_every_ordered_pairing_once_per_pair() -> None:
    games = make_schedule(["a", "b", "c"], pairs=2, seed=1)
    assert len(games) == 3 * 2 * 2
    ordered = [(g.detectives, g.mrx) for g in games if g.pair_index == 0]
    assert sorted(ordered) == sorted((x, y) for x in "abc" for y in "abc" if x != y)
    assert [g.index for g in games] == list(range(len(games)))


def test_pairs_share_seed_and_swap_roles() -> None:
    games = make_schedule(["a", "b"], pairs=3, seed=5)
    by_key: dict[str, list[tuple[str, str, int | None]]] = {}
    for g in games:
        by_key.setdefault(g.pair_key, []).append((g.detectives, g.mrx, g.seed))
    assert len(by_key) == 3
    for (d1, m1, s1), (d2, m2, s2) in by_key.values():
        assert (d1, m1) == (m2, d2)
        assert s1 == s2
    assert len({g.seed for g in games}) == 3


def test_same_seed_same_schedule_other_seed_other_seeds() -> None:
    a = make_schedule(["x", "y", "z"], pairs=2, seed=11)
    assert a == make_schedule(["x", "y", "z"], pairs=2, seed=11)
    assert [g.seed for g in a] != [g.seed for g in make_schedule(["x", "y", "z"], 2, seed=12)]


def test_gauntlet_plays_first_bot_against_all_others() -> None:
    games = make_schedule(["hero", "a", "b"], pairs=1, seed=0, fmt=Format.GAUNTLET)
    assert len(games) == 4
    assert all("hero" in (g.mrx, g.detectives) for g in games)


def test_self_play_adds_games_with_one_player_in_both_roles() -> None:
    games = make_schedule(["a", "b"], pairs=1, seed=0, self_play=True)
    assert [(g.detectives, g.mrx) for g in games if g.mrx == g.detectives] == \
        [("a", "a"), ("b", "b")]


def test_team_specs() -> None:
    assert team_members("dqn+alphabeta") == ["dqn", "alphabeta"]
    assert mrx_bot("dqn+alphabeta") == "dqn"
    assert (mrx_bot("run2/rush+greedy"), team_members("run2/rush+greedy")) == \
        ("run2", ["rush", "greedy"])
    assert bots_of("run2/rush+run2") == ["run2", "rush"]
    games = make_schedule(["dqn+alphabeta", "mcts"], pairs=1, seed=0)
    assert {g.detectives for g in games} == {"dqn+alphabeta", "mcts"}


@pytest.mark.parametrize("players,pairs", [(["a"], 1), (["a", "a"], 1), (["a", "b"], 0),
                                           (["a", "b+"], 1), (["a", "/b"], 1), (["a", "x+y/b"], 1)])
def test_bad_schedules_raise_schedule_error(players: list[str], pairs: int) -> None:
    with pytest.raises(ScheduleError):
        make_schedule(players, pairs=pairs, seed=0)
