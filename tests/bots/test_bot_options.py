"""Bot options are declared once, as typed ``__init__`` keyword arguments with defaults
(bots/options.py): the registry converts and checks spec values against them, ``yard bots``
lists them, and ``seed`` is the base class's business, never a requirement of a bot."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Annotated, Literal

import pytest

from bots.base import Bot
from bots.options import BotOptionError, Range, declared_options
from bots.registry import BUILTIN_BOTS, make_bot
from game import Move, View
from tests import SCALE
from tests.yard_cli import YARD, yard_here

ROOT = Path(__file__).resolve().parents[2]


def readme_bot() -> str:
    """The bot of README.md's "Write your own bot", exactly as shown there."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Write your own bot", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None
    code = found.group(1)
    assert "def __init__(self, greed: float = 1.0):" in code  # options as the README says
    return code


def play_json(*args: str, cwd: Path) -> dict[str, object]:
    out = yard_here("play", "--rules", "grid5", "--games", "4", "--seed", "5", "--json",
                    *args, cwd=cwd)
    assert out.returncode == 0, out.stderr
    data: dict[str, object] = json.loads(out.stdout)
    data.pop("games_per_s")
    return data


def test_the_readme_bot_with_an_option_plays_checks_and_plays_a_tournament(
        tmp_path: Path) -> None:
    (tmp_path / "mybot.py").write_text(readme_bot())
    # yard bots --check: loads, accepts greed, lists it with type, default and help.
    out = yard_here("bots", "--check", "mybot.py:Closer:greed=0.5", "--only", "-", "--json",
                    cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    [row] = json.loads(out.stdout)
    assert row["name"] == "mybot.py:Closer" and row["source"] == "class"
    assert row["options"] == [{
        "name": "greed", "type": "float", "default": 1.0, "required": False,
        "help": "share of detective moves that close in (the rest are random)",
        "choices": None, "range": None}]
    text = yard_here("bots", "--check", "mybot.py:Closer", "--only", "-", cwd=tmp_path)
    assert " ".join(text.stdout.split()) == (
        "mybot.py:Closer detectives, mrx [class] greed=1.0 float share of detective moves "
        "that close in (the rest are random)")
    # yard play: seed is not required of the bot, yet its self.rng is seeded (same seed,
    # same games; greed=0.5 makes half its moves random).
    first = play_json("--mrx", "random", "--detectives", "mybot.py:Closer:greed=0.5",
                      cwd=tmp_path)
    assert first["games"] == 4
    assert play_json("--mrx", "random", "--detectives", "mybot.py:Closer:greed=0.5",
                     cwd=tmp_path) == first
    flag = play_json("--mrx", "random", "--detectives", "mybot.py:Closer",
                     "--option", "mybot.py:Closer:greed=0.5", cwd=tmp_path)
    assert {**flag, "detectives": first["detectives"]} == first
    # A tournament: checked through `yard bots --json`, launched as `yard bot` processes.
    done = subprocess.run([*YARD, "tournament", "run", "--rules", "grid5", "--pairs", "1",
                           "--seed", "3", "--concurrency", "1",
                           "--bots", "random,mybot.py:Closer:greed=0.5",
                           "--db", f"sqlite:///{tmp_path / 't.db'}", "--json"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=180 * SCALE,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["games"] == 2
    # ... and an option it does not declare is refused before anything starts.
    refused = yard_here("tournament", "run", "--rules", "grid5", "--pairs", "1",
                        "--bots", "random,mybot.py:Closer:gred=0.5",
                        "--db", f"sqlite:///{tmp_path / 't.db'}", cwd=tmp_path)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr == "error: bot 'closer' has no option 'gred' (options: greed)\n"


def test_yard_bots_json_lists_every_builtin_option_as_the_bots_accept_them() -> None:
    out = yard_here("bots", "--json")
    assert out.returncode == 0, out.stderr
    rows = {row["name"]: row for row in json.loads(out.stdout)}
    assert set(BUILTIN_BOTS) <= set(rows)
    expected = {"alphabeta": ["time", "depth", "samples", "width", "filter", "profile"],
                "mcts": ["time", "iterations", "c", "r", "epsilon", "filter", "lc",
                         "lc_file", "profile", "workers", "max_nodes"],
                "dqn": ["weights", "epsilon", "safe"],
                "hider": ["depth", "model", "epsilon", "prune", "w_dist", "w_belief",
                          "w_escape", "w_area", "scale", "blend"]}
    for name in BUILTIN_BOTS:
        options = rows[name]["options"]
        assert [o["name"] for o in options] == expected.get(name, []), name
        for option in options:
            assert {"name", "type", "default", "help"} <= set(option), option
            assert option["type"] in {"int", "float", "bool", "str"}, option
            assert option["help"] and not option["required"], option
            assert isinstance(option["default"], {"int": int, "float": float, "bool": bool,
                                                  "str": str}[option["type"]]), option
        if not options:
            continue
        # Every listed option, given at its listed default, is accepted (and the bot built
        # with them: the same as one built without) ...
        spec = name + ":" + ",".join(f"{o['name']}={o['default']}" for o in options)
        checked = yard_here("bots", "--check", spec, "--only", name, "--json")
        assert checked.returncode == 0, (spec, checked.stderr)
        assert json.loads(checked.stdout)[0]["timed"] == rows[name]["timed"]
        given = {o["name"]: str(o["default"]) for o in options}
        built, plain = (vars(make_bot(name, 1, opts)) for opts in (given, {}))
        assert built.pop("rng").random() == plain.pop("rng").random()
        assert built == plain, name
        # ... and an unknown one is refused, naming every known one.
        refused = yard_here("bots", "--check", f"{name}:nosuch=1", "--only", name)
        known = ", ".join(sorted(o["name"] for o in options))
        assert refused.returncode == 2
        assert refused.stderr == (f"error: bot {name!r} has no option 'nosuch' "
                                  f"(options: {known})\n")
    for name in ("random", "rush", "run", "run2", "greedy"):
        refused = yard_here("bots", "--check", f"{name}:depth=1", "--only", name)
        assert refused.stderr == f"error: bot {name!r} has no option 'depth' (options: none)\n"


@pytest.mark.parametrize(("spec", "message"), [
    ("mcts:iterations=many", "bot 'mcts': option iterations='many' is not a valid int"),
    ("mcts:filter=maybe", "bot 'mcts': option filter='maybe' is not true or false"),
    ("mcts:epsilon=1.5", "bot 'mcts': option epsilon=1.5 is out of range ([0, 1])"),
    ("mcts:profile=fast", "bot 'mcts': option profile='fast' is not one of baseline, tuned"),
    ("hider:depth=7", "bot 'hider': option depth=7 is out of range ([1, 6])"),
    ("hider:prune=1", "bot 'hider': option prune=1.0 is out of range ([0, 1))"),
    ("hider:scale=0", "bot 'hider': option scale=0.0 is out of range (> 0)"),
    ("alphabeta:samples=0", "bot 'alphabeta': option samples=0 is out of range (>= 1)"),
])
def test_bad_option_values_are_one_line_errors(spec: str, message: str) -> None:
    for args in (["bots", "--check", spec, "--only", "-"],
                 ["play", "--rules", "grid5", "--mrx", spec, "--detectives", "random"]):
        out = yard_here(*args)
        assert out.returncode == 2, out.stderr
        assert out.stderr == f"error: {message}\n", args


def test_a_class_that_needs_an_option_or_crashes_says_so_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "odd.py").write_text(
        "from bots.sdk import Bot\n\n"
        "class Needs(Bot):\n"
        "    def __init__(self, weights: str, depth: int = 2):\n"
        "        self.weights = weights\n\n"
        "    def choose(self, view, legal):\n"
        "        return legal[0]\n\n"
        "class Boom(Needs):\n"
        "    def __init__(self, depth: int = 2):\n"
        "        raise RuntimeError('no GPU here')\n")
    cases = [("odd.py:Needs", "error: bot 'Needs' needs option weights=VALUE\n"),
             ("odd.py:Boom", "error: bot 'odd.py:Boom' failed to start: Boom.__init__ raised "
                             "RuntimeError: no GPU here\n")]
    for spec, message in cases:
        for args in (["bots", "--check", spec, "--only", "-"],
                     ["play", "--rules", "grid5", "--mrx", "random", "--detectives", spec]):
            out = yard_here(*args, cwd=tmp_path)
            assert (out.returncode, out.stderr) == (2, message), args
    listed = yard_here("bots", "--check", "odd.py:Needs:weights=w.npz", "--only", "-",
                       "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    weights, depth = json.loads(listed.stdout)[0]["options"]
    assert (weights["required"], weights["default"], depth["default"]) == (True, None, 2)


class _Plain(Bot):
    """A bot whose ``__init__`` takes options only and never calls ``super().__init__()``.

    Options:
        greed: from the class docstring
    """

    def __init__(self, greed: float = 1.0,
                 depth: Annotated[int, "plies", Range(ge=1, le=4)] = 2,
                 mode: Literal["a", "b"] = "a", limit: int | None = None,
                 label=None, count=3) -> None:  # unannotated: typed by their defaults
        """Args:
            depth: ignored: Annotated help wins
            mode: which mode,
                on two lines
        """
        self.greed, self.depth, self.mode, self.limit = greed, depth, mode, limit

    def choose(self, view: View, legal: list[Move]) -> Move:  # type: ignore[override]
        return legal[0]


class _Seeded(_Plain):
    def __init__(self, seed: int | None = None, *, greed: float = 1.0) -> None:
        super().__init__(greed)
        self.seed, self.got = seed, seed


def test_options_are_declared_by_the_init_signature() -> None:
    options = {o.name: o for o in declared_options(_Plain)}
    assert list(options) == ["greed", "depth", "mode", "limit", "label", "count"]
    assert [(o.type_name, o.default, o.help) for o in options.values()] == [
        ("float", 1.0, "from the class docstring"), ("int", 2, "plies"),
        ("str", "a", "which mode, on two lines"), ("int | None", None, ""),
        ("str | None", None, ""), ("int", 3, "")]
    assert options["mode"].choices == ("a", "b") and str(options["depth"].range) == "[1, 4]"
    assert options["limit"].convert("plain", "none") is None
    assert options["limit"].convert("plain", "7") == 7
    assert options["count"].convert("plain", "4") == 4
    with pytest.raises(BotOptionError, match=r"option depth=5 is out of range \(\[1, 4\]\)"):
        options["depth"].convert("plain", "5")
    assert [o.name for o in declared_options(_Seeded)] == ["greed"]  # seed is no option


def test_seed_is_handled_by_the_base_class(tmp_path: Path) -> None:
    plain = _Plain()  # no super().__init__(): the base still gave it an rng and a seed
    assert plain.seed is None and 0 <= plain.rng.random() < 1
    draws = [_Plain.create(7, greed=0.5).rng.random() for _ in range(2)]
    assert draws[0] == draws[1]
    assert make_bot("random", 7).rng.random() == draws[0]  # as Bot.__init__(seed) seeds
    seeded = _Seeded.create(9, greed=2.0)  # a bot that takes seed gets it itself
    assert (seeded.got, seeded.seed, seeded.greed) == (9, 9, 2.0)
    (tmp_path / "plain.py").write_text(
        "from bots.sdk import Bot\n\n"
        "class Plain(Bot):\n"
        "    def __init__(self, greed: float = 1.0):\n"
        "        self.greed = greed\n\n"
        "    def choose(self, view, legal):\n"
        "        return self.rng.choice(legal)\n")
    made = make_bot(f"{tmp_path / 'plain.py'}:Plain", 7, {"greed": "0.5"})
    assert (made.seed, made.rng.random(), made.greed) == (7, draws[0], 0.5)  # type: ignore[attr-defined]
