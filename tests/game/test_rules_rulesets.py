"""Rulesets: the five built-ins as documented, and TOML files with bad content."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from game import BUILTIN, RulesetError, Ticket, load_ruleset, new_game
from game.rules import ruleset_from_dict


def test_builtin_names() -> None:
    assert BUILTIN == ("classic", "bristol", "dash", "warwick", "grid5")
    assert all(load_ruleset(name).source for name in BUILTIN)


def test_classic() -> None:
    rules = load_ruleset("classic")
    assert rules.board.name == "london" and rules.detectives == 5
    assert (rules.min_detectives, rules.max_detectives) == (1, 5)
    assert rules.initial_detective_tickets() == (10, 8, 4, 0, 0)
    assert rules.initial_mrx_tickets() == (4, 3, 3, 5, 2)  # one secret per detective
    assert rules.with_detectives(3).initial_mrx_tickets()[Ticket.SECRET] == 3
    assert sorted(rules.reveal_moves) == [3, 8, 13, 18, 24] and rules.max_moves == 24
    assert rules.tickets_to_mrx and rules.double_moves and rules.secret_moves and rules.ferry


def test_bristol() -> None:
    rules = load_ruleset("bristol")
    assert rules.initial_detective_tickets() == (11, 8, 4, 0, 0)
    assert rules.with_detectives(2).initial_mrx_tickets() == (4, 3, 3, 5, 2)


def test_dash() -> None:
    rules = load_ruleset("dash")
    assert not rules.double_moves and not rules.ferry
    assert rules.initial_mrx_tickets()[Ticket.DOUBLE] == 0
    assert all(not rules.board.adjacency[3][s] for s in rules.board.stations)


def test_warwick() -> None:
    rules = load_ruleset("warwick")
    assert rules.detectives == 3
    assert rules.detective_tickets is None and rules.mrx_tickets is None
    assert not (rules.double_moves or rules.secret_moves or rules.ferry)


def test_grid5() -> None:
    rules = load_ruleset("grid5")
    assert rules.board.name == "grid5x5" and rules.detectives == 2
    assert sorted(rules.reveal_moves) == [3, 6, 9, 12, 15] and rules.max_moves == 15
    state = new_game(rules, seed=11)
    assert len(set(state.positions)) == 3  # random distinct start cells


def test_detective_count_out_of_range() -> None:
    with pytest.raises(RulesetError, match=r"allows 1\.\.5 detectives, not 6"):
        load_ruleset("classic").with_detectives(6)


def test_definition_round_trip() -> None:
    for name in BUILTIN:
        rules = load_ruleset(name)
        again = ruleset_from_dict(rules.definition())
        assert again.definition() == rules.definition()


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "custom.toml"
    path.write_text(text)
    return str(path)


def test_custom_ruleset_file(tmp_path: Path) -> None:
    rules = load_ruleset(write(tmp_path, 'extends = "classic"\nname = "short"\n'
                                         "max_moves = 10\nreveal_moves = [2, 10]\n"))
    assert rules.name == "short" and rules.max_moves == 10


def test_custom_ruleset_with_a_map_file_next_to_it(tmp_path: Path) -> None:
    (tmp_path / "tri.json").write_text(
        '{"name": "tri", "stations": 4, "edges": {"taxi": [[1, 2], [2, 3], [3, 4]]}}')
    rules = load_ruleset(write(tmp_path, 'name = "tri"\nboard = "tri.json"\ndetectives = 1\n'
                                         "reveal_moves = [1]\nmax_moves = 3\n"
                                         "random_starts = true\n"))
    assert rules.board.n_stations == 4


@pytest.mark.parametrize(("text", "message"), [
    ('extends = "classic"\nname = "x"\nreveal_moves = 3\n', "missing or invalid field"),
    ('extends = "classic"\nname = "x"\nreveal_moves = [30]\n', "reveal moves must lie"),
    ('extends = "classic"\nname = "x"\ncolour = "red"\n', "unknown keys"),
    ('extends = "chess"\nname = "x"\n', "unknown ruleset 'chess'"),
    ('name = "x"\nboard = "london"\n', "missing or invalid field"),
    ('extends = "classic"\nname = "x"\ndetective_tickets = { secret = 1 }\n',
     "detectives cannot hold secret"),
    ('extends = "classic"\nname = "x"\nmrx_tickets = { rocket = 1 }\n', "unknown ticket"),
    ('extends = "classic"\nname = "x"\nboard = "missing.json"\n', "cannot read map file"),
    ("name = [", "invalid TOML"),
])
def test_invalid_ruleset_files(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(RulesetError, match=message):
        load_ruleset(write(tmp_path, text))


def test_unknown_ruleset_name() -> None:
    with pytest.raises(RulesetError, match="unknown ruleset 'nope'"):
        load_ruleset("nope")


values = st.one_of(st.none(), st.booleans(), st.integers(-3, 30), st.text(max_size=8),
                   st.lists(st.integers(-1, 30), max_size=4),
                   st.dictionaries(st.sampled_from(["taxi", "bus", "secret", "x"]),
                                   st.integers(-1, 9), max_size=3))
keys = st.sampled_from(["name", "board", "detectives", "min_detectives", "max_detectives",
                        "detective_tickets", "mrx_tickets", "reveal_moves", "max_moves",
                        "double_moves", "secret_moves", "ferry", "random_starts", "extends",
                        "tickets_to_mrx", "bogus"])


@settings(max_examples=200)
@given(st.dictionaries(keys, values, max_size=8), st.booleans())
def test_fuzzed_ruleset_data_raises_only_ruleset_error(data: dict[str, object],
                                                       extend: bool) -> None:
    if extend:
        data = {"extends": "grid5", **data}
    with contextlib.suppress(RulesetError):
        ruleset_from_dict(data)
