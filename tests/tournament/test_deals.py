"""Deals of tournament games: split deals in the engine (``new_game(..., mrx_seed=)``),
secret and public deal keys, ``fresh-mrx`` and ``same-deal`` pairings, old stored specs,
and the ``mrx_seed`` in records. The prediction test with real tournaments is
``tests/host/test_deal_secrecy.py``."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from db.build import record_from_moves
from db.portable import from_portable, from_stored, to_portable, to_stored
from db.store import Database
from game import BUILTIN, Outcome, Termination, load_ruleset, new_game
from tests.yard_cli import yard_here
from tournament.schedule import Deals, Pairing, ScheduleError, make_schedule, pair_seed
from tournament.spec import TournamentRunError, TournamentSpec, create

OLD_DB = Path(__file__).parents[1] / "data" / "old_database" / "yard.sqlite"


# ---------------------------------------------------------------- the engine


@pytest.mark.parametrize("name", BUILTIN)
def test_split_deal_keeps_the_detectives_and_draws_mrx_from_his_own_seed(name: str) -> None:
    rules = load_ruleset(name)
    allowed = set(range(1, rules.board.n_stations + 1)) if rules.random_starts \
        else set(rules.board.mrx_starts)
    for seed in range(40):
        starts = [new_game(rules, seed, mrx_seed=m) for m in range(12)]
        assert len({s.positions[1:] for s in starts}) == 1  # detectives: from seed alone
        assert len({s.mrx_station for s in starts}) > 1  # Mister X: from mrx_seed
        for state in starts:
            assert state.outcome is None and state.legal_moves()
            assert state.mrx_station in allowed and state.mrx_station not in state.positions[1:]
        again = new_game(rules, seed, mrx_seed=5)
        assert again.positions == starts[5].positions  # reproducible


def test_split_deal_never_deals_a_decided_start_and_keeps_detectives_when_mrx_is_redrawn(
        ) -> None:
    # grid5 with 4 detectives boxes Mister X in often: his redraws must not move them.
    rules = load_ruleset("grid5").with_detectives(4)
    for seed in range(300):
        detectives = {new_game(rules, seed, mrx_seed=m).positions[1:] for m in range(25)}
        assert len(detectives) == 1
        for m in range(25):
            state = new_game(rules, seed, mrx_seed=m)
            assert state.outcome is None and state.legal_moves()


def test_split_deal_of_an_unplayable_ruleset_is_over_like_an_ordinary_one(
        tmp_path: Path) -> None:
    path = tmp_path / "idle.toml"
    path.write_text('extends = "grid5"\nname = "idle"\ndetective_tickets = { taxi = 0 }\n')
    rules = load_ruleset(str(path))
    state = new_game(rules, 5, mrx_seed=9)
    assert state.outcome is not None and state.outcome == new_game(rules, 5).outcome
    assert new_game(rules, 5, mrx_seed=9).positions == state.positions


def test_without_mrx_seed_every_seed_deals_as_before() -> None:
    # Values pinned before split deals existed (also tests/game/test_rule_endings.py).
    assert new_game("classic", 1).positions == (78, 50, 112, 141, 138, 26)
    assert new_game("classic", 42, mrx_seed=None).positions == (71, 34, 13, 123, 50, 174)
    assert new_game("grid5", 7).positions == (11, 5, 13)


def test_fresh_mister_x_starts_are_independent_of_the_other_game() -> None:
    # Over many fresh-mrx pairs, game 2's Mister X starts where game 1's did about as often
    # as two independent draws agree (classic: 13 start cards, 1/13), never always.
    rules = load_ruleset("classic")
    games = make_schedule(["a", "b"], pairs=1500, seed=Deals(secret=bytes(range(32))),
                          pairing=Pairing.FRESH_MRX)
    same = 0
    for first, second in zip(games[::2], games[1::2], strict=True):
        one = new_game(rules, first.seed, mrx_seed=first.mrx_seed)
        two = new_game(rules, second.seed, mrx_seed=second.mrx_seed)
        assert one.positions[1:] == two.positions[1:]
        same += one.mrx_station == two.mrx_station
    assert 0.04 < same / 1500 < 0.12
    # Every start card is used, roughly evenly (a uniform draw among the free ones).
    counts = Counter(new_game(rules, g.seed, mrx_seed=g.mrx_seed).mrx_station
                     for g in games[:1300])
    assert set(counts) == set(rules.board.mrx_starts)
    assert max(counts.values()) < 2 * min(counts.values())


# ---------------------------------------------------------------- schedules


def test_same_deal_pairs_share_the_whole_deal() -> None:
    games = make_schedule(["a", "b"], pairs=20, seed=Deals(secret=b"k" * 32),
                          pairing=Pairing.SAME_DEAL)
    for first, second in zip(games[::2], games[1::2], strict=True):
        assert first.mrx_seed is None and second.mrx_seed is None
        assert new_game("classic", first.seed).positions == \
            new_game("classic", second.seed).positions


def test_fresh_mrx_pairs_share_seed_and_not_mrx_seed() -> None:
    games = make_schedule(["a", "b", "c"], pairs=3, seed=5, pairing=Pairing.FRESH_MRX,
                          self_play=True)
    by_key: dict[str, list[tuple[int | None, int | None]]] = {}
    for g in games:
        by_key.setdefault(g.pair_key, []).append((g.seed, g.mrx_seed))
    for pair in by_key.values():
        assert len({seed for seed, _ in pair}) == 1
        assert len({mrx for _, mrx in pair}) == len(pair) and None not in {m for _, m in pair}
    assert len({g.mrx_seed for g in games}) == len(games)


def test_public_seed_keeps_the_seeds_it_always_gave() -> None:
    old = make_schedule(["x", "y"], pairs=3, seed=11)
    assert [g.seed for g in old] == [pair_seed(11, "x", "y", n) for n in range(3) for _ in "ab"]
    fresh = make_schedule(["x", "y"], pairs=3, seed=11, pairing=Pairing.FRESH_MRX)
    assert [g.seed for g in fresh] == [g.seed for g in old]
    assert fresh == make_schedule(["x", "y"], pairs=3, seed=11, pairing=Pairing.FRESH_MRX)
    other = make_schedule(["x", "y"], pairs=3, seed=12, pairing=Pairing.FRESH_MRX)
    assert not {g.mrx_seed for g in fresh} & {g.mrx_seed for g in other}


def test_secret_deals_depend_on_the_key_only_through_a_keyed_hash() -> None:
    one, two = Deals.new_secret(), Deals.new_secret()
    a = make_schedule(["x", "y"], pairs=4, seed=one, pairing=Pairing.FRESH_MRX)
    assert a == make_schedule(["x", "y"], pairs=4, seed=one, pairing=Pairing.FRESH_MRX)
    b = make_schedule(["x", "y"], pairs=4, seed=two, pairing=Pairing.FRESH_MRX)
    assert not {g.seed for g in a} & {g.seed for g in b}
    public = {pair_seed(s, "x", "y", n) for s in range(100) for n in range(4)}
    assert not {g.seed for g in a} & public
    assert repr(one) == "Deals(seed=None)"  # the key is not printed
    with pytest.raises(ScheduleError, match="either a public seed or a secret"):
        Deals()
    with pytest.raises(ScheduleError, match="at least 16 bytes"):
        Deals(secret=b"short")


# ---------------------------------------------------------------- tournament specs


def test_new_spec_without_seed_gets_a_secret_key_and_fresh_mrx(tmp_path: Path) -> None:
    db = Database.connect(f"sqlite:///{tmp_path / 'y.db'}")
    tids = [create(db, TournamentSpec(rules="classic", bots=["random", "greedy"], pairs=3))
            for _ in range(2)]
    specs = [db.get_tournament(t).spec for t in tids]
    for stored in specs:
        assert stored["seed"] is None and stored["pairing"] == "fresh-mrx"
        assert len(bytes.fromhex(stored["secret"])) == 32
    assert specs[0]["secret"] != specs[1]["secret"]
    # The stored schedule is what the spec schedules; the runner deals mrx_seed from it.
    for tid, stored in zip(tids, specs, strict=True):
        spec = TournamentSpec.from_dict(stored)
        made = spec.schedule()
        entries = [spec.dealt(e) for e in db.scheduled(tid)]
        assert [(e.seed, e.mrx_seed, e.pair_key, e.mrx) for e in entries] == \
            [(g.seed, g.mrx_seed, g.pair_key, g.mrx) for g in made]
        assert all(e.mrx_seed is not None for e in entries)
    first = [e.seed for e in db.scheduled(tids[0])]
    assert not set(first) & {e.seed for e in db.scheduled(tids[1])}
    assert specs[0]["secret"] not in repr(TournamentSpec.from_dict(specs[0]))


def test_public_seed_spec_is_reproducible(tmp_path: Path) -> None:
    db = Database.connect(f"sqlite:///{tmp_path / 'y.db'}")
    spec = TournamentSpec(rules="classic", bots=["random", "greedy"], pairs=3, seed=5)
    tids = [create(db, spec) for _ in range(2)]
    dealt = [[spec.dealt(e) for e in db.scheduled(t)] for t in tids]
    assert [(e.seed, e.mrx_seed) for e in dealt[0]] == [(e.seed, e.mrx_seed) for e in dealt[1]]
    starts = [[new_game("classic", e.seed, mrx_seed=e.mrx_seed).positions for e in d]
              for d in dealt]
    assert starts[0] == starts[1]
    assert db.get_tournament(tids[0]).spec["secret"] is None


def test_bad_pairing_or_key_is_refused_before_anything_is_stored() -> None:
    with pytest.raises(TournamentRunError, match="--pairing 'swap'"):
        TournamentSpec(rules="grid5", bots=["a", "b"], pairing="swap").validate()
    with pytest.raises(TournamentRunError, match="not hex"):
        TournamentSpec(rules="grid5", bots=["a", "b"], secret="zz").validate()


def test_old_stored_specs_resume_same_deal_with_their_stored_seeds() -> None:
    con = sqlite3.connect(OLD_DB)
    try:
        specs = dict(con.execute("SELECT id, spec FROM tournaments"))
        rows = list(con.execute("SELECT tournament_id, game_index, pair_index, pair_key, "
                                "mrx_player, detective_player, seed FROM scheduled_games "
                                "ORDER BY tournament_id, game_index"))
    finally:
        con.close()
    assert specs
    for tid, text in specs.items():
        data = json.loads(text)
        assert "pairing" not in data and "secret" not in data
        spec = TournamentSpec.from_dict(data)
        assert (spec.pairing, spec.seed, spec.secret) == ("same-deal", data["seed"], None)
        stored = [r[2:] for r in rows if r[0] == tid]
        made = [(g.pair_index, g.pair_key, g.mrx, g.detectives, g.seed)
                for g in spec.schedule()]
        assert stored == made[:len(stored)]
        assert all(spec.dealt(g).mrx_seed is None for g in spec.schedule())
    # A spec dict without seed at all (never written, but readable) is seed 0.
    assert TournamentSpec.from_dict({"rules": "grid5", "bots": ["a", "b"]}).seed == 0


# ---------------------------------------------------------------- records


def test_records_carry_mrx_seed_only_when_the_deal_was_split() -> None:
    start = new_game("grid5", 3, mrx_seed=8)
    record = record_from_moves("g1", start, [(0, start.legal_moves()[0])], {0: "a", 1: "b"},
                               seed=3)
    record.mrx_seed = 8
    data = to_portable(record)
    assert data["seed"] == 3 and data["mrx_seed"] == 8
    assert from_portable(json.loads(json.dumps(data))).record.mrx_seed == 8
    stored = to_stored(record)
    assert from_stored(stored, record.turns, ruleset="grid5", moves=1).mrx_seed == 8
    plain = record_from_moves("g2", new_game("grid5", 3), [], {0: "a", 1: "b"}, seed=3)
    assert "mrx_seed" not in to_portable(plain) and "mrx_seed" not in to_stored(plain)
    assert from_portable(to_portable(plain)).record.mrx_seed is None


def test_exported_records_carry_the_secret_only_once_the_tournament_is_finished(
        tmp_path: Path) -> None:
    """`yard export --what records` of a running tournament must not hand out the key that
    deals its games still to be played; once finished the key is public (as on the web)."""
    from db.exchange import record_lines
    from game import Outcome, Termination

    db = Database.connect(f"sqlite:///{tmp_path / 'y.db'}")
    tid = create(db, TournamentSpec(rules="grid5", bots=["random", "greedy"], pairs=1))
    secret = db.get_tournament(tid).spec["secret"]
    first, second = db.scheduled(tid)
    db.record_forfeit(tid, first, Outcome.forfeit(1, Termination.DISCONNECTED), "test")
    (line,) = list(record_lines(db, tournament_id=tid))
    assert secret not in line and "secret" not in json.loads(line)["tournament"]["spec"]
    db.record_forfeit(tid, second, Outcome.forfeit(1, Termination.DISCONNECTED), "test")
    lines = list(record_lines(db, tournament_id=tid))
    assert all(json.loads(x)["tournament"]["spec"]["secret"] == secret for x in lines)


def test_an_unfinished_secret_deal_tournament_imports_whole_but_cannot_be_resumed(
        tmp_path: Path) -> None:
    """An export of an unfinished secret-deal tournament withholds the key and the seeds of
    the games still to play; its import keeps the whole schedule (`yard tournament list`
    reads as at the source) and refuses to resume, saying why. Exported again once
    finished, it completes the import with the key and the seeds."""
    source, target = (f"sqlite:///{tmp_path / name}" for name in ("a.db", "b.db"))
    db = Database.connect(source)
    tid = create(db, TournamentSpec(rules="grid5", bots=["random", "greedy"], pairs=2))
    secret = db.get_tournament(tid).spec["secret"]
    entries = db.scheduled(tid)
    forfeit = Outcome.forfeit(1, Termination.DISCONNECTED)
    db.record_forfeit(tid, entries[0], forfeit, "test")
    exported = tmp_path / "unfinished.jsonl"
    assert yard_here("export", "--what", "records", "--db", source, "--out",
                     str(exported)).returncode == 0
    text = exported.read_text()
    assert secret not in text
    assert not {str(e.seed) for e in entries[2:]} & set(text.replace(",", " ").split())
    head = json.loads(text.splitlines()[-1])
    assert head["format"] == "yard-tournament" and "secret" not in head["spec"]
    assert [e["seed"] for e in head["schedule"]] == [entries[0].seed, None, None, None]

    done = yard_here("import", str(exported), "--db", target, "--json")
    assert json.loads(done.stdout) == {"imported": 1, "skipped": 0, "tournaments": 1}
    listing = ["tournament", "list", "--json"]
    assert json.loads(yard_here(*listing, "--db", target).stdout) == \
        json.loads(yard_here(*listing, "--db", source).stdout)
    refused = yard_here("tournament", "resume", tid, "--db", target)
    assert refused.returncode == 2, refused.stderr
    assert f"error: tournament {tid} cannot deal its 3 unplayed games here: it was " \
        "imported from an export made before it was finished" in refused.stderr
    assert "resume it in the database it was exported from" in refused.stderr
    assert "Traceback" not in refused.stderr

    for entry in entries[1:]:                 # finished at the source
        db.record_forfeit(tid, entry, forfeit, "test")
    assert yard_here("export", "--what", "records", "--db", source, "--out",
                     str(exported)).returncode == 0
    done = yard_here("import", str(exported), "--db", target, "--json")
    assert json.loads(done.stdout) == {"imported": 3, "skipped": 1, "tournaments": 1}
    with Database.connect(target) as imported:
        assert imported.get_tournament(tid).spec["secret"] == secret
        assert [e.seed for e in imported.scheduled(tid)] == [e.seed for e in entries]
        assert imported.pending(tid) == []
