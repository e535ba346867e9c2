"""The one bot-spec grammar (bots/spec.py) and the registry that resolves specs."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from bots.registry import UnknownBotError, bot_class, bot_from_spec, default_name
from bots.spec import (
    BotSpec,
    BotSpecError,
    parse_option_pairs,
    parse_spec,
    parse_spec_list,
    split_spec_list,
)
from yard.cli.options import BOT_SPEC, BOT_SPEC_LIST, OPTION_PAIR

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(("text", "ref", "options"), [
    ("random", "random", {}),
    ("mcts:iterations=200,c=0.5", "mcts", {"iterations": "200", "c": "0.5"}),
    ("alphabeta:depth=2:time=0", "alphabeta", {"depth": "2", "time": "0"}),   # train syntax
    ("mcts:iterations=200:c=0.5,filter=true", "mcts",
     {"iterations": "200", "c": "0.5", "filter": "true"}),
    ("mybot.py:Closer", "mybot.py:Closer", {}),
    ("path/to/my-bot.py:Closer:depth=3,x=y", "path/to/my-bot.py:Closer",
     {"depth": "3", "x": "y"}),
    ("pkg.mod:Closer,depth=3", "pkg.mod:Closer", {"depth": "3"}),
    ("dqn:weights=/tmp/a:b,c.npz", "dqn", {"weights": "/tmp/a:b,c.npz"}),  # values keep , :
    ("mcts:lc_file=", "mcts", {"lc_file": ""}),
    (" greedy ", "greedy", {}),
])
def test_parse_spec(text: str, ref: str, options: dict[str, str]) -> None:
    spec = parse_spec(text)
    assert spec.ref == ref
    assert spec.option_dict() == options
    assert parse_spec(str(spec)) == spec  # the canonical form parses back


@pytest.mark.parametrize("text", ["", ":x=1", "mcts:=1", "a b", "a+b",
                                  "file.py:", "file.py:1x", "x:y:z"])
def test_bad_specs_are_rejected(text: str) -> None:
    with pytest.raises(BotSpecError):
        parse_spec(text)


def test_spec_lists_keep_options_with_their_bot() -> None:
    assert split_spec_list("mcts:iterations=200,c=0.5,random") == \
        ["mcts:iterations=200,c=0.5", "random"]
    specs = parse_spec_list("rush, mybot.py:Closer:depth=2,x=1 ,alphabeta:depth=2:time=0")
    assert [s.ref for s in specs] == ["rush", "mybot.py:Closer", "alphabeta"]
    assert specs[1].option_dict() == {"depth": "2", "x": "1"}
    with pytest.raises(BotSpecError, match="empty"):
        parse_spec_list("rush,,random")
    with pytest.raises(BotSpecError, match="empty"):
        parse_spec_list("")


def test_option_pairs_and_merging() -> None:
    assert parse_option_pairs(["c=2", " iterations = 5 "]) == {"c": "2", "iterations": "5"}
    with pytest.raises(BotSpecError):
        parse_option_pairs(["c"])
    spec = parse_spec("mcts:c=1").with_options({"c": "2", "r": "0.1"})
    assert spec == BotSpec("mcts", (("c", "2"), ("r", "0.1")))
    assert spec.option_strings() == ["c=2", "r=0.1"]


def test_click_types_report_grammar_errors_with_the_option() -> None:
    @click.command()
    @click.option("--bot", type=BOT_SPEC)
    @click.option("--bots", type=BOT_SPEC_LIST)
    @click.option("--option", "options", type=OPTION_PAIR, multiple=True)
    def cmd(bot: BotSpec, bots: list[BotSpec], options: tuple[tuple[str, str], ...]) -> None:
        click.echo(f"{bot}|{'|'.join(map(str, bots))}|{dict(options)}")

    ok = CliRunner().invoke(cmd, ["--bot", "mcts:c=1:r=0", "--bots", "a:x=1,y=2,b",
                                  "--option", "k=v"])
    assert ok.output.strip() == "mcts:c=1,r=0|a:x=1,y=2|b|{'k': 'v'}"
    for args in (["--bot", "a b"], ["--bots", "a,,b"], ["--option", "nokey"]):
        bad = CliRunner().invoke(cmd, args)
        assert isinstance(bad.exception, BotSpecError), args  # yard prints it, exits 2
        assert str(bad.exception).startswith(args[0] + ": ")


def test_class_specs_load_files_and_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    closer = bot_from_spec(f"{EXAMPLES / 'closer_bot.py'}:Closer", seed=1)
    assert closer.name == "closer"
    assert default_name(f"{EXAMPLES / 'closer_bot.py'}:Closer") == "closer"
    (tmp_path / "helper.py").write_text("STEP = 3\n")
    (tmp_path / "mine.py").write_text(textwrap.dedent("""
        from helper import STEP
        from bots.sdk import Bot

        class Mine(Bot):
            name = "mine"

            def __init__(self, seed=None, depth: int = 1):
                super().__init__(seed)
                self.depth = depth * STEP

            def choose(self, view, legal):
                return legal[0]

        class NotABot:
            pass
    """))
    bot = bot_from_spec(f"{tmp_path / 'mine.py'}:Mine:depth=2")
    assert bot.depth == 6  # type: ignore[attr-defined]
    monkeypatch.chdir(tmp_path)
    assert bot_class("mine:Mine").name == "mine"          # module:Class from the cwd
    with pytest.raises(UnknownBotError, match="not a subclass"):
        bot_class("mine.py:NotABot")
    with pytest.raises(UnknownBotError, match="has no 'Gone'"):
        bot_class("mine.py:Gone")
    with pytest.raises(BotSpecError, match="does not exist"):
        bot_class("nothere.py:Mine")
    with pytest.raises(UnknownBotError, match="cannot import"):
        bot_class("no_such_module_xyz:Mine")
    with pytest.raises(UnknownBotError, match="unknown bot 'nope'"):
        bot_class("nope")


def test_cli_rejects_bad_specs_in_one_line() -> None:
    yard = [sys.executable, "-c", "import sys; from yard.cli import main; main(sys.argv[1:])"]
    out = subprocess.run([*yard, "bots", "--check", "mcts:foo"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 2
    assert "'foo' is not key=value" in out.stderr
    out = subprocess.run([*yard, "play", "--mrx", "random", "--games", "2",
                          "--detectives", f"{EXAMPLES / 'closer_bot.py'}:Closer", "--json"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert '"detective_wins"' in out.stdout
