"""Lazy views (issue 27): :meth:`State.view` builds the travel log and possible set only
when read, from the state's public trail. They must equal the eager views field for field,
hold no reference to the state, and carry no hidden station; the arena's games must not
change."""

from __future__ import annotations

import gc
import hashlib
import pickle
import random
from dataclasses import fields

import pytest

from bots.arena import play_game
from bots.registry import make_bot
from game import BUILTIN, DetectiveView, MrXView, State, View, from_text, load_ruleset, new_game
from game.views import PublicTrail, detective_view, mrx_view, view_dict


def _random_states(rules: str, seed: int) -> list[State]:
    rng = random.Random(seed)
    state = new_game(rules, seed)
    states = [state]
    while state.outcome is None:
        state = state.apply_unchecked(rng.choice(state.legal_moves()))
        states.append(state)
    return states


def _eager(state: State, seat: int | None) -> View:
    return mrx_view(state) if seat == 0 else detective_view(state, seat)


def _values(view: View) -> tuple[object, ...]:
    return tuple(getattr(view, f.name) for f in fields(view))


@pytest.mark.parametrize("rules", sorted(BUILTIN))
def test_lazy_views_equal_eager_ones_on_seeded_games(rules: str) -> None:
    for seed in range(6):
        states = _random_states(rules, seed)
        # Read views of some states only (the trail fills the gaps), in a shuffled order.
        picked = random.Random(seed).sample(states, k=max(1, len(states) // 3))
        for state in picked:
            for seat in (0, *range(1, state.n_detectives + 1), None):
                lazy = state.view(seat)
                eager = _eager(state, seat)
                assert isinstance(lazy, MrXView) == (seat == 0)
                assert isinstance(lazy, DetectiveView) == (seat != 0)
                assert _values(lazy) == _values(eager)
                assert lazy == eager and eager == lazy and hash(lazy) == hash(eager)
                assert lazy.to_dict() == eager.to_dict()


def test_eager_views_agree_with_a_fresh_chain() -> None:
    # The eager builders read the same memo; check them against a from-scratch state too.
    for seed in range(4):
        final = _random_states("classic", seed)[-1]
        again = from_text(final.to_text())
        for seat in (0, 1, None):
            assert state_dict(final, seat) == state_dict(again, seat)


def state_dict(state: State, seat: int | None) -> dict[str, object]:
    return state.view(seat).to_dict()


def _reachable(root: object, limit: int = 200_000) -> list[object]:
    """Every object reachable from ``root`` (gc referents, transitively)."""
    seen: dict[int, object] = {id(root): root}
    todo = [root]
    while todo:
        for ref in gc.get_referents(todo.pop()):
            if id(ref) not in seen and not isinstance(ref, type):
                seen[id(ref)] = ref
                todo.append(ref)
                assert len(seen) < limit
    return list(seen.values())


@pytest.mark.parametrize("rules", ["classic", "grid5", "dash"])
def test_detective_views_reach_no_state_and_no_hidden_station(rules: str) -> None:
    reveals = load_ruleset(rules).reveal_moves
    for seed in range(3):
        for state in _random_states(rules, seed)[::3]:
            for seat in (1, None):
                view = state.view(seat)
                found = _reachable(view)
                assert not any(isinstance(obj, State) for obj in found)
                assert not hasattr(view, "mrx") and "mrx" not in view.to_dict()
                for node in (obj for obj in found if isinstance(obj, PublicTrail)):
                    start = sum(len(n.entries) for n in _ancestors(node)) - len(node.entries)
                    for slot, (_, station) in enumerate(node.entries, start=start + 1):
                        assert (station is not None) == (slot in reveals)


def _ancestors(node: PublicTrail) -> list[PublicTrail]:
    out = []
    walk: PublicTrail | None = node
    while walk is not None:
        out.append(walk)
        walk = walk.parent
    return out


def test_lazy_views_pickle_and_replace_as_eager_views() -> None:
    import dataclasses

    state = _random_states("classic", 3)[9]
    for seat in (0, 2, None):
        view = state.view(seat)
        back = pickle.loads(pickle.dumps(view))
        assert type(back) in (MrXView, DetectiveView)  # the eager type, no trail
        assert back.to_dict() == view.to_dict()
        assert "_trail" not in vars(back)
        moved = dataclasses.replace(view, seat=seat)
        assert moved == view


def test_views_build_nothing_until_read() -> None:
    state = _random_states("classic", 5)[12]
    view = state.view(1)
    trail = state.public_trail()
    assert trail._possible is None and trail._shown is None  # nothing built yet
    assert view.possible == detective_view(state, 1).possible
    assert trail._possible is not None


# Digests of the moves of seeded arena games, recorded before views became lazy.
ARENA_GOLDEN = {
    ("classic", "random", "random"): "c35eaba15cb18f07",
    ("classic", "run", "rush"): "d4a06b6a20843f17",
    ("grid5", "random", "random"): "5be94b7b51bc7965",
    ("grid5", "run2", "greedy"): "8af3f7e1b46e8467",
    ("dash", "run", "rush"): "7de15cbd345d2217",
}


@pytest.mark.parametrize(("rules", "mrx", "det"), sorted(ARENA_GOLDEN))
def test_arena_games_are_unchanged(rules: str, mrx: str, det: str) -> None:
    digest = hashlib.sha256()
    for seed in range(20):
        result = play_game(rules, make_bot(mrx, seed=1), [make_bot(det, seed=2)], seed=seed)
        digest.update(repr([(s, str(m)) for s, m in result.moves]).encode())
        digest.update(result.outcome.termination.value.encode())
    assert digest.hexdigest()[:16] == ARENA_GOLDEN[rules, mrx, det]


def test_the_trail_node_is_the_view_of_the_detective_to_move() -> None:
    for state in _random_states("classic", 7)[1:30]:
        view = state.view(state.to_move)
        if state.to_move == 0:
            assert isinstance(view, MrXView)
            assert state.public_trail().seat is None  # a spectator's view
        else:
            assert view is state.public_trail() and view.seat == state.to_move
        assert view == _eager(state, state.to_move)
        with pytest.raises(TypeError):
            _ = view < view  # type: ignore[operator]  # views are not ordered


def test_wire_views_are_built_on_first_read_and_equal_eager_ones() -> None:
    from game.views import lazy_view_from_dict, view_from_dict

    for state in _random_states("classic", 2)[::7]:
        for seat in (0, 1, None):
            data = state.view(seat).to_dict()
            lazy = lazy_view_from_dict(data, state.rules)
            assert "_wire" in vars(lazy) and "possible" not in vars(lazy)
            eager = view_from_dict(data, state.rules)
            assert isinstance(lazy, MrXView) == (seat == 0)
            assert lazy == eager and eager == lazy and hash(lazy) == hash(eager)
            assert _values(lazy) == _values(eager) and "_wire" not in vars(lazy)
            again = lazy_view_from_dict(data, state.rules)
            assert pickle.loads(pickle.dumps(again)).to_dict() == data


def test_the_client_skips_update_and_move_ok_frames_unparsed() -> None:
    from bots.client import read_frame

    assert read_frame('{"type":"update","game":"g","turn":1}') is None
    assert read_frame(b'{"type":"move_ok","game":"g"}') is None


def test_a_views_dict_is_the_callers_to_change() -> None:
    """Log entries are shared by every game of a process: a caller that changes the dict
    it got (the replay page adds ``reveal``) must not change another game's views."""
    for seat in (0, None):
        first = new_game("grid5", seed=1)
        first = first.apply(first.legal_moves()[0])
        for entry in first.view(seat).to_dict()["log"]:
            entry["reveal"] = True
            entry["station"] = -1
        second = new_game("grid5", seed=1)
        second = second.apply(second.legal_moves()[0])
        shown = [{"ticket": e.ticket.name.lower(), "station": e.station}
                 for e in second.view(seat).log]
        assert second.view(seat).to_dict()["log"] == shown
        assert view_dict(second, seat)["log"] == shown
