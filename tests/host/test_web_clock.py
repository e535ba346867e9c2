"""Both clocks on the Play page (issue 43): the person's own, which the server sends, and
the opponent's, which the page reckons from the time control; the opponent's ticks while it
thinks, and stops when its move comes. A real ``yard serve`` whose only house bot takes
three seconds a move (:mod:`tests.host.slow_bot`), headless Chromium."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.host.browser_helpers import severe_logs
from tests.host.play_serving import Server, free_port, start, state, wait

pytestmark = pytest.mark.xdist_group("browser")
RECORD_WEBSOCKETS = True

THINKER = "tests/host/slow_bot.py:SlowMrX:delay=3"

#: Both clocks as shown: each one's text and whether it is marked as running.
CLOCKS = """
const read = (id) => {
  const el = document.getElementById(id);
  return el ? {text: el.textContent, ticking: el.classList.contains('ticking')} : null;
};
return {mine: read('clock-mine'), theirs: read('clock-theirs')};
"""


def _move_seconds(text: str) -> int:
    """The "M:SS for this move" of a clock's text, in seconds."""
    found = re.search(r"(\d+):(\d\d) for this move", text)
    assert found, text
    return int(found[1]) * 60 + int(found[2])


@pytest.fixture
def thinker(tmp_path: Path) -> Iterator[Server]:
    """A server whose one house bot thinks three seconds a move (no house games)."""
    server = Server(tmp_path, free_port(), [THINKER], ("--house-rate", "0"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_the_opponents_clock_ticks_while_it_thinks(driver: Any, thinker: Server) -> None:
    """The person plays the detectives; Mister X (the bot) moves first and thinks three
    seconds: meanwhile the page shows his clock running down second by second and the
    person's own standing; on the person's turn it is the other way round."""
    start(driver, thinker.base, "tess", THINKER)
    first = wait(driver, lambda d: (c := d.execute_script(CLOCKS))["theirs"]
                 and c["theirs"]["ticking"] and c, "the bot's clock running")
    assert first["mine"] is not None and not first["mine"]["ticking"], first
    assert "for this move" not in first["mine"]["text"], first  # only the bank, standing
    assert first["theirs"]["text"].startswith(f"{THINKER}: "), first
    start_s = _move_seconds(first["theirs"]["text"])

    def ran_down(d: Any) -> dict[str, Any] | None:
        now = d.execute_script(CLOCKS)
        theirs = now["theirs"]
        return now if theirs and theirs["ticking"] and \
            _move_seconds(theirs["text"]) < start_s else None

    later = wait(driver, ran_down, "the bot's clock a second lower while it thinks")
    assert not later["mine"]["ticking"], later
    # The bot has not moved yet: no rings for the person.
    assert (state(driver) or {}).get("legal") == 0, state(driver)
    mine = wait(driver, lambda d: (c := d.execute_script(CLOCKS))["mine"]["ticking"] and c,
                "the person's turn")
    assert "for this move" in mine["mine"]["text"], mine
    assert mine["theirs"] is not None and not mine["theirs"]["ticking"], mine
    assert "for this move" not in mine["theirs"]["text"], mine
    driver.find_element("id", "resign").click()
    driver.find_element("id", "resign").click()
    wait(driver, lambda d: (s := state(d)) and s["state"] == "over", "the game over")
    assert not severe_logs(driver)
