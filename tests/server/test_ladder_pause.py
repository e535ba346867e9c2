"""A paused ladder bot is told until when, told again when it reconnects meanwhile, and
is matched again the moment its pause ends (the core wakes up for it: before, nothing
started until some game ended or a bot connected). The sans-I/O core with a fake clock;
and the pause as ``yard serve --help``, docs/protocol.md and docs/ladder.md describe it."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

from protocol import Error, ErrorCode, GameStart, YourTurn
from tests.server.test_ladder_core import Harness, first_legal
from yard.cli import cli

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAUSE_S = 60.0


class Flaky:
    """A bot that never moves until ``fixed``, then plays its first legal move."""

    def __init__(self) -> None:
        self.fixed = False

    def __call__(self, turn: YourTurn) -> str | None:
        return first_legal(turn) if self.fixed else None


def _paused(h: Harness, conn: int) -> list[str]:
    return [e.message for e in h.of(conn, Error)  # type: ignore[attr-defined]
            if e.code is ErrorCode.LADDER_PAUSED]  # type: ignore[attr-defined]


def test_a_paused_bot_is_told_until_when_and_matched_again_when_it_ends() -> None:
    h = Harness(games=1000, ladder=("grid5",), ladder_pause_after=3, ladder_pause_s=PAUSE_S)
    flaky = Flaky()
    lazy = h.hello("lazy", flaky, ladder=["grid5"])
    keen = h.hello("keen", ladder=["grid5"])
    h.run(3 * 1.0 + 0.5)  # three 1 s timeouts in a row: paused
    (told,) = _paused(h, lazy)
    entrant = h.core.ladder.entrants["lazy"]  # type: ignore[union-attr]
    until = datetime.fromtimestamp(entrant.paused_until, UTC).isoformat(timespec="seconds")
    assert f"paused from the ladder until {until} (60 s) after 3 forfeits in a row" in told
    assert h.core.next_deadline() == entrant.paused_until  # the core wakes up for it

    # It reconnects while paused (a new session): told again, with the same time.
    h.feed(h.core.disconnect(lazy, h.now))
    flaky.fixed = True
    again = h.hello("lazy", flaky, ladder=["grid5"])
    assert _paused(h, again) == [told] and not h.of(again, GameStart)

    # Nothing else happens; at the end of the pause the two are matched at once.
    starts = len(h.of(keen, GameStart))
    h.run(entrant.paused_until - h.now - 0.001)
    assert len(h.of(keen, GameStart)) == starts and not h.of(again, GameStart)
    h.run(0.002)
    assert h.of(again, GameStart) and entrant.paused is None
    assert len(_paused(h, again)) == 1  # it plays now: no new pause


def test_serve_help_and_the_docs_say_the_same_about_pauses() -> None:
    result = CliRunner().invoke(cli, ["serve", "--help"], terminal_width=200)
    assert result.exit_code == 0
    help_text = " ".join(result.output.split())
    protocol = " ".join((DOCS / "protocol.md").read_text().split())
    ladder = " ".join((DOCS / "ladder.md").read_text().split())
    for text in (help_text, protocol, ladder):
        assert re.search(r"10 minutes, doubled for each (further )?pause in a row", text), text
        assert "reconnecting does not lift" in text.lower()
    assert "until it connects again" not in help_text
    assert "once it connects again" not in protocol
