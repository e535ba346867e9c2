"""A failing bot fails fast and truthfully: the SDK reports a raising ``choose`` as
``bot_error`` and a ``choose`` that returns no legal move as ``illegal_move`` at once, with
the default 10 s move time, instead of going silent until the clock runs out; the reason is
in the stored record and ``yard replay``; ``yard bot-check`` names it. Real ``yard``
processes and real bot processes (the SDK's ``run``) throughout."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from bots.client import BotClient
from bots.registry import make_bot
from db.store import Database
from game import Termination
from host.writer import GameWriter
from protocol import OnTimeout, Policy, StartMatch, TimeControl
from ratings.outcomes import from_results
from records import GameRecord
from server.admin import AdminClient
from server.app import MatchServer
from server.config import ServerConfig
from tests import SCALE
from tests.yard_cli import yard_here
from tournament.processes import Child, yard_argv

RULE_ENDINGS = {Termination.CAUGHT, Termination.SURVIVED, Termination.CORNERED,
                Termination.DETECTIVES_STUCK}
MOVE_S = 10.0
"""The default move time (``yard match``, ``yard serve``): the 1 s bound means something."""

FAULTY = '''
"""Bots whose ``choose`` fails, one way each: ``python faulty.py CLASS --url URL``."""
import sys
import time
from pathlib import Path

from bots.sdk import Bot, Move, run

RAISED_AT = Path(__file__).with_name("raised_at.txt")


class Raiser(Bot):
    name = "raiser"

    def choose(self, view, legal):
        RAISED_AT.write_text(repr(time.time()))
        raise ValueError("no route to the docks in /home/someone/secret/plan.txt\\n"
                         "second line of the message")


class Illegal(Bot):
    name = "illegal"

    def choose(self, view, legal):
        return Move.parse("taxi:999")


class Nothing(Bot):
    name = "nothing"

    def choose(self, view, legal):
        return None


class Shouting(Bot):
    name = "shouting"

    def choose(self, view, legal):
        return str(legal[0]).upper()


class Texts(Bot):
    name = "texts"

    def choose(self, view, legal):
        return str(self.rng.choice(legal))


class NoStart(Bot):
    name = "nostart"

    def new_game(self, rules, seats):
        raise KeyError("weights")

    def choose(self, view, legal):
        return legal[0]


if __name__ == "__main__":
    run(globals()[sys.argv[1]], sys.argv[2:])
'''


def write_bots(directory: Path) -> Path:
    path = directory / "faulty.py"
    path.write_text(textwrap.dedent(FAULTY))
    return path


def test_a_raising_choose_forfeits_bot_error_at_once_and_replay_says_why(
        tmp_path: Path) -> None:
    bots = write_bots(tmp_path)
    db_url = f"sqlite:///{tmp_path / 'match.db'}"
    out = subprocess.run(yard_argv("match", "--rules", "grid5", "--seed", "3", "--mrx", "raiser",
                                   "--detectives", "random", "--engine", "name=raiser",
                                   f"class={bots}:Raiser", "--db", db_url, "--json"),
                         capture_output=True, text=True, timeout=120 * SCALE, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    result = json.loads(out.stdout)
    assert (result["termination"], result["winner"], result["seat"]) == (
        "bot_error", "detectives", "mrx")
    with Database.connect(db_url) as db:
        record = db.load_game(result["game"])
        rated = from_results(db.results()).games
    # Rated as any forfeit: a loss of the side at fault.
    assert [(g.mrx, g.detectives, g.mrx_won) for g in rated] == [("raiser", "random", False)]
    assert record.log is not None and record.log.move_s == MOVE_S
    last = record.turns[-1]
    assert (last.fault, last.move, last.seat, last.index) == ("bot_error", None, 0, 1)
    # From the exception (the bot's clock) to the game's end (the stored record's), and
    # from the server's your_turn to the forfeit: both well under the 10 s move time
    # (a second when idle; half the move time leaves room for a busy machine).
    raised_at = float((tmp_path / "raised_at.txt").read_text())
    assert 0 <= record.finished_at.timestamp() - raised_at < MOVE_S / 2
    assert last.time_used < MOVE_S / 2
    reason = "choose raised ValueError: no route to the docks in …/plan.txt"
    assert last.detail == f"bot_error: {reason}"
    shown = yard_here("replay", result["game"], "--db", db_url)
    assert shown.returncode == 0, shown.stderr
    assert f"reason: {reason}" in shown.stdout
    assert "detectives win (bot_error by mrx)" in shown.stdout
    assert "second line" not in shown.stdout and "/home/someone" not in shown.stdout
    # The detectives' view of the replay keeps Mister X's reason to himself, as any of his
    # fault details (it might name his station).
    hidden = yard_here("replay", result["game"], "--db", db_url, "--as", "detectives")
    assert "bot_error by mrx" in hidden.stdout and "no route" not in hidden.stdout


async def _play(request: StartMatch, admin: AdminClient, db: Database) -> GameRecord:
    game = await admin.start_match(request)
    await admin.result(game, 60 * SCALE)
    return db.load_game(game)


async def test_no_legal_move_from_choose_forfeits_illegal_move_at_once(tmp_path: Path
                                                                         ) -> None:
    bots = write_bots(tmp_path)
    db = Database.connect(f"sqlite:///{tmp_path / 'yard.db'}")
    server = MatchServer(ServerConfig(), GameWriter(db), port=0)
    await server.start()
    names = ["Illegal", "Nothing", "Shouting", "Texts", "NoStart"]
    children: list[Child] = []
    opponent = BotClient(lambda: make_bot("random"), server.url, "random")
    task = asyncio.create_task(opponent.run())
    try:
        children = list(await asyncio.gather(*(
            Child.launch([sys.executable, str(bots), name, "--url", server.url],
                         f"faulty.py {name}", expect="connected", cwd=str(tmp_path))
            for name in names)))
        await asyncio.wait_for(opponent.connected.wait(), 30 * SCALE)
        async with AdminClient(server.url, server.admin_token) as admin:
            records = {}
            for name, role in [("illegal", "mrx"), ("nothing", "detectives"),
                               ("shouting", "mrx"), ("texts", "detectives"),
                               ("nostart", "detectives")]:
                mrx, detectives = (name, "random") if role == "mrx" else ("random", name)
                request = StartMatch("grid5", mrx, [detectives], seed=5,
                                     time_control=TimeControl(MOVE_S, 0.0),
                                     policy=Policy(OnTimeout.FORFEIT, 3))
                records[name] = await _play(request, admin, db)
    finally:
        for child in children:
            await child.stop()
        opponent.stopped = True
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await server.stop()
    db.close()

    def forfeit(record: GameRecord) -> tuple[str, str | None, str | None]:
        last = record.turns[-1]
        assert last.time_used < MOVE_S / 2, last  # at once, not after the move time
        # One report, nothing for the server to refuse first (no bad_move, no retries).
        assert [t.fault for t in record.turns if t.fault] == [last.fault], record.turns
        seat = record.outcome.seat
        return (record.outcome.termination.value, None if seat is None else
                ("mrx" if seat == 0 else "detectives"), last.detail)

    assert forfeit(records["illegal"]) == (
        "illegal_move", "mrx", "illegal_move: choose returned an illegal move taxi:999 (not "
        "one of the legal moves)")
    assert forfeit(records["nothing"]) == (
        "illegal_move", "detectives", "illegal_move: choose returned None instead of a move")
    termination, side, detail = forfeit(records["shouting"])  # legal text, wrong case
    assert (termination, side) == ("illegal_move", "mrx")
    assert (detail or "").startswith("illegal_move: choose returned an illegal move 'TAXI:")
    # A legal move's text is a legal answer: the game plays out.
    texts = records["texts"]
    assert texts.outcome.termination in RULE_ENDINGS
    assert all(t.fault is None for t in texts.turns)
    # A bot that cannot start the game gives it up at once, before its first turn.
    nostart = records["nostart"]
    assert nostart.outcome.termination is Termination.BOT_ERROR
    assert nostart.turns[-1].detail == \
        "bot_error: starting the game raised KeyError: 'weights'"
