"""The board component (host/web/static/board.js) in a real browser (issue 26, "A board
people can read"): London's station numbers are at least 11 px tall on screen at the
default fit, on a desktop and on a phone; the wheel, the +/−/fit buttons, the keys and a
pinch zoom it; a drag moves it; a click or a tap near a station (within a finger's reach)
calls the page's hook; legal destinations take the keyboard focus; the grid5 board fits the
window; and the viewers show every seat's tickets next to the board. Headless Chromium via
Selenium (as tests/host/test_web_browser.py), a real match server, a real SQLite file (the
browser and the server are the group's: :mod:`browser_helpers`)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.host.browser_helpers import (
    DESKTOP,
    PHONE,
    Site,
    js,
    load,
    run,
    severe_logs,
    shoot,
    wait_for,
)
from tests.host.web_helpers import CLASSIC_GAME, get_json

pytestmark = pytest.mark.xdist_group("browser")

MIN_LABEL_PX = 11.0
FINGER_PX = 16.0
"""Half of the smallest hit area a finger needs (32 px across)."""


#: The board on the page once laid out (its ``data-scale`` set): its scale, the on-screen
#: size of station labels (font size times the SVG's screen scale, and the drawn text's
#: height), the port's box and where each station's centre is on screen.
BOARD = """
const svg = document.querySelector('svg.board');
if (!svg || !svg.getAttribute('data-scale')) return null;
const port = svg.closest('.board-port').getBoundingClientRect();
const ctm = svg.getScreenCTM();
const texts = [...svg.querySelectorAll('.station text')];
const labels = texts.map(t => parseFloat(getComputedStyle(t).fontSize) * ctm.a);
const heights = texts.map(t => t.getBoundingClientRect().height);
const centres = {};
for (const c of svg.querySelectorAll('.station circle')) {
  const box = c.getBoundingClientRect();
  centres[c.parentNode.getAttribute('data-station')] =
    [box.left + box.width / 2, box.top + box.height / 2, box.width];
}
const vb = svg.viewBox.baseVal;
return {scale: parseFloat(svg.getAttribute('data-scale')), labels, heights, centres,
        port: {left: port.left, top: port.top, right: port.right, bottom: port.bottom},
        viewBox: [vb.x, vb.y, vb.width, vb.height],
        selected: svg.closest('.board-view').getAttribute('data-selected'),
        window: [window.innerWidth, window.innerHeight]};
"""


async def board_state(driver: Any) -> dict[str, Any]:
    return dict(await wait_for(driver, lambda d: d.execute_script(BOARD), "the board laid out"))


async def scale_changes(driver: Any, before: float, grows: bool) -> float:
    """Wait until the board's scale moved past ``before`` (up when ``grows``)."""
    def moved(d: Any) -> Any:
        now = float(d.execute_script(
            "return document.querySelector('svg.board').getAttribute('data-scale')"))
        return now if (now > before) == grows and now != before else None

    return float(await wait_for(driver, moved, f"scale {'above' if grows else 'below'} {before}"))


def inside(point: list[float], box: dict[str, float]) -> bool:
    x, y = point[0], point[1]
    return box["left"] <= x <= box["right"] and box["top"] <= y <= box["bottom"]


async def test_london_labels_are_legible_at_the_default_fit(driver: Any, site: Site) -> None:
    """Station numbers at least 11 px on screen at the default fit: on a desktop the whole
    of London in view, on a phone (390x844) the middle of it at a readable scale."""
    base = site.base
    try:
        for size in (DESKTOP, PHONE):
            await run(driver.set_window_size, *size)
            await load(driver, base, f"#/games/{CLASSIC_GAME}?move=8&view=all")
            board = await board_state(driver)
            assert len(board["labels"]) == 199
            assert min(board["labels"]) >= MIN_LABEL_PX, (size, min(board["labels"]))
            assert min(board["heights"]) >= MIN_LABEL_PX, (size, min(board["heights"]))
            if size == DESKTOP:  # the whole map fits
                outside = [s for s, c in board["centres"].items()
                           if not inside(c, board["port"])]
                assert not outside, outside
                await run(shoot, driver, "board-london")
            # The board never makes the page wider than the window.
            assert await run(js, driver, "return document.documentElement.scrollWidth"
                                         " <= window.innerWidth")
        assert not await run(severe_logs, driver)
    finally:
        await run(driver.set_window_size, *DESKTOP)


async def test_zoom_with_buttons_wheel_keys_pinch_and_drag(driver: Any, site: Site) -> None:
    """+ and − zoom in and out, the fit button goes back to the default scale (the least:
    the whole board), the wheel
    zooms, + - 0 on the focused board too, two pointers pinch, a drag moves the map
    without selecting a station; labels stay legible at every zoom."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin

    base = site.base
    await load(driver, base, f"#/games/{CLASSIC_GAME}?move=3&view=detectives")
    fit = (await board_state(driver))["scale"]
    click = "document.querySelector(arguments[0]).click()"
    await run(js, driver, click, ".board-tools .zoom-in")
    bigger = await scale_changes(driver, fit, grows=True)
    await run(js, driver, click, ".board-tools .zoom-in")
    biggest = await scale_changes(driver, bigger, grows=True)
    await run(js, driver, click, ".board-tools .zoom-out")
    assert await scale_changes(driver, biggest, grows=False) == pytest.approx(bigger)
    await run(js, driver, click, ".board-tools .zoom-reset")
    await wait_for(driver, lambda d: abs(float(d.execute_script(
        "return document.querySelector('svg.board').getAttribute('data-scale')"))
        - fit) < 1e-3, "back to the fit")

    port = await run(driver.find_element, "css selector", ".board-port")
    await run(lambda: ActionChains(driver).scroll_from_origin(
        ScrollOrigin.from_element(port), 0, -300).perform())
    wheeled = await scale_changes(driver, fit, grows=True)
    board = await board_state(driver)
    assert min(board["labels"]) >= MIN_LABEL_PX

    # The keys, on the board when it has the focus (Tab reaches it).
    await run(js, driver, "document.querySelector('.board-port').focus()")
    await run(port.send_keys, "+")
    keyed = await scale_changes(driver, wheeled, grows=True)
    await run(port.send_keys, "0")
    await scale_changes(driver, keyed, grows=False)
    frame = await run(js, driver, "return document.getElementById('viewer')"
                                  ".getAttribute('data-frame')")
    assert frame == "3"  # the board's keys do not step the replay

    # A drag moves the map and selects nothing.
    await run(js, driver, click, ".board-tools .zoom-in")
    await scale_changes(driver, fit, grows=True)
    before = (await board_state(driver))["viewBox"]
    await run(lambda: ActionChains(driver).move_to_element(port).click_and_hold()
              .move_by_offset(-80, -40).move_by_offset(-40, 0).release().perform())
    after = await board_state(driver)
    assert after["viewBox"][0] > before[0] and after["viewBox"][1] > before[1], (before, after)
    assert not after["selected"]

    # A pinch: two touch pointers moving apart zoom in around their middle.
    scale = after["scale"]
    await run(js, driver, """
        const port = document.querySelector('.board-port');
        const box = port.getBoundingClientRect();
        const x = box.left + box.width / 2, y = box.top + box.height / 2;
        const fire = (type, id, dx) => port.dispatchEvent(new PointerEvent(type, {
          pointerId: id, pointerType: 'touch', clientX: x + dx, clientY: y,
          isPrimary: id === 11, bubbles: true, button: 0}));
        fire('pointerdown', 11, -20); fire('pointerdown', 12, 20);
        for (const d of [30, 45, 60]) {
          fire('pointermove', 11, -d); fire('pointermove', 12, d);
        }
        fire('pointerup', 11, -60); fire('pointerup', 12, 60);""")
    pinched = await scale_changes(driver, scale, grows=True)
    assert pinched == pytest.approx(scale * 3, rel=0.05)
    assert not await run(severe_logs, driver)


#: Build a board on an empty test page from /api/boards/london with a hook that records
#: clicks in ``window.clicked``; ``window.board`` is the component.
BUILD = """
const done = arguments[arguments.length - 1];
document.body.removeAttribute('data-ready');
const main = document.getElementById('main');
main.replaceChildren();
const box = document.createElement('div');
box.style.width = '900px';
main.appendChild(box);
Promise.all([import('/static/board.js'), fetch('/api/boards/london').then(r => r.json())])
  .then(([m, json]) => {
    window.clicked = [];
    window.board = m.createBoard(box, json, {onStationClick: (s) => window.clicked.push(s)});
    done(true);
  });
"""


def lonely_station(board: dict[str, Any]) -> tuple[str, list[float]]:
    """The station farthest from its nearest neighbour on screen, and its centre."""
    centres = board["centres"]

    def room(item: tuple[str, list[float]]) -> float:
        sid, (x, y, _) = item
        return float(min(((x - u) ** 2 + (y - v) ** 2) ** 0.5
                         for other, (u, v, _) in centres.items() if other != sid))

    found: tuple[str, list[float]] = max(
        (c for c in centres.items() if inside(c[1], board["port"])), key=room)
    assert room(found) > 2 * FINGER_PX + 4
    return found


async def test_clicking_a_station_calls_the_hook(driver: Any, site: Site) -> None:
    """createBoard's onStationClick gets the station clicked, also when the click lands
    up to 16 px from its centre (a finger's 32 px target), and none for a click in the
    middle of nowhere; markLegal's stations take the focus and Enter picks them; in the
    replay viewer a click selects the station."""
    from selenium.webdriver.common.action_chains import ActionChains

    base = site.base
    await load(driver, base, "#/nope")  # a page that stays as it is
    assert await run(driver.execute_async_script, BUILD)
    board = await board_state(driver)
    assert min(board["labels"]) >= MIN_LABEL_PX
    station, (x, y, _width) = lonely_station(board)
    port = await run(driver.find_element, "css selector", ".board-port")
    rect = board["port"]
    middle = ((rect["left"] + rect["right"]) / 2, (rect["top"] + rect["bottom"]) / 2)

    def click_at(px: float, py: float) -> None:
        ActionChains(driver, duration=0).move_to_element_with_offset(
            port, round(px - middle[0]), round(py - middle[1])).click().perform()

    await run(click_at, x + FINGER_PX - 2, y)
    await run(click_at, x, y - FINGER_PX + 2)
    await wait_for(driver, lambda d: len(d.execute_script("return window.clicked")) == 2,
                   "two clicks")
    assert await run(js, driver, "return window.clicked") == [int(station)] * 2

    # Legal destinations: focusable, Enter calls the hook.
    await run(js, driver, "window.board.markLegal([1, 8]); window.board.select(8);")
    legal = await run(js, driver, "return [...document.querySelectorAll("
                                  "'.station.legal[tabindex=\"0\"]')]"
                                  ".map(g => g.getAttribute('data-station'))")
    assert legal == ["1", "8"]
    assert await run(js, driver, "return window.board.selected") == 8
    target = await run(driver.find_element, "css selector", '.station[data-station="8"]')
    await run(js, driver, "arguments[0].focus()", target)
    from selenium.webdriver.common.keys import Keys

    await run(target.send_keys, Keys.ENTER)
    await wait_for(driver, lambda d: d.execute_script("return window.clicked").count(8),
                   "Enter on a legal station")
    await run(js, driver, "window.board.destroy()")

    # The replay viewer: a click selects the station, a second one unselects it.
    await load(driver, base, f"#/games/{CLASSIC_GAME}?move=2&view=all")
    board = await board_state(driver)
    station, (x, y, _width) = lonely_station(board)
    port = await run(driver.find_element, "css selector", ".board-port")
    rect = board["port"]
    middle = ((rect["left"] + rect["right"]) / 2, (rect["top"] + rect["bottom"]) / 2)
    await run(click_at, x + 5, y + 5)
    await wait_for(driver, lambda d: d.execute_script(
        "return document.querySelector('.board-view').getAttribute('data-selected')")
        == station, f"station {station} selected")
    assert await run(js, driver, "return document.querySelectorAll('.station.selected')"
                                 ".length") == 1
    await run(click_at, x, y)
    await wait_for(driver, lambda d: d.execute_script(
        "return document.querySelector('.board-view').getAttribute('data-selected')")
        == "", "unselected")
    assert not await run(severe_logs, driver)


async def test_grid5_board_fits_the_window(driver: Any, site: Site) -> None:
    """A grid5 replay shows the whole board in the window, on a desktop and on a phone."""
    base = site.base
    _, listing = await get_json(f"{base}api/games?rules=grid5&limit=1")
    game = listing["games"][0]["game_id"]
    try:
        for size in (DESKTOP, PHONE):
            await run(driver.set_window_size, *size)
            await load(driver, base, f"#/games/{game}?move=4")
            board = await board_state(driver)
            assert len(board["centres"]) == 25
            port, (width, height) = board["port"], board["window"]
            assert port["bottom"] - port["top"] <= height and port["right"] <= width, board
            assert all(inside(c, port) for c in board["centres"].values()), board
            assert min(board["labels"]) >= MIN_LABEL_PX
            if size == DESKTOP:
                assert port["bottom"] <= height, port  # no scrolling to see it
    finally:
        await run(driver.set_window_size, *DESKTOP)


async def test_the_viewers_show_every_seats_tickets(driver: Any, site: Site) -> None:
    """Next to the board: every seat's remaining tickets, as the replay's frame says."""
    base = site.base
    _, full = await get_json(f"{base}api/games/{CLASSIC_GAME}?perspective=detectives")
    for frame in (0, 7):
        await load(driver, base, f"#/games/{CLASSIC_GAME}?move={frame}&view=detectives")
        shown = await run(js, driver, """
            const out = {};
            for (const tr of document.querySelectorAll('#tickets tbody tr')) {
              out[tr.getAttribute('data-seat')] = Object.fromEntries(
                [...tr.querySelectorAll('td[data-ticket]')]
                  .map(td => [td.getAttribute('data-ticket'), Number(td.textContent)]));
            }
            return out;""")
        assert shown == full["frames"][frame]["tickets"], frame
    assert not await run(severe_logs, driver)


#: What may hide a station's number: the zoom buttons (boxes that meet the board's box)
#: and the pieces' discs. A number a disc meets must be written again in the layer over
#: the pieces (``.lifted``, the board's top layer), as must every piece's own station,
#: which must not sit on another number (``crowded``).
COVERS = """
const svg = document.querySelector('svg.board');
const port = document.querySelector('.board-port').getBoundingClientRect();
const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom &&
  b.top < a.bottom;
// A disc (its box's inscribed circle) meets a box where the box's nearest point is in it.
const touches = (box, d) => {
  const r = d.width / 2, cx = d.left + r, cy = d.top + r;
  const x = Math.max(box.left, Math.min(cx, box.right));
  const y = Math.max(box.top, Math.min(cy, box.bottom));
  return Math.hypot(x - cx, y - cy) < r;
};
const tools = [...document.querySelectorAll('.board-tools button')]
  .filter(b => meets(b.getBoundingClientRect(), port)).map(b => b.className);
const pieces = [...svg.querySelectorAll('.piece:not(.last-seen)')];
const discs = pieces.map(p => p.querySelector('circle').getBoundingClientRect());
const occupied = new Set(pieces.map(p => p.getAttribute('data-station')));
const top = svg.lastElementChild;
const over = (cls, station) => top.classList.contains('lifted') &&
  top.querySelector(`text.${cls}[data-station="${station}"]`)?.textContent === station;
const hidden = [...svg.querySelectorAll('.station text')].filter(t => {
  const box = t.getBoundingClientRect();
  return !occupied.has(t.textContent) && meets(box, port) && discs.some(d => touches(box, d)) &&
    !over('over-piece', t.textContent);
}).map(t => t.textContent);
const unnamed = [...occupied].filter(st => !over('piece-at', st));
// A piece's own number against every other number shown (labels and lifted copies).
const others = [...svg.querySelectorAll('.station text, .lifted text.over-piece')]
  .filter(t => !occupied.has(t.textContent));
const crowded = [...top.querySelectorAll('text.piece-at')].flatMap(t => {
  const box = t.getBoundingClientRect();
  return meets(box, port) ? others.filter(o => meets(box, o.getBoundingClientRect()))
    .map(o => [t.textContent, o.textContent]) : [];
});
return {tools, hidden, unnamed, crowded, pieces: pieces.length};
"""


async def test_zoom_buttons_and_pieces_never_hide_a_station_number(
        driver: Any, site: Site) -> None:
    """On a desktop and on a phone, at the default fit and zoomed in: the zoom buttons
    sit outside the board; every piece's station number is written by it, on no other
    number, and every number a piece's disc reaches is written again over the pieces."""
    base = site.base
    try:
        for size in (DESKTOP, PHONE):
            await run(driver.set_window_size, *size)
            for frame in (0, 8, "end"):
                await load(driver, base, f"#/games/{CLASSIC_GAME}?move={frame}&view=all")
                await board_state(driver)
                for zoom in ("fit", "in"):
                    if zoom == "in":
                        await run(js, driver, "document.querySelector("
                                              "'.board-tools .zoom-in').click()")
                    covers = await run(js, driver, COVERS)
                    where = (size, frame, zoom)
                    assert covers["pieces"] >= 6, (where, covers)
                    assert covers["tools"] == [] and covers["unnamed"] == [], (where, covers)
                    assert covers["hidden"] == [], (where, covers["hidden"])
                    assert covers["crowded"] == [], (where, covers["crowded"])
                    if (size, frame, zoom) == (PHONE, "end", "fit"):
                        await run(shoot, driver, "board-numbers-phone")
    finally:
        await run(driver.set_window_size, *DESKTOP)
