"""Run by make.sh with the yard of commit e5264b0 (PYTHONPATH): adds a forfeit, an aborted
game and a record in format 1 (turns and transcripts inline, as stored before match logs)."""
import importlib
import json
import sys
from datetime import UTC, datetime

import sqlalchemy as sa

from bots.arena import play_game
from bots.registry import make_bot
from db.build import record_from_moves
from db.store import Database
from game import Outcome, Termination

codec = importlib.import_module("db.codec")  # the stored form of that yard (since deleted)

url = sys.argv[1]
db = Database.connect(url)
tid = next(t.tournament_id for t in db.list_tournaments() if "dead" in t.spec["bots"])
first, second = db.pending(tid)
db.record_forfeit(tid, first, Outcome.forfeit(1, Termination.DISCONNECTED),
                  "not connected: dead", game_id=f"{tid}-{first.index}-1700000000000")
db.record_forfeit(tid, second, Outcome(None, Termination.ABORTED), "not connected: dead, random",
                  game_id=f"{tid}-{second.index}-1700000000001")

result = play_game("grid5", make_bot("random", 3), [make_bot("rush", 4)], 21)
t0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
record = record_from_moves("old-format-1", result.start, result.moves, {0: "random", 1: "rush"},
                           result.outcome, seed=21, started_at=t0, finished_at=t0)
record.turns[1].playouts = 12
record.transcripts = {"mrx": [{"type": "your_turn", "turn": 0}],
                      "d1": [{"type": "game_start", "game": "old-format-1"}]}
db.save_game(record)
data = {**codec.record_to_dict(record), "format": 1,
        "turns": [codec.turn_to_dict(t) for t in record.turns], "transcripts": record.transcripts}
data.pop("log", None)
with db._writer.begin() as conn:
    conn.execute(sa.text("UPDATE game_records SET record = :r WHERE game_id = 'old-format-1'"),
                 {"r": json.dumps(data)})
db.close()
