"""Boards: the London map's size and edge counts, grids, distances, bad map files."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from game import BoardError, Transport, grid_board, load_board
from game import board as board_module
from game.board import board_from_dict, board_to_dict, load_board_file

MAP_EXAMPLES = 200


def test_london_has_199_stations_and_the_reconciled_edge_counts() -> None:
    board = load_board("london")
    assert board.n_stations == 199
    counts = {t: board.edge_count(t) for t in Transport}
    assert counts == {Transport.TAXI: 346, Transport.BUS: 99, Transport.UNDERGROUND: 20,
                      Transport.FERRY: 3}
    assert board.adjacency[Transport.FERRY][115] == (108, 157)
    assert 14 in board.adjacency[Transport.TAXI][13]  # the contested 13-14 taxi edge is kept


def test_london_start_stations() -> None:
    board = load_board("london")
    assert len(board.detective_starts) == 16 and len(board.mrx_starts) == 13
    assert not set(board.detective_starts) & set(board.mrx_starts)


def test_adjacency_is_symmetric() -> None:
    board = load_board("london")
    for t in Transport:
        for s in board.stations:
            for d in board.adjacency[t][s]:
                assert s in board.adjacency[t][d]


def test_grid5_adjacency() -> None:
    board = load_board("grid5x5")
    assert board.is_grid and (board.width, board.height, board.n_stations) == (5, 5, 25)
    assert board.adjacency[Transport.TAXI][1] == (2, 6)
    assert board.adjacency[Transport.TAXI][13] == (8, 12, 14, 18)
    assert board.adjacency[Transport.TAXI][25] == (20, 24)
    assert board.adjacency[Transport.TAXI][5] == (4, 10)  # no wrap-around to 6
    assert board.edge_count(Transport.TAXI) == 2 * 5 * 4
    assert all(board.edge_count(t) == 0 for t in Transport if t is not Transport.TAXI)


def test_distances() -> None:
    board = load_board("london")
    assert board.distance(1, 8) == 1
    assert board.distance(1, 1) == 0
    assert board.distance(104, 52) == 2  # taxi 86 then bus 52
    assert board.distance(108, 115) > 1  # the ferry does not count
    grid = grid_board(5, 5)
    assert grid.distance(1, 25) == 8


def test_distances_without_numpy_are_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The slim client has no numpy: ``distance`` then searches from the first station
    (rows kept) and gives what the numpy table gives, for every London pair."""
    table = load_board("london").distances()
    monkeypatch.setattr(board_module, "_has_numpy", lambda: False)
    board = board_from_dict(json.loads(json.dumps(board_to_dict(load_board("london")))))
    assert [[board.distance(a, b) for b in board.stations] for a in board.stations] == \
        table[1:, 1:].tolist()
    assert not board._dist  # no numpy table was built


def test_bad_grid_sizes() -> None:
    with pytest.raises(BoardError, match="1x5"):
        grid_board(1, 5)


def test_unknown_board_name() -> None:
    with pytest.raises(BoardError, match="unknown board 'paris'"):
        load_board("paris")


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "must hold a JSON object"),
    ('{"name": "x", "stations": 3}', "missing or invalid field"),
    ('{"name": "x", "stations": 3, "edges": {"taxi": [[1, 2], [2, 9]]}}', "outside 1..3"),
    ('{"name": "x", "stations": 3, "edges": {"rocket": [[1, 2]]}}', "unknown transport"),
    ('{"name": "x", "stations": 3, "edges": {"taxi": [[1, 2]]}}', "without any edge"),
    ('{"name": "x", "stations": 3, "edges": {"taxi": 5}}', "list of station pairs"),
    ('{"name": "x", "stations": 2, "edges": {"taxi": [[1, 2]]}, "positions": {"1": 3}}',
     "positions"),
])
def test_malformed_map_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "map.json"
    path.write_text(content)
    with pytest.raises(BoardError, match=message) as info:
        load_board_file(path)
    assert str(path) in str(info.value)


def test_missing_map_file(tmp_path: Path) -> None:
    with pytest.raises(BoardError, match="cannot read map file"):
        load_board_file(tmp_path / "nope.json")


def test_a_small_custom_map_loads(tmp_path: Path) -> None:
    path = tmp_path / "tri.json"
    path.write_text(json.dumps({"name": "tri", "stations": 3,
                                "edges": {"taxi": [[1, 2], [2, 3]], "bus": [[1, 3]]}}))
    board = load_board_file(path)
    assert board.adjacency[Transport.BUS][3] == (1,)


pairs = st.lists(st.one_of(st.lists(st.integers(-1, 6), max_size=3), st.integers(), st.none()),
                 max_size=4)
map_values = st.one_of(st.none(), st.integers(-2, 8), st.text(max_size=5), pairs,
                       st.dictionaries(st.sampled_from(["taxi", "bus", "boat", "1"]), pairs,
                                       max_size=3),
                       st.dictionaries(st.sampled_from(["1", "2", "x"]),
                                       st.one_of(st.integers(), st.lists(st.integers(),
                                                                         max_size=3)),
                                       max_size=2))
map_keys = st.sampled_from(["name", "stations", "edges", "detective_starts", "mrx_starts",
                            "positions"])


@settings(max_examples=MAP_EXAMPLES)
@given(st.dictionaries(map_keys, map_values, max_size=6))
def test_fuzzed_map_data_raises_only_board_error(data: dict[str, object]) -> None:
    with contextlib.suppress(BoardError):
        board_from_dict(data)
