"""Bring your own bot: a command bot, a class bot and a pip-installed entry-point bot play
one tournament from one command, launched, checked and stopped like built-in bots."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from db.store import Database
from game import Termination
from tests import SCALE
from tests.yard_cli import YARD, yard_here
from tournament.engines import Engine, EngineError, join_engine_args, parse_engine

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RULE_ENDINGS = {Termination.CAUGHT, Termination.SURVIVED, Termination.CORNERED,
                Termination.DETECTIVES_STUCK}


def install_entry_point_bot(site: Path) -> None:
    """A real distribution on ``site``: a package and its .dist-info with an entry point in
    the ``yard.bots`` group, exactly what ``pip install`` leaves behind."""
    package = site / "yard_demo_bots"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent('''
        from bots.sdk import Bot

        class Demo(Bot):
            """Plays the first legal move."""
            name = "demo"

            def choose(self, view, legal):
                return legal[0]

        class Hunter(Bot):
            name = "hunter"
            roles = frozenset({"detectives"})

            def choose(self, view, legal):
                return self.rng.choice(legal)
    '''))
    info = site / "yard_demo_bots-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: yard-demo-bots\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[yard.bots]\ndemo = yard_demo_bots:Demo\nhunter = yard_demo_bots:Hunter\n")
    (info / "RECORD").write_text("")


def yard(*args: str, env: dict[str, str], cwd: Path | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*YARD, *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=180 * SCALE, check=False)


def with_site(site: Path) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def test_command_class_and_entry_point_bots_in_one_tournament(tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node is not None, "Node.js is needed (CI installs it: apt-get install nodejs)"
    site = tmp_path / "site"
    install_entry_point_bot(site)
    env = with_site(site)

    listed = json.loads(yard("bots", "--json", env=env).stdout)
    rows = {row["name"]: row for row in listed}
    assert rows["demo"]["source"] == "entry point (yard-demo-bots)"
    assert rows["hunter"]["roles"] == ["detectives"]
    assert rows["random"]["source"] == "builtin"

    url = f"sqlite:///{tmp_path / 'byob.db'}"
    done = yard("tournament", "run", "--rules", "grid5", "--pairs", "1", "--seed", "3",
                "--concurrency", "1", "--bots", "demo,closer_bot.py:Closer,js,random",
                "--engine", "name=js", f"cmd={node} --experimental-websocket --no-warnings "
                "js/bot.js",
                "--db", url, "--log", str(tmp_path / "children.log"), "--json",
                env=env, cwd=EXAMPLES)
    assert done.returncode == 0, done.stderr + (tmp_path / "children.log").read_text()
    report = json.loads(done.stdout)
    assert report["games"] == 12  # 4 players, 6 pairings, 1 role-swapped pair each
    names = {row["player"] for row in report["leaderboard"]["rows"]}
    assert names == {"demo", "closer_bot.py:Closer", "js", "random"}
    db = Database.connect(url)
    tid = report["tournament_id"]
    games = [db.load_game(r.game_id) for r in db.results(tournament_id=tid)]
    assert len(games) == 12 and db.pending(tid) == []
    assert all(g.outcome.termination in RULE_ENDINGS for g in games)
    players = {g.mrx_player for g in games} | {g.detective_player for g in games}
    assert players == names
    spec = db.get_tournament(tid).spec
    assert spec["engines"]["js"]["cmd"].endswith("js/bot.js")
    assert spec["engines"]["closer_bot.py:Closer"]["bot"] == \
        f"{EXAMPLES / 'closer_bot.py'}:Closer"

    # The role check covers custom bots before anything is stored.
    refused = yard("tournament", "run", "--rules", "grid5", "--bots", "random,hunter",
                   "--db", url, env=env)
    assert refused.returncode == 2
    assert "bot 'hunter' cannot play mrx" in refused.stderr
    # (refused before anything starts, and the list: in this process, as yard runs them)
    refused = yard_here("tournament", "run", "--rules", "grid5", "--bots", "random,x",
                        "--engine", "name=x", "cmd=true", "roles=detectives", "--db", url,
                        env=env)
    assert refused.returncode == 2 and "bot 'x' cannot play mrx" in refused.stderr
    assert len(json.loads(yard_here("tournament", "list", "--db", url, "--json",
                                    env=env).stdout)) == 1


def test_play_and_match_take_custom_bots(tmp_path: Path) -> None:
    site = tmp_path / "site"
    install_entry_point_bot(site)
    env = with_site(site)
    played = yard("play", "--rules", "grid5", "--games", "3", "--mrx", "demo",
                  "--detectives", f"{EXAMPLES / 'closer_bot.py'}:Closer,hunter", "--json",
                  env=env)
    assert played.returncode == 0, played.stderr
    assert json.loads(played.stdout)["games"] == 3
    matched = yard("match", "--rules", "grid5", "--seed", "2", "--mrx", "demo",
                   "--detectives", "closer", "--engine", "name=closer",
                   f"class={EXAMPLES / 'closer_bot.py'}:Closer", "--json",
                   "--db", f"sqlite:///{tmp_path / 'm.db'}", env=env)
    assert matched.returncode == 0, matched.stderr
    assert json.loads(matched.stdout)["termination"] in {t.value for t in RULE_ENDINGS}
    # A local match checks roles before it starts anything, custom bots included.
    refused = yard("match", "--rules", "grid5", "--mrx", "hunter", "--detectives", "demo",
                   "--db", f"sqlite:///{tmp_path / 'm.db'}", env=env)
    assert refused.returncode == 2
    assert refused.stderr.strip() == \
        "error: bot 'hunter' cannot play mrx (it plays detectives)"


def test_player_specs_with_paths_need_an_engine(tmp_path: Path) -> None:
    env = dict(os.environ)
    cases = [
        (["--bots", f"random,{EXAMPLES / 'closer_bot.py'}:Closer"], "--engine name=NAME"),
        (["--bots", "random,greedy", "--engine", "name=x", "cmd=true"], "not used in --bots"),
        (["--bots", "random,x:depth=1", "--engine", "name=x", "cmd=true"],
         "option.KEY=VALUE"),
        (["--bots", "random,nosuch.py:Closer"], "does not exist"),
    ]
    for args, message in cases:  # refused before anything starts: in this process
        out = yard_here("tournament", "run", "--rules", "grid5", *args, "--db",
                        f"sqlite:///{tmp_path / 'x.db'}", env=env)
        assert out.returncode == 2, (args, out.stderr)
        assert message in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_engine_definitions() -> None:
    engine = parse_engine("name=mine 'cmd=python b.py --url {url} --slot {instance}' "
                          "roles=mrx rules=classic,grid5", "/work")
    assert engine.command("ws://h:1", "2") == ["python", "b.py", "--url", "ws://h:1",
                                               "--slot", "2"]
    assert engine.env("ws://h:1", "2") == {"YARD_URL": "ws://h:1", "YARD_BOT_NAME": "mine",
                                           "YARD_BOT_INSTANCE": "2"}
    assert engine.roles == ("mrx",) and engine.rules == ("classic", "grid5")
    assert Engine.from_dict(engine.to_dict()) == engine
    bot = parse_engine("name=c class=sub/x.py:Closer option.depth=2", "/work")
    assert bot.bot == "/work/sub/x.py:Closer:depth=2"
    argv = bot.command("ws://h:1", "3")
    assert argv[-7:] == ["/work/sub/x.py:Closer:depth=2", "--url", "ws://h:1", "--name", "c",
                         "--instance", "3"]
    for bad, message in [("cmd=x", "needs name="), ("name=a", "exactly one"),
                         ("name=a cmd=x bot=random", "exactly one"),
                         ("name=a cmd=x option.k=1", "option.KEY"),
                         ("name=a bot=random roles=mrx", "roles= is for cmd"),
                         ("name=a cmd=x colour=red", "unknown key"),
                         ("name=a 'cmd=x \"unclosed'", "quotation"),
                         # the shell took the quotes of `--engine cmd="node a.js"` away
                         ("cmd=node a.js", "'a.js' is not key=value (a value with spaces "
                          "needs quotes inside the --engine text, e.g. --engine "
                          "'name=mybot cmd=\"node bot.js\"'); every --engine needs name=")]:
        try:
            parse_engine(bad)
        except EngineError as exc:
            assert message in str(exc), (bad, exc)
        else:
            raise AssertionError(bad)
    # `--engine name=x cmd="..."` (two shell words) folds into one value.
    args = ["--engine", "name=x", "cmd=python b.py", "roles=mrx", "random", "--json"]
    assert join_engine_args(args) == ["--engine", "name=x 'cmd=python b.py' roles=mrx",
                                      "random", "--json"]


OTHER_NAME = '''
from bots.sdk import Bot, run


class Other(Bot):
    name = "other"

    def choose(self, view, legal):
        return legal[0]


run(Other, ["--name", "other"])  # not the name it was started as ($YARD_BOT_NAME)
'''


def test_an_engine_that_never_connects_as_itself_fails_within_the_connect_timeout(
        tmp_path: Path) -> None:
    """An engine that connects under another name, never connects or exits at once ends
    the run within --connect-timeout and a margin (it waited 60 s before), says which bots
    did connect and where the log is, and leaves no tournament behind."""
    script = tmp_path / "other.py"
    script.write_text(OTHER_NAME)
    url = f"sqlite:///{tmp_path / 'n.db'}"
    cases = [
        ("mine", f"{sys.executable} {script}",
         "did not connect: no bot named 'mine' with instance 1 connected within 5 s; bots "
         "that did connect: other (instance 1)"),
        ("mute", "sleep 100",
         "did not connect: no bot named 'mute' with instance 1 connected within 5 s; "),
        ("dead", "false", "`false` did not start (it exited with status 1)"),
    ]
    runs = []  # the three runs at once: most of each is waiting for the timeout
    for name, cmd, message in cases:
        log = tmp_path / f"{name}.log"
        runs.append((name, message, log, time.monotonic(), subprocess.Popen(
            [*YARD, "tournament", "run", "--rules", "grid5", "--bots", f"random,{name}",
             "--engine", f"name={name}", f"cmd={cmd}", "--connect-timeout", "5",
             "--pairs", "1", "--concurrency", "1", "--db", url, "--log", str(log)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    for name, message, log, started, proc in runs:
        _, stderr = proc.communicate(timeout=180 * SCALE)
        took = time.monotonic() - started
        assert proc.returncode == 2, stderr
        assert took < 50 * SCALE, (name, took)  # not the 60 s it waited before
        error = stderr[stderr.index("error: "):]
        assert message in error.splitlines()[0], error
        assert str(log) in error.splitlines()[0]  # its log: the lines or that it is empty
        tid = stderr.split("tournament ")[1].split(":")[0]
        assert error.splitlines()[-1] == \
            f"(tournament {tid} not kept: none of its games started)"
        assert "Traceback" not in stderr
    log = tmp_path / "mine.log"
    assert "connected as other (session" in log.read_text()
    assert json.loads(yard_here("tournament", "list", "--db", url, "--json").stdout) == []
