"""Every page on a phone (issue 26, "Phones"): at 390x844 no address of the router's
route list (tests/host/test_web_pages.py) makes the page wider than the screen (tables scroll in
boxes of their own, the menu wraps), the replay controls stay in view while the board is
scrolled to, a replay keeps where each move went (and where the game ended) on the part of
London a phone shows (issue 43), and a live game fits too. Headless Chromium via Selenium (as
tests/host/test_web_browser.py), a real match server, a real SQLite file."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.host.browser_helpers import (
    DESKTOP,
    FIT,
    PHONE,
    Site,
    assert_fits,
    js,
    load,
    run,
    shoot,
    wait_for,
)
from tests.host.test_web_pages import visit_routes
from tests.host.web_helpers import CLASSIC_GAME, live_grid5_game

pytestmark = pytest.mark.xdist_group("browser")

@pytest.fixture
def phone(driver: Any) -> Iterator[Any]:
    """The browser at 390x844 (the desktop size again afterwards)."""
    driver.set_window_size(*PHONE)
    try:
        yield driver
    finally:
        driver.set_window_size(*DESKTOP)


async def test_no_page_is_wider_than_a_phone(driver: Any, site: Site) -> None:
    """Every route of :func:`test_web_pages.routes` at 390x844: no sideways page scroll,
    no element past the right edge but inside a box that scrolls by itself. (The walk
    over the routes is the route test's, :func:`test_web_pages.visit_routes`.)"""
    for visit in (await visit_routes(driver, site)).visits:
        assert visit.page["settled"], (visit.hash, visit.page["at"])
        assert visit.board is None, visit.board
        assert_fits(visit.fit, visit.hash)


#: Whether station ``arguments[0]`` is well inside the board's box (20 px from its edges),
#: once the board is laid out; null before.
STATION_IN_PORT = """
const port = document.querySelector('.board-port');
const dot = document.querySelector(`svg.board .station[data-station="${arguments[0]}"] circle`);
const scale = document.querySelector('svg.board')?.getAttribute('data-scale');
if (!port || !dot || !scale) return null;
const p = port.getBoundingClientRect(), b = dot.getBoundingClientRect();
const x = b.left + b.width / 2, y = b.top + b.height / 2;
return x > p.left + 20 && x < p.right - 20 && y > p.top + 20 && y < p.bottom - 20;
"""

#: Click Next through the whole replay; the frames whose station (``arguments[0][i]``) is
#: not in view (or that Next did not reach).
STEP_THROUGH = """
const stations = arguments[0], out = [];
for (let i = 1; i < stations.length; i++) {
  document.getElementById('next').click();
  const frame = document.getElementById('viewer').getAttribute('data-frame');
  if (frame !== String(i)) { out.push([i, 'frame ' + frame]); break; }
  if (!inPort(stations[i])) out.push([i, stations[i]]);
}
return out;
"""
STATION_IN_PORT_FN = "function inPort(station) {" + STATION_IN_PORT.replace(
    "arguments[0]", "station") + "}"


def _moved_to(record: dict[str, Any]) -> list[int]:
    """Where each frame happens: the station of the piece that moved into it (Mister X
    where a double or single move of his took him), Mister X's for the start."""
    out = [record["frames"][0]["mrx"]]
    for frame in record["frames"][1:]:
        seat = frame["turn"]["seat"]
        out.append(frame["mrx"] if seat == "mrx" else
                   frame["detectives"][int(seat[1:]) - 1])
    return out


async def test_a_phone_replay_shows_where_each_move_and_the_game_ended(
        phone: Any, site: Site) -> None:
    """A phone shows part of London: a finished game's replay opens at its end with
    Mister X's last station in view, and stepping through the whole game with Next keeps
    the station each move went to in view."""
    base = site.base
    record = await run(lambda: json.load(urllib.request.urlopen(
        f"{base}api/games/{CLASSIC_GAME}?perspective=all", timeout=30)))
    stations = _moved_to(record)
    last = len(stations) - 1

    async def shown(frame: int, station: int) -> None:
        await wait_for(phone, lambda d: d.find_element("id", "viewer")
                       .get_attribute("data-frame") == str(frame), f"frame {frame}")
        # Read twice in a row alike: the board refits in observer callbacks after a load.
        reads: list[Any] = []

        def steady(d: Any) -> bool:
            reads.append(d.execute_script(STATION_IN_PORT, station))
            return len(reads) > 1 and reads[-1] is not None and reads[-1] == reads[-2]

        await wait_for(phone, steady, f"frame {frame} laid out")
        assert reads[-1], (frame, station, "out of view")

    await load(phone, base, f"#/games/{CLASSIC_GAME}?move=end&view=all")
    await shown(last, record["mrx_path"][-1])
    await load(phone, base, f"#/games/{CLASSIC_GAME}?move=0&view=all")
    await shown(0, stations[0])
    # Next renders (and pans) at once: the whole game stepped through in one script.
    out_of_view = await run(js, phone, STEP_THROUGH + STATION_IN_PORT_FN, stations)
    assert out_of_view == [], out_of_view


async def test_replay_controls_stay_in_view_on_a_phone(phone: Any, site: Site) -> None:
    """Scrolled down to the board and to the panels under it, the replay controls are
    still on screen (they stick to the top) and still work."""
    base = site.base
    await load(phone, base, f"#/games/{CLASSIC_GAME}?move=8&view=all")
    await wait_for(phone, lambda d: d.execute_script(
        "return document.querySelector('svg.board').getAttribute('data-scale')"), "board")
    assert_fits(await run(js, phone, FIT), "replay")
    await run(shoot, phone, "phone-replay")
    for target in (".board-view", "#tickets", ".turns"):
        box = await run(js, phone, """
            document.querySelector(arguments[0]).scrollIntoView();
            const next = document.getElementById('next').getBoundingClientRect();
            return {top: next.top, bottom: next.bottom, height: window.innerHeight,
                    scrolled: window.scrollY};""", target)
        assert box["scrolled"] > 0, (target, box)
        assert box["top"] >= 0 and box["bottom"] <= box["height"], (target, box)
    await run(js, phone, "document.getElementById('next').click()")
    await wait_for(phone, lambda d: d.find_element("id", "viewer")
                   .get_attribute("data-frame") == "9", "stepped from the stuck controls")


async def test_live_game_fits_a_phone(phone: Any, tmp_path: Path) -> None:
    """A running game's page at 390x844: the board, the tickets panel (grid5 counts none),
    no sideways scroll."""
    async with live_grid5_game(tmp_path, 6) as live:
        await load(phone, live.base, f"#/live/{live.game}")
        await wait_for(phone, lambda dr: dr.execute_script(
            "return document.querySelector('svg.board').getAttribute('data-scale')"), "board")
        assert_fits(await run(js, phone, FIT), "live")
        tickets = await run(js, phone, "return document.getElementById('tickets').textContent")
        assert tickets == "Tickets are not counted in this ruleset."  # grid5
