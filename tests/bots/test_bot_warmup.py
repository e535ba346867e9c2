"""``yard bot --ladder`` warms its bot up before ``hello``: one move on each side it plays,
on each ladder ruleset, so a first game never pays for compiling (numba) or loading on its
clock. In this process (:func:`bots.warmup.warm_up`), then real ``yard bot`` processes
against a real ``yard serve --ladder``."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from bots.base import Bot
from bots.registry import make_bot
from bots.warmup import ladder_names, warm_up
from game import Move, RulesetError, View
from tournament.processes import start_bot, start_server, yard_argv

DATA = Path(__file__).parents[1] / "data"
STRANDED = Path(__file__).parents[1] / "host" / "stranded.toml"


def _command(argv: list[str]) -> list[str]:
    """``yard ...`` or ``yard-bot ...`` as this interpreter runs them."""
    if argv[0] == "yard":
        return yard_argv(*argv[1:])
    return [sys.executable, "-c", "import sys; from bots.cli import main; "
            "sys.exit(main(sys.argv[1:]))", *argv[1:]]


class Broken(Bot):
    name = "broken"

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        raise ValueError("no route")


def test_warm_up_plays_each_side_the_bot_plays_on_each_ruleset() -> None:
    both = warm_up(lambda: make_bot("greedy"), ["grid5", "classic"])
    assert [(w.rules, w.side, w.error) for w in both] == [
        ("grid5", "mrx", None), ("grid5", "detectives", None),
        ("classic", "mrx", None), ("classic", "detectives", None)]
    assert [w.side for w in warm_up(lambda: make_bot("rush"), ["classic"])] == ["detectives"]
    broken = warm_up(Broken, ["grid5"])  # a failing bot: said, not raised
    assert [w.error for w in broken] == ["ValueError: no route"] * 2


def test_a_ladder_ruleset_the_bot_cannot_load_is_skipped(caplog: pytest.LogCaptureFixture
                                                         ) -> None:
    # A server's ladder may play a ruleset of its own TOML file, known by name only.
    with caplog.at_level(logging.INFO, "bots.warmup"):
        some = warm_up(lambda: make_bot("rush"), ["stranded", "classic"])
    assert [(w.rules, w.side) for w in some] == [("classic", "detectives")]
    assert "not warming up on stranded" in caplog.text
    none = warm_up(lambda: make_bot("rush"), ["stranded"])  # still compiles: on grid5
    assert [(w.rules, w.side) for w in none] == [("grid5", "detectives")]


def test_a_ladder_ruleset_file_is_joined_by_its_name(tmp_path: Path) -> None:
    """``--ladder grid5,FILE.toml`` joins the ladders ``grid5`` and the file's ruleset
    name (as ``yard serve --ladder FILE.toml`` calls it) and warms up on the file; a file
    that does not load is refused before anything else, with its path."""
    assert ladder_names(["grid5", str(STRANDED)]) == ["grid5", "stranded"]
    warmed = warm_up(lambda: make_bot("rush"), [str(STRANDED)])
    assert [(w.rules, w.side) for w in warmed] == [(str(STRANDED), "detectives")]
    broken = tmp_path / "broken.toml"
    broken.write_text("name = \"x\"\nextends = \"nope\"\n")
    for bad in (broken, tmp_path / "missing.toml"):
        with pytest.raises(RulesetError, match=str(bad)):
            ladder_names([str(bad)])
    for argv in (["yard", "bot", "random"], ["yard-bot", "run", "random"]):
        done = subprocess.run(
            [*_command(argv), "--url", "ws://127.0.0.1:9", "--ladder", f"grid5,{broken}"],
            capture_output=True, text=True, timeout=60)
        assert done.returncode != 0 and str(broken) in done.stderr, (argv, done.stderr)
        assert "Traceback" not in done.stderr, done.stderr


async def test_yard_bot_warms_up_before_it_connects(tmp_path: Path) -> None:
    server, url = await start_server(f"sqlite:///{tmp_path / 'w.db'}", "--ladder",
                                     "grid5,classic", stderr_log=tmp_path / "server.log")
    logs = {name: tmp_path / f"{name}.moves" for name in ("recorder", "hunter", "cold")}
    bots = []
    try:
        # Each bot's file starts with what it played before it connected (games against
        # the bots already connected may follow at once).
        for name, spec, extra in [("cold", "Recorder", ["--no-warm-up"]),
                                  ("recorder", "Recorder", []), ("hunter", "Hunter", [])]:
            bots.append(await start_bot(
                f"{DATA / 'recording_bot.py'}:{spec}", url, "--name", name, "--option",
                f"log={logs[name]}", "--ladder", "classic" if name == "cold" else
                "grid5,classic", *extra, stderr_log=tmp_path / f"{name}.log"))
            # Connected ("connected as ..." on stdout): its warm-up moves are all played.
            moves = logs[name].read_text().splitlines() if logs[name].exists() else []
            if name == "recorder":
                assert moves[:4] == ["choose mrx grid5", "choose detectives grid5",
                                     "choose mrx classic", "choose detectives classic"]
            elif name == "hunter":
                assert moves[:2] == ["choose detectives grid5", "choose detectives classic"]
            else:
                assert moves == []  # the first bot: no opponent yet
    finally:
        for child in bots:
            await child.stop()
        assert await server.stop() == 0
