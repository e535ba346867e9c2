"""Self-contained game records: games played over a real websocket server into a real
SQLite file, ``yard export --what records`` → ``yard import`` into a fresh database →
replays identical at every move; idempotence; bad records refused whole; ``yard replay
--json`` / ``--file``."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from bots.client import BotClient
from bots.registry import make_bot
from db.build import record_from_moves
from db.errors import RecordError
from db.portable import from_portable, to_portable
from db.replay import Perspective, check_record, replay_game, snapshot
from db.store import Database
from game import Move, State, Termination, from_text, load_ruleset, new_game
from game.board import board_digest
from host.writer import GameWriter
from protocol import OnTimeout, Policy, StartMatch, TimeControl
from records import GameRecord, ScheduledGame
from server.admin import AdminClient
from server.app import MatchServer
from server.config import ServerConfig
from server.transcript import transcripts
from tests import SCALE
from tests.yard_cli import yard_here

YARD = str(Path(sys.executable).with_name("yard"))

# A small custom map: a ring of 8 stations by taxi with a bus chord and a ferry.
CUSTOM_MAP = {
    "name": "ring8", "stations": 8,
    "edges": {"taxi": [[i, i % 8 + 1] for i in range(1, 9)], "bus": [[1, 5], [3, 7]],
              "ferry": [[2, 6]]},
    "detective_starts": [1, 3, 5], "mrx_starts": [2, 6, 8],
}
CUSTOM_RULES = {
    "name": "ring", "board": CUSTOM_MAP, "detectives": 2, "max_detectives": 3,
    "detective_tickets": {"taxi": 6, "bus": 3}, "mrx_tickets": {"taxi": 5, "bus": 3,
                                                                "secret": 2},
    "reveal_moves": [2, 5], "max_moves": 6, "secret_moves": True, "ferry": True,
}


def yard(*args: str, stdin: str | None = None, cwd: Path | None = None
         ) -> subprocess.CompletedProcess[str]:
    """``yard ARGS`` in this process (a ``yard`` process costs about a CPU second to start);
    the ``exported`` fixture runs the real command."""
    env = {k: v for k, v in os.environ.items() if k != "YARD_DB"}
    return yard_here(*args, stdin=stdin, env=env, cwd=cwd)


def yard_process(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "YARD_DB"}
    return subprocess.run([YARD, *args], capture_output=True, text=True, timeout=120,
                          env=env)


class Scripted:
    """A hand-driven seat holder: plays the first legal move, sends one illegal move
    first on turn ``illegal_at``, and stops answering from turn ``stall_at``."""

    def __init__(self, ws: ClientConnection, illegal_at: int, stall_at: int) -> None:
        self.ws, self.illegal_at, self.stall_at = ws, illegal_at, stall_at

    @classmethod
    async def open(cls, url: str, name: str, illegal_at: int, stall_at: int) -> Scripted:
        ws = await connect(url, proxy=None, max_size=2**22)
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "name": name,
                                  "instance": f"{name}-1"}))
        while json.loads(await ws.recv())["type"] != "welcome":
            pass
        return cls(ws, illegal_at, stall_at)

    async def play(self) -> None:
        answered = 0
        async for frame in self.ws:
            msg = json.loads(frame)
            if msg["type"] == "game_over":
                return
            if msg["type"] != "your_turn":
                continue
            answered += 1
            if answered >= self.stall_at:
                continue
            base = {"type": "move", "game": msg["game"], "turn": msg["turn"],
                    "seat": msg["seat"], "effort": {"playouts": 1000 + answered, "depth": 2}}
            if answered == self.illegal_at:
                await self.ws.send(json.dumps({**base, "move": "taxi:999"}))
            await self.ws.send(json.dumps({**base, "move": msg["legal"][0]}))


async def play_on_server(db_path: Path) -> dict[str, str]:
    """Play the test games over a real server into ``db_path``; returns label -> game id."""
    store = Database.connect(f"sqlite:///{db_path}")
    tid = store.create_tournament({"rules": "classic", "bots": ["random", "greedy"],
                                   "format": "round-robin", "pairs": 1, "seed": 7})
    entries = store.schedule(tid, [ScheduledGame(0, 0, "random", "greedy", 7),
                                   ScheduledGame(1, 0, "greedy", "random", 7)])
    server = MatchServer(ServerConfig(grace_s=1.0 * SCALE), GameWriter(store), port=0)
    await server.start()
    clients = [BotClient(partial(make_bot, n), server.url, n) for n in ("random", "greedy")]
    tasks = [asyncio.create_task(c.run()) for c in clients]
    games: dict[str, str] = {}
    try:
        for client in clients:
            await asyncio.wait_for(client.connected.wait(), 10 * SCALE)
        quick = TimeControl(2.0 * SCALE)  # for the stalls; generous for the others
        stall = await Scripted.open(server.url, "staller", illegal_at=2, stall_at=4)
        bad = await Scripted.open(server.url, "bad", illegal_at=1, stall_at=2)
        idle = await Scripted.open(server.url, "idle", illegal_at=0, stall_at=1)
        scripted = [asyncio.create_task(s.play()) for s in (stall, bad, idle)]
        async with AdminClient(server.url, server.admin_token) as admin:
            requests = {
                **{f"classic-{seed}": StartMatch("classic", "random", ["random"], seed=seed)
                   for seed in (1, 2, 3)},
                "tournament-0": StartMatch("classic", "random", ["greedy"], seed=7,
                                           tournament_id=tid,
                                           schedule_id=entries[0].schedule_id),
                "tournament-1": StartMatch("classic", "greedy", ["random"], seed=7,
                                           tournament_id=tid,
                                           schedule_id=entries[1].schedule_id),
                "custom-map": StartMatch(CUSTOM_RULES, "random", ["random"], seed=5),
                "detective-stalls": StartMatch("grid5", "random", ["staller"], seed=0,
                                               time_control=quick),
                "mrx-times-out": StartMatch("dash", "bad", ["random"], seed=4,
                                            time_control=quick),
                "random-on-timeout": StartMatch(
                    "grid5", "idle", ["random"], seed=6,
                    time_control=TimeControl(0.05 * SCALE), policy=Policy(OnTimeout.RANDOM)),
            }
            for label, request in requests.items():
                games[label] = await admin.start_match(request)
            for game in games.values():
                await admin.result(game, 120 * SCALE)
        for script in scripted:
            script.cancel()
    finally:
        for task in tasks:
            task.cancel()
        await server.stop()
        store.close()
    return games


def explicit_position_record() -> GameRecord:
    """An in-process game started from an explicit position (not a seed)."""
    start = from_text("rules=classic turn=d2 mrx=58:4.3.3.2.5 det=13:10.8.4,26:9.8.4 "
                      "log=taxi:46,bus:58")
    state, moves = start, list[tuple[int, Move]]()
    while state.outcome is None and len(moves) < 40:
        move = state.legal_moves()[len(moves) % len(state.legal_moves())]
        moves.append((state.to_move, move))
        state = state.apply(move)
    return record_from_moves("explicit", start, moves, {0: "a", 1: "b"}, seed=None)


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A database of server games (and one in-process game from an explicit position)."""
    folder = tmp_path_factory.mktemp("records")
    games = asyncio.run(play_on_server(folder / "a.db"))
    with Database.connect(f"sqlite:///{folder / 'a.db'}") as store:
        store.save_game(explicit_position_record())
    games["explicit"] = "explicit"
    return folder, games


@pytest.fixture(scope="module")
def exported(played: tuple[Path, dict[str, str]]) -> Path:
    folder, _ = played
    out = folder / "records.jsonl"
    done = yard_process("export", "--db", f"sqlite:///{folder / 'a.db'}", "--what",
                        "records", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("wrote 10 game records")
    return out


def state_facts(state: State) -> dict[str, Any]:
    """Everything about a state: truth, public belief and the three perspectives' views."""
    return {"positions": state.positions, "tickets": state.tickets, "log": state.log,
            "to_move": state.to_move, "outcome": state.outcome,
            "possible": sorted(state.possible_locations()),
            "views": [snapshot(state, p) for p in Perspective]}


def test_the_games_cover_doubles_secrets_faults_and_forfeits(
        played: tuple[Path, dict[str, str]]) -> None:
    folder, games = played
    with Database.connect(f"sqlite:///{folder / 'a.db'}") as store:
        records = {label: store.load_game(game) for label, game in games.items()}
    mrx_moves = [Move.parse(str(t.move)) for label, r in records.items()
                 if label.startswith("classic") for t in r.turns if t.seat == 0 and t.move]
    assert any(m.is_double for m in mrx_moves) and any(m.ticket.name == "SECRET"
                                                       for m in mrx_moves)
    stalls = records["detective-stalls"]
    assert stalls.outcome.termination is Termination.TIMEOUT and stalls.outcome.seat == 2
    assert any(t.fault == "illegal_move" and t.move for t in stalls.turns)
    assert [t.playouts for t in stalls.turns if t.seat != 0 and t.move][:2] == [1001, 1002]
    assert {s.instance for s in stalls.seats if s.seat != 0} == {"staller-1"}
    assert records["mrx-times-out"].turns[-1].fault == "timeout"
    assert {t.fault for t in records["random-on-timeout"].turns if t.seat == 0} == \
        {"random_move_on_timeout"}
    assert isinstance(records["custom-map"].ruleset_definition["board"], dict)
    assert records["tournament-0"].schedule_id is not None


def test_export_import_replay_gives_identical_states(
        played: tuple[Path, dict[str, str]], exported: Path) -> None:
    folder, games = played
    done = yard("import", str(exported), "--db", f"sqlite:///{folder / 'b.db'}", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"imported": 10, "skipped": 0, "tournaments": 1}
    with Database.connect(f"sqlite:///{folder / 'a.db'}") as a, \
            Database.connect(f"sqlite:///{folder / 'b.db'}") as b:
        for game in games.values():
            original, imported = a.load_game(game), b.load_game(game)
            before, after = replay_game(original), replay_game(imported)
            check_record(after)
            assert len(before.steps) == len(after.steps) == len(original.turns)
            assert [state_facts(s) for s in before.states()] == \
                [state_facts(s) for s in after.states()]
            assert [(t.index, t.seat, t.move, t.fault, t.detail, t.playouts, t.nodes, t.depth)
                    for t in imported.turns] == \
                [(t.index, t.seat, t.move, t.fault, t.detail, t.playouts, t.nodes, t.depth)
                 for t in original.turns]
            assert [t.time_used for t in imported.turns] == \
                pytest.approx([t.time_used for t in original.turns], abs=1e-4)
            assert (imported.outcome, imported.mrx_path, imported.seed, imported.seats,
                    imported.start_position, imported.moves) == \
                (original.outcome, original.mrx_path, original.seed, original.seats,
                 original.start_position, original.moves)
            assert_views_match_what_the_server_sent(original, after.steps)
        assert results(a) == results(b)  # tournaments and role-swapped pairs survive
        assert b.get_tournament(original_tournament(a, games)).spec == \
            a.get_tournament(original_tournament(a, games)).spec
    again = yard("export", "--db", f"sqlite:///{folder / 'b.db'}", "--what", "records",
                 "--out", "-")
    assert again.returncode == 0, again.stderr
    assert again.stdout == exported.read_text()  # a second export is byte-identical


def assert_views_match_what_the_server_sent(record: GameRecord, steps: Any) -> None:
    """Each view the server sent a seat (``your_turn``) is the imported replay's view."""
    before = {step.turn.index: step.before for step in steps}
    sent = 0
    sent_to = transcripts(record)  # rebuilt from the server's match log
    assert bool(sent_to) == (record.log is not None)  # in-process games have none
    for messages in sent_to.values():
        for message in messages:
            if message.get("type") == "your_turn":
                state = before[message["turn"]]
                seat = message["seat"]
                seat_number = 0 if seat == "mrx" else int(seat[1:])
                assert message["view"] == state.view(seat_number).to_dict()
                sent += 1
    assert sent >= (1 if sent_to else 0)


def results(store: Database) -> list[tuple[Any, ...]]:
    return sorted((r.game_id, r.ruleset, r.mrx_player, r.detective_player, r.winner,
                   r.termination, r.moves, r.tournament_id, r.pair_key)
                  for r in store.results())


def original_tournament(store: Database, games: dict[str, str]) -> str:
    tid = store.load_game(games["tournament-0"]).tournament_id
    assert tid is not None
    return tid


def test_import_is_idempotent_by_game_id(played: tuple[Path, dict[str, str]],
                                         exported: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    lines = exported.read_text().splitlines()
    first = yard("import", "-", "--db", url, stdin="\n".join(lines[:4]) + "\n")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("imported 4 games, skipped 0 already stored")
    second = yard("import", str(exported), "--db", url, "--json")
    assert json.loads(second.stdout) == {"imported": 6, "skipped": 4, "tournaments": 1}
    third = yard("import", str(exported), "--db", url, "--json")
    assert json.loads(third.stdout) == {"imported": 0, "skipped": 10, "tournaments": 1}
    with Database.connect(url) as store:
        assert len(store.list_games()) == 10
        tid = original_tournament(store, played[1])
        assert [e.index for e in store.scheduled(tid)] == [0, 1]
        assert store.pending(tid) == []


def bad_lines(line: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Broken copies of one record: name -> (JSON line, expected message)."""
    turns = line["moves"]
    illegal = [dict(m) for m in turns]
    illegal[1]["move"] = "taxi:1" if illegal[1]["move"] != "taxi:1" else "taxi:2"
    out_of_turn = [dict(m) for m in turns]
    out_of_turn[0]["seat"] = "d1"
    negative = [dict(m) for m in turns]
    negative[0]["playouts"] = -5
    variants: dict[str, tuple[dict[str, Any] | str, str]] = {
        "illegal": ({**line, "moves": illegal}, "(d1): move taxi:"),
        "out of turn": ({**line, "moves": out_of_turn}, "it is mrx's turn"),
        "path": ({**line, "mrx_path": [*line["mrx_path"][:-1], 0]}, "Mister X's path"),
        "result": ({**line, "result": {"winner": "mrx", "termination": "caught",
                                       "seat": None}}, "result"),
        "board": ({**line, "board": {**line["board"], "sha256": "0" * 64}},
                  "differs from the board the game was played on"),
        "version": ({**line, "version": 99}, "record version 99 is newer"),
        "missing": ({k: v for k, v in line.items() if k != "start"}, "missing field 'start'"),
        "seat": ({**line, "players": line["players"][:-1]}, "seats"),
        "effort": ({**line, "moves": negative}, "moves[0].playouts: must be in 0.."),
        "json": ("{not json", "not valid JSON"),
    }
    return {name: (data if isinstance(data, str) else json.dumps(data), message)
            for name, (data, message) in variants.items()}


def test_bad_records_are_refused_per_line_and_nothing_is_stored(
        played: tuple[Path, dict[str, str]], exported: Path, tmp_path: Path) -> None:
    lines = exported.read_text().splitlines()
    [good] = [json.loads(x) for x in lines
              if json.loads(x).get("game_id") == played[1]["classic-1"]]
    variants = bad_lines(good)
    for name, (text, message) in variants.items():
        if name != "json":
            with pytest.raises(RecordError) as info:
                from_portable(json.loads(text))
            assert message in str(info.value)
            assert str(info.value).startswith(f"game {good['game_id']}: ")
            assert str(info.value).count(good["game_id"]) == 1
    url = f"sqlite:///{tmp_path / 'd.db'}"
    body = "\n".join([lines[1], *(text for text, _ in variants.values()), lines[2]])
    done = yard("import", "-", "--db", url, stdin=body)
    assert done.returncode == 2
    errors = done.stderr.splitlines()
    assert errors[-1] == f"error: {len(variants)} bad records in -; nothing imported"
    for number, (_, message) in enumerate(variants.values(), start=2):
        [hit] = [e for e in errors if e.startswith(f"error: - line {number}: ")]
        assert message in hit, hit
    assert "Traceback" not in done.stderr
    with Database.connect(url) as store:
        assert store.list_games() == []  # the good lines were not stored either


def test_replay_json_and_file(played: tuple[Path, dict[str, str]], exported: Path) -> None:
    folder, games = played
    by_id = {json.loads(line).get("game_id"): line
             for line in exported.read_text().splitlines()}
    game = games["classic-2"]
    done = yard("replay", game, "--json", "--db", f"sqlite:///{folder / 'a.db'}")
    assert done.returncode == 0, done.stderr
    assert done.stdout == by_id[game] + "\n"
    data = json.loads(done.stdout)
    assert data["format"] == "yard-game-record" and data["version"] == 1
    assert data["moves"][0]["seat"] == "mrx" and data["mrx_path"][0] == \
        int(data["start"].split("mrx=")[1].split(":")[0])
    from_file = yard("replay", game, "--file", str(exported), "--json")
    assert from_file.stdout == done.stdout
    text = yard("replay", game, "--file", str(exported), "--as", "detectives")
    db_text = yard("replay", game, "--db", f"sqlite:///{folder / 'a.db'}", "--as",
                   "detectives")
    assert text.returncode == 0 and text.stdout == db_text.stdout
    assert "    log: " in text.stdout
    missing = yard("replay", "nope", "--file", str(exported))
    assert missing.returncode == 2 and missing.stderr.startswith("error: no game 'nope'")


def test_custom_map_record_needs_no_files(played: tuple[Path, dict[str, str]],
                                          exported: Path) -> None:
    _, games = played
    [line] = [json.loads(x) for x in exported.read_text().splitlines()
              if json.loads(x).get("game_id") == games["custom-map"]]
    assert line["ruleset"]["board"]["name"] == "ring8"
    assert line["board"]["name"] == "ring8"
    game = from_portable(line)
    rules = load_ruleset("classic")
    assert game.record.ruleset == "ring" and board_digest(rules.board) != line["board"]["sha256"]
    tampered = json.loads(json.dumps(line))
    tampered["ruleset"]["board"]["edges"]["bus"] = [[1, 5]]
    with pytest.raises(RecordError, match="embedded map differs"):
        from_portable(tampered)


def test_explicit_start_and_unusual_indices_round_trip() -> None:
    record = explicit_position_record()
    assert record.start_position.startswith("rules=classic turn=d2")
    record.turns = [replace(t, index=10 * t.index + 1) for t in record.turns]
    data = json.loads(json.dumps(to_portable(record)))
    assert data["first_turn"] == 1 and data["moves"][1]["index"] == 11
    game = from_portable(data)
    assert game.record.turns == record.turns and game.tournament is None
    states = replay_game(game.record).states()
    assert states[0].to_move == 2 and len(states[0].log) == 2
    assert [state_facts(s) for s in states] == \
        [state_facts(s) for s in replay_game(record).states()]


def test_a_seeded_start_replays_from_the_record_alone() -> None:
    start = new_game("warwick", seed=9)
    move = start.legal_moves()[0]
    record = record_from_moves("w", start, [(0, move)], {0: "x", 1: "y"}, seed=9)
    data = to_portable(record)
    assert data["seed"] == 9 and data["start"] == record.start_position
    assert replay_game(from_portable(data).record).final.positions[0] == move.to


def test_a_custom_map_ruleset_file_is_embedded_and_replays_without_it(tmp_path: Path) -> None:
    (tmp_path / "ring8.json").write_text(json.dumps(CUSTOM_MAP))
    toml = tmp_path / "ring.toml"
    toml.write_text('extends = "classic"\nname = "ring"\nboard = "ring8.json"\n'
                    "max_detectives = 2\ndetectives = 2\n")
    rules = load_ruleset(str(toml))
    assert rules.definition()["board"]["edges"]["ferry"] == [[2, 6]]
    assert load_ruleset("classic").definition()["board"] == "london"
    start = new_game(rules, seed=1)
    record = record_from_moves("ring-game", start, [(0, start.legal_moves()[0])],
                               {0: "a", 1: "b"}, seed=1)
    (tmp_path / "ring8.json").unlink()
    game = from_portable(json.loads(json.dumps(to_portable(record))))
    assert board_digest(replay_game(game.record).start.rules.board) == board_digest(rules.board)


def test_an_unrebuildable_stored_game_is_a_clear_export_error(tmp_path: Path) -> None:
    start = new_game("grid5", seed=1)
    record = record_from_moves("old", start, [], {0: "a", 1: "b"}, seed=1)
    record.ruleset_definition = {**record.ruleset_definition, "board": "lost-map"}
    url = f"sqlite:///{tmp_path / 'old.db'}"
    with Database.connect(url) as store:
        store.save_game(record)
    done = yard("export", "--db", url, "--what", "records")
    assert done.returncode == 2
    assert done.stderr.startswith("error: game old: cannot rebuild its ruleset")
    assert done.stderr.count("\n") == 1


def test_a_conflicting_schedule_entry_stores_nothing(
        played: tuple[Path, dict[str, str]], exported: Path, tmp_path: Path) -> None:
    _, games = played
    url = f"sqlite:///{tmp_path / 'e.db'}"
    with Database.connect(f"sqlite:///{played[0] / 'a.db'}") as a:
        tid = original_tournament(a, games)
    with Database.connect(url) as store:
        store.create_tournament({"rules": "classic"}, tournament_id=tid)
        store.schedule(tid, [ScheduledGame(0, 0, "someone", "else", 99)])
    done = yard("import", str(exported), "--db", url)
    assert done.returncode == 2
    assert "schedule entry 0 of tournament" in done.stderr and "differs" in done.stderr
    with Database.connect(url) as store:
        assert store.list_games() == []
