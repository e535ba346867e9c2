"""``yard bot-check``: the compliance battery passes the examples and fails, with reasons, a
bot that does not resume, misses the deadline or chokes on unknown fields."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests import SCALE
from tests.bots.test_sdk_faults import write_bots
from tests.yard_cli import YARD, yard_here
from tournament.botcheck import EXTRA_KEY, Mode, Observer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
RAW_BOT = Path(__file__).resolve().parents[1] / "data" / "raw_bot.py"
RULESETS = ["classic", "bristol", "dash", "warwick", "grid5"]


def yard(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*YARD, *args], capture_output=True, text=True,
                          timeout=120 * SCALE, check=False)


def statuses(out: subprocess.CompletedProcess[str]) -> dict[str, dict[str, str]]:
    data = json.loads(out.stdout)
    return {c["name"]: c for c in data["checks"]}


def full_battery() -> set[str]:
    return {"connects", "ping", "double and secret moves", "resume", "deadline",
            "unknown fields", *(f"{r} as {role}" for r in RULESETS
                                for role in ("mrx", "detectives"))}


def test_the_sdk_example_passes() -> None:
    out = yard("bot-check", f"{EXAMPLES / 'closer_bot.py'}:Closer:greed=0.9", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    assert json.loads(out.stdout)["options"] == [{
        "name": "greed", "type": "float", "default": 1.0, "value": 0.9, "required": False,
        "help": "share of detective moves that close in (the rest are random)",
        "choices": None, "range": None}]
    checks = statuses(out)
    assert set(checks) == full_battery()
    assert all(c["status"] == "pass" for c in checks.values()), checks
    assert "double and the secret move" in checks["double and secret moves"]["reason"]


def test_the_javascript_example_passes() -> None:
    node = shutil.which("node")
    assert node is not None, "Node.js is needed (CI installs it: apt-get install nodejs)"
    out = yard("bot-check", "jsbot", "--engine", "name=jsbot",
               f"cmd={node} --experimental-websocket --no-warnings {EXAMPLES / 'js' / 'bot.js'}")
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert "PASS resume: reconnected with its resume token and finished the game on classic" \
        in "\n".join(lines)
    assert sum(line.startswith("PASS ") for line in lines) == len(full_battery())
    assert lines[-1].startswith("jsbot: passed")


def test_a_faulty_bot_fails_with_the_reasons() -> None:
    # Slow on the first move of each game only: what the deadline check looks at (every
    # move would only slow the other checks down).
    cmd = (f"{sys.executable} {RAW_BOT} --url {{url}} --name {{name}} --no-resume --strict "
           f"--slow 0.05 --slow-turns 1")
    # The JSON and the text report at once: most of each run is waiting on grace periods.
    runs = [subprocess.Popen([*YARD, "bot-check", "raw", "--engine", "name=raw", f"cmd={cmd}",
                              *extra, "--rules", "grid5", "--deadline", "0.02", "--grace", "1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for extra in (["roles=mrx,detectives", "--json"], [])]
    said = [run.communicate(timeout=120 * SCALE) for run in runs]
    out, text = (subprocess.CompletedProcess(run.args, run.returncode, *output)
                 for run, output in zip(runs, said, strict=True))
    assert out.returncode == 1, out.stdout + out.stderr
    checks = statuses(out)
    passed = {name for name, c in checks.items() if c["status"] == "pass"}
    assert passed == {"connects", "ping", "grid5 as mrx", "grid5 as detectives"}
    assert checks["double and secret moves"]["status"] == "skip"
    assert "without the resume_token" in checks["resume"]["reason"]
    assert "timeout" in checks["deadline"]["reason"]
    assert "exited" in checks["unknown fields"]["reason"]
    assert text.returncode == 1
    assert "FAIL resume: connection dropped mid-game on grid5: it reconnected without the " \
        "resume_token" in text.stdout
    assert "raw: FAILED (4 passed, 3 failed, 1 skipped" in text.stdout


def test_a_failing_choose_is_named_with_its_cause_and_no_follow_on_failure(
        tmp_path: Path) -> None:
    bots = write_bots(tmp_path)
    out = yard("bot-check", f"{bots}:Raiser", "--rules", "grid5", "--grace", "1", "--json")
    assert out.returncode == 1, out.stdout + out.stderr
    checks = statuses(out)
    cause = "choose raised ValueError: no route to the docks in …/plan.txt"
    assert checks["grid5 as mrx"]["reason"] == f"bot_error at turn 1 (mrx): {cause}"
    assert checks["grid5 as detectives"]["reason"].endswith(f"(d1): {cause}")
    assert cause in checks["deadline"]["reason"] and "timeout" not in out.stdout
    # The resume check could not drop a connection in a game the bot gave up at once:
    # not a second failure of its own.
    assert checks["resume"]["status"] == "skip"
    assert "by its own fault (bot_error" in checks["resume"]["reason"]
    text = yard("bot-check", f"{bots}:Illegal", "--rules", "grid5", "--grace", "1")
    assert text.returncode == 1
    assert "FAIL grid5 as mrx: illegal_move at turn 1 (mrx): choose returned an illegal " \
        "move taxi:999 (not one of the legal moves)" in text.stdout
    assert "FAIL resume" not in text.stdout and "SKIP resume: not checked" in text.stdout


def test_usage_errors_exit_2_with_one_line(tmp_path: Path) -> None:
    cases = [
        (["nosuchbot"], "unknown bot 'nosuchbot'"),
        (["random", "--rules", "chess"], "unknown ruleset 'chess'"),
        (["random", "--engine", "name=x", "cmd=true"], "not checked"),
        (["x", "--engine", "name=x"], "exactly one of cmd=, bot= or class="),
        (["x", "--engine", "name=x", "cmd=true", "roles=judge"], "roles="),
        ([f"{EXAMPLES / 'closer_bot.py'}:Closer:greed=x"],
         "bot 'closer': option greed='x' is not a valid float"),
        ([f"{EXAMPLES / 'closer_bot.py'}:Closer:depth=2"],
         "bot 'closer' has no option 'depth' (options: greed)"),
    ]
    for args, message in cases:  # refused before anything starts: in this process
        out = yard_here("bot-check", *args)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        assert message in out.stderr and "Traceback" not in out.stderr, out.stderr
    dead = yard("bot-check", "x", "--engine", "name=x", "cmd=false")
    assert dead.returncode == 1
    assert dead.stdout.startswith("FAIL connects: `false` did not start (it exited")


def test_observer_rewrites_frames_sans_io() -> None:
    obs = Observer()
    obs.start(Mode.DOUBLE_SECRET)
    turn = {"type": "your_turn", "game": "g", "turn": 1, "seat": "mrx",
            "legal": ["taxi:1", "bus:2+taxi:3", "secret:4"], "view": {}, "clock": {}}
    assert obs.to_bot(1, turn)["legal"] == ["bus:2+taxi:3"]
    second = {**turn, "turn": 3}
    assert obs.to_bot(1, second)["legal"] == ["secret:4"]
    obs.from_bot(1, {"type": "move", "game": "g", "turn": 3, "move": "taxi:1"})
    assert obs.offered[("g", 3)] == ("secret", ["secret:4"])
    assert obs.answers[("g", 3)] == "taxi:1"
    obs.start(Mode.EXTRA_FIELDS)
    sent = obs.to_bot(1, {**turn, "turn": 5})
    assert EXTRA_KEY in sent and EXTRA_KEY in sent["view"] and EXTRA_KEY in sent["clock"]
    assert sent["legal"] == turn["legal"]
    obs.start(Mode.RESUME)
    move = {"type": "move", "game": "g", "turn": 7, "move": "taxi:1"}
    assert obs.from_bot(2, move) is False
    assert obs.from_bot(2, {**move, "turn": 9}) is True  # drop after its second move
    assert obs.dropped_conn == 2
    obs.to_bot(2, {"type": "welcome", "resume_token": "tok"})
    assert obs.tokens[2] == "tok"
