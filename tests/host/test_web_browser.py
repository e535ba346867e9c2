"""The pages in a real browser: headless Chromium (Debian's ``chromium-headless-shell`` or
``chromium``, with ``chromium-driver``) driven by Selenium, against a real match server on a
real SQLite file (the browser and the server on the seeded database are the group's, shared
with the other browser test modules: :mod:`browser_helpers`).

Screenshots of the main pages go to ``$YARD_SCREENSHOTS`` (default: ``build/screenshots``
in the repository). Without a browser these tests are skipped locally and fail under
``CI=true``.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from db.store import Database
from protocol import PROTOCOL_VERSION, StartMatch, TimeControl
from server.admin import AdminClient
from tests.host.browser_helpers import (
    WAIT_S,
    Site,
    js,
    record_websockets,
    run,
    severe_logs,
    shoot,
    stop_recording,
    wait_for,
)
from tests.host.web_helpers import CLASSIC_GAME, XSS, get_json, running_server, truth_path

SLOW_BOT = Path(__file__).resolve().parents[1] / "data" / "slow_bot.py"

# The browser test modules share one headless Chromium: one worker runs them all.
pytestmark = pytest.mark.xdist_group("browser")


async def open_page(driver: Any, url: str) -> None:
    """Load ``url`` and wait until the router has rendered it."""
    await run(driver.get, "about:blank")
    await run(driver.get, url)
    await wait_for(driver, lambda d: d.execute_script(
        "return document.body.getAttribute('data-ready') !== null"), f"{url} rendered")


async def test_leaderboard_page_shows_the_ratings(driver: Any, site: Site) -> None:
    base = site.base
    _, board = await get_json(f"{base}api/leaderboard?rules=grid5")
    _, matrix = await get_json(f"{base}api/matrix?rules=grid5")
    await open_page(driver, f"{base}#/?rules=grid5")
    rows = await run(js, driver, """
        const rows = 'table.leaderboard[data-ruleset="grid5"] tbody tr';
        return [...document.querySelectorAll(rows)]
          .map(tr => [...tr.children].map(td => td.textContent));""")
    assert [r[1] for r in rows] == [row["player"] for row in board["rows"]]
    assert [r[2] for r in rows] == [f"{row['elo']:.0f}" for row in board["rows"]]
    assert [r[8] for r in rows] == [str(row["games"]) for row in board["rows"]]
    cells = await run(js, driver, """
        return [...document.querySelectorAll('table.matrix[data-ruleset="grid5"] td.cell')]
          .map(td => td.getAttribute('data-rate'));""")
    rates = [c["rate"] for row in matrix["cells"] for c in row if c["games"]]
    assert [float(c) for c in cells if c is not None] == pytest.approx(rates)
    # The XSS bot name is text, never markup: no <img>, no alert, its name shown as is.
    assert await run(js, driver, "return document.querySelectorAll('main img').length") == 0
    names = await run(js, driver, "return [...document.querySelectorAll('td.player')]"
                                  ".map(td => td.textContent)")
    assert XSS in names
    assert not await run(severe_logs, driver)
    await run(shoot, driver, "leaderboard")
    await open_page(driver, f"{base}#/tournaments")
    await wait_for(driver, lambda d: d.find_elements("css selector", "#tournaments tr"),
                   "tournament list")
    text = await run(lambda: driver.find_element("id", "tournaments").text)
    assert "12/12" in text and "finished" in text and XSS in text
    await run(shoot, driver, "tournaments")
    await open_page(driver, f"{base}#/tournaments/{site.seeded.tournament_id}")
    await wait_for(driver, lambda d: d.find_elements("css selector", "#games tr"), "games")
    sprt = await run(lambda: driver.find_element("id", "sprt").text)
    assert "greedy vs random" in sprt and "1 / 2 / 5 / 2 / 2" in sprt
    deals = await run(lambda: driver.find_element("id", "deals").text)
    assert "seed 0 (reproducible, predictable" in deals  # stored before secret deals
    await run(shoot, driver, "tournament")
    await open_page(driver, f"{base}#/games?player={XSS}")
    await wait_for(driver, lambda d: d.find_elements("css selector", "#games tbody tr"),
                   "filtered games")
    shown = await run(js, driver, "return document.querySelectorAll('#games tbody tr')"
                                  ".length")
    assert shown == 8
    assert await run(js, driver, "return document.querySelectorAll('main img').length") == 0
    await run(shoot, driver, "games")
    assert not await run(severe_logs, driver)


async def _replay_state(driver: Any, step: bool = False) -> dict[str, Any]:
    """What the replay viewer shows; ``step``: after a click on its ▶ button first (in the
    page, in the same round trip: the viewer renders the next frame as it is clicked)."""
    return await run(js, driver, """
        if (arguments[0]) document.getElementById('next').click();
        const v = document.getElementById('viewer');
        const mrx = document.querySelector('.piece.mrx');
        const seen = document.querySelector('.piece.last-seen');
        return {
          frame: Number(v.getAttribute('data-frame')),
          perspective: v.getAttribute('data-perspective'),
          mrx: mrx ? Number(mrx.getAttribute('data-station')) : null,
          mrxNodes: document.querySelectorAll('.mrx, .path').length,
          lastSeen: seen ? Number(seen.getAttribute('data-station')) : null,
          detectives: [...document.querySelectorAll('.piece.detective')]
            .map(p => Number(p.getAttribute('data-station'))),
          possible: [...document.querySelectorAll('.station.possible')]
            .map(p => Number(p.getAttribute('data-station'))).sort((a, b) => a - b),
          log: [...document.querySelectorAll('#travel-log .slot')]
            .map(s => s.querySelector('.st').textContent),
          // What of Mister X the page as driver.page_source serializes it names, looked
          // for in the page (one round trip, not the whole London page every frame).
          named: ((html) => ['data-mrx', 'class="piece mrx'].filter(s => html.includes(s)))(
            document.documentElement.outerHTML),
        };""", step)


async def test_replay_viewer_three_perspectives(driver: Any, site: Site) -> None:
    from selenium.webdriver.common.keys import Keys

    record = site.seeded.classic
    truth = truth_path(record)
    reveals = set(record.ruleset_definition["reveal_moves"])
    base = site.base
    _, full = await get_json(f"{base}api/games/{CLASSIC_GAME}")
    double = next(i for i, f in enumerate(full["frames"])
                  if f["turn"] and len(f["turn"]["legs"]) == 2)
    secret = next(i for i, f in enumerate(full["frames"]) if f["turn"] and any(
        leg["ticket"] == "secret" for leg in f["turn"]["legs"]))
    # Omniscient, by permalink: the true station, the path and the possible set.
    await open_page(driver, f"{base}#/games/{CLASSIC_GAME}?move={double}&view=all")
    state = await _replay_state(driver)
    assert (state["frame"], state["perspective"]) == (double, "all")
    assert state["mrx"] == truth[double][0]
    assert state["possible"] == full["frames"][double]["possible"]
    assert state["detectives"] == full["frames"][double]["detectives"]
    assert state["log"][:truth[double][1]] == [str(e["station"]) for e in
                                               full["log"][:truth[double][1]]]
    turns = await run(js, driver, "return [...document.querySelectorAll("
                                  "'.turns tbody tr')].map(tr => tr.textContent)")
    assert "random_move_on_timeout" in turns[0] and "timed out (details)" in turns[0]
    assert "1.250 s" in turns[0] and "playouts 321" in turns[0]
    assert "nodes 4096" in turns[1] and "depth 3" in turns[1]
    # The turns table fits its panel: the fault's long name wraps, nothing to scroll to.
    fit = await run(js, driver, "const p = document.querySelector('.turns');"
                                "return [p.querySelector('table').scrollWidth, p.clientWidth]")
    assert fit[0] <= fit[1], fit
    await run(shoot, driver, "replay-omniscient")
    # Step with the keyboard and the buttons; the permalink follows.
    body = await run(driver.find_element, "tag name", "body")
    await run(body.send_keys, Keys.ARROW_RIGHT)
    assert (await _replay_state(driver))["frame"] == double + 1
    await run(body.send_keys, Keys.ARROW_LEFT)
    await run(body.send_keys, Keys.ARROW_LEFT)
    assert (await _replay_state(driver))["frame"] == double - 1
    await run(lambda: driver.find_element("id", "next").click())
    assert (await _replay_state(driver))["frame"] == double
    assert f"move={double}&view=all" in await run(lambda: driver.current_url)
    # Mister X's perspective: his station, no possible-set shading.
    await run(lambda: driver.find_element("css selector",
                                          "[data-perspective=mrx]").click())
    await wait_for(driver, lambda d: d.find_element("id", "viewer")
                   .get_attribute("data-perspective") == "mrx", "mrx perspective")
    state = await _replay_state(driver)
    assert state["mrx"] == truth[double][0] and state["possible"] == []
    await run(shoot, driver, "replay-mrx")
    # The detectives' perspective, every frame: Mister X only where he surfaced.
    await run(lambda: driver.find_element("css selector",
                                          "[data-perspective=detectives]").click())
    await wait_for(driver, lambda d: d.find_element("id", "viewer")
                   .get_attribute("data-perspective") == "detectives", "detectives")
    await run(lambda: driver.find_element("id", "first").click())
    for frame in range(len(full["frames"])):
        # The next frame: the ▶ button, clicked in the page (the keys and the button were
        # driven through WebDriver above; its key events cost 80 ms a frame).
        state = await _replay_state(driver, step=frame > 0)
        assert state["frame"] == frame
        assert state["mrxNodes"] == 0 and state["mrx"] is None
        moves = truth[frame][1]
        for slot, text in enumerate(state["log"][:moves], start=1):
            expected = str(full["log"][slot - 1]["station"]) if slot in reveals else "?"
            assert text == expected, (frame, slot)
        last = max((s for s in reveals if s <= moves), default=None)
        assert state["lastSeen"] == (None if last is None else
                                     full["log"][last - 1]["station"])
        assert state["possible"] == full["frames"][frame]["possible"]
        assert state["named"] == [], (frame, state["named"])
        if frame == secret:
            await run(shoot, driver, "replay-detectives")
        if frame == 1:
            fault = await run(js, driver, "return document.querySelector("
                                          "'.turns tbody tr').textContent")
            assert "random_move_on_timeout" in fault and "details" not in fault
    # The secret and double moves show as tickets in the travel log.
    tickets = await run(js, driver, "return [...document.querySelectorAll("
                                    "'#travel-log .slot .t')].map(t => t.textContent)")
    assert "secret" in tickets
    assert not await run(severe_logs, driver)


async def _hello_bot(url: str, name: str) -> ClientConnection:
    ws = await connect(url)
    await ws.send(json.dumps({"type": "hello", "protocol": 1, "name": name, "role": "bot"}))
    assert json.loads(await ws.recv())["type"] == "welcome"
    return ws


async def _next_turn(ws: ClientConnection) -> dict[str, Any] | None:
    """The next ``your_turn`` (``None`` when the game ends first)."""
    while True:
        msg = json.loads(await ws.recv())
        if msg["type"] == "your_turn":
            return dict(msg)
        if msg["type"] == "game_over":
            return None


def _frames_received(driver: Any) -> list[dict[str, Any]]:
    """Every websocket frame the page received (:data:`browser_helpers.RECORDER`)."""
    return list(driver.execute_script("return window.__frames"))


async def test_live_game_advances_and_hides_mister_x(driver: Any, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'live.db'}"
    Database.connect(url).close()
    recording = await run(record_websockets, driver)
    try:
        await _watch_live_game(driver, url)
    finally:
        await run(stop_recording, driver, recording)


def _mrx_updates_hiding_stations(frames: list[dict[str, Any]], reveals: set[int]) -> int:
    """Check that no frame sent to the page holds a hidden station; the number of Mister X's
    updates among them."""
    mrx_updates = 0
    for frame in frames:
        assert frame["type"] != "game_over"
        view = frame.get("view")
        if view is not None:
            assert "mrx" not in view and view["seat"] is None
            for slot, entry in enumerate(view["log"], start=1):
                assert (entry["station"] is None) == (slot not in reveals)
        if frame["type"] == "update" and frame["seat"] == "mrx":
            mrx_updates += 1
            assert (":" in frame["move"]) == (mrx_updates in reveals)
    return mrx_updates


async def _watch_live_game(driver: Any, url: str) -> None:
    async with running_server(url) as (served, _app, base):
        ws_url = base.replace("http://", "ws://").rstrip("/")
        mrx_bot, det_bot = await _hello_bot(ws_url, "hider"), await _hello_bot(ws_url, "seeker")
        try:
            async with AdminClient(ws_url, served.admin_token) as admin:
                game = await admin.start_match(StartMatch(
                    "grid5", "hider", ["seeker"], 11, None, TimeControl(120.0, 0.0)))
                await open_page(driver, f"{base}#/live")
                await wait_for(driver, lambda d: d.find_elements(
                    "css selector", f'#live tr[data-game="{game}"]'), "live game listed")
                await run(shoot, driver, "live-list")

                def open_game(d: Any) -> bool:
                    from selenium.common.exceptions import StaleElementReferenceException

                    try:
                        d.find_element("css selector", f'#live tr[data-game="{game}"] a').click()
                    except StaleElementReferenceException:
                        return False  # the list was redrawn between finding and clicking
                    return True

                await wait_for(driver, open_game, "live game opened")
                await wait_for(driver, lambda d: d.find_elements(
                    "css selector", "#viewer[data-move-number='0']"), "live viewer")
                await run(js, driver, "window.__frames = []")  # drop the list page's frames
                reveals = {3, 6, 9, 12, 15}
                for seen_moves in range(1, 9):  # Mister X moves 1..8, watched one by one
                    turn = await _next_turn(mrx_bot)
                    assert turn is not None
                    move = turn["legal"][0]
                    await mrx_bot.send(json.dumps({"type": "move", "game": game,
                                                   "turn": turn["turn"], "move": move}))
                    def shown(d: Any, n: int = seen_moves) -> Any:
                        return d.find_elements("css selector",
                                               f"#viewer[data-move-number='{n}']")

                    await wait_for(driver, shown, f"move {seen_moves} shown")
                    state = await run(js, driver, """
                        return {mrx: document.querySelectorAll('.mrx, .path').length,
                                log: [...document.querySelectorAll('#travel-log .st')]
                                  .map(s => s.textContent)};""")
                    assert state["mrx"] == 0
                    for slot, text in enumerate(state["log"][:seen_moves], start=1):
                        assert (text == "?") == (slot not in reveals)
                    if seen_moves == 4:
                        await run(shoot, driver, "live-game")
                    for _seat in range(2):  # the detectives answer
                        dturn = await _next_turn(det_bot)
                        if dturn is None:
                            break
                        await det_bot.send(json.dumps({
                            "type": "move", "game": game, "turn": dturn["turn"],
                            "move": dturn["legal"][-1]}))
                frames = await run(_frames_received, driver)
                assert [f for f in frames if f["type"] == "update"]
                assert _mrx_updates_hiding_stations(frames, reveals) == 8
                # Play to the end: the page switches to the stored game's full truth.
                await _finish_turns(game, mrx_bot, det_bot)
                await admin.result(game)
                await wait_for(driver, lambda d: d.find_elements(
                    "css selector", "#viewer[data-perspective='all']"), "replay after end")
                state = await _replay_state(driver)
                assert state["mrx"] is not None
                assert state["frame"] == len(Database.connect(url).load_game(game).turns)
        finally:
            await mrx_bot.close()
            await det_bot.close()


async def _finish_turns(game: str, *bots: ClientConnection) -> None:
    """Answer turns until the game is over (each bot reads its own messages)."""
    async def play(ws: ClientConnection) -> None:
        while (turn := await _next_turn(ws)) is not None:
            await ws.send(json.dumps({"type": "move", "game": game, "turn": turn["turn"],
                                      "move": turn["legal"][0]}))

    await asyncio.gather(*(play(ws) for ws in bots))


def test_tournament_run_address_shows_it_running(driver: Any, tmp_path: Path) -> None:
    """The README's main job: `yard tournament run` prints an address; opening it shows the
    tournament running with its leaderboard."""
    import signal
    import subprocess
    import sys
    import threading

    yard = str(Path(sys.executable).with_name("yard"))
    env = {k: v for k, v in os.environ.items() if k != "YARD_DB"}
    # A slow player (0.05 s a move) keeps the tournament running while the page is looked
    # at, with a game finished every second or so, and the machine's cores free meanwhile.
    proc = subprocess.Popen([yard, "tournament", "run", "--rules", "grid5", "--bots",
                             "slow,greedy", "--engine",
                             f"name=slow class={SLOW_BOT}:Slow option.think=0.05",
                             "--pairs", "2000", "--concurrency", "1", "--db",
                             f"sqlite:///{tmp_path / 'yard.db'}"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    found = threading.Event()

    def drain() -> None:  # keep the pipe flowing (one line per game)
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "watch it at" in line:
                found.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        assert found.wait(60), "".join(lines)
        address = next(line for line in lines if "watch it at" in line).split()[-1]
        assert address.startswith("http://127.0.0.1:") and "#/tournaments/" in address
        driver.get(address)
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(driver, WAIT_S, 0.1).until(
            lambda d: d.find_elements("css selector", "h1 .badge.running")
            and d.find_elements("css selector", "table.leaderboard tbody tr"),
            "running tournament with a leaderboard")
        players = {e.text for e in driver.find_elements("css selector",
                                                        "table.leaderboard td.player")}
        assert players == {"slow", "greedy"}
        deals = driver.find_element("id", "deals")  # no --seed: secret deals, key not shown
        assert deals.get_attribute("data-kind") == "secret"
        assert "published when the tournament is finished" in deals.text
        shoot(driver, "tournament-running")
    finally:
        proc.send_signal(signal.SIGTERM)  # as Ctrl-C, whatever SIGINT's disposition here
        # The runner stops its bots and its server (each allowed 10 s before SIGKILL) after
        # the games in flight are aborted and stored; under a loaded 2-core CI that can take
        # longer than 30 s, so allow 90 s and say what was seen if even that is not enough.
        try:
            proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise AssertionError("yard tournament run did not stop within 90 s of SIGTERM:\n"
                                 + "".join(lines[-20:])) from None
        reader.join(timeout=10)


#: Run in a page: open websockets to ``arguments[0]`` and say ``hello`` (protocol
#: ``arguments[2]``) in each role, as admin with the token ``arguments[1]`` (which a real
#: attacker would not even have), then ask for the bots; ``window.done`` holds what each
#: connection received.
PROBE = """
const [wsUrl, token, version] = arguments;
const results = {};
window.done = null;
function probe(role, secret) {
  return new Promise((resolve) => {
    const got = [];
    const ws = new WebSocket(wsUrl);
    ws.onopen = () => ws.send(JSON.stringify(
      {type: "hello", protocol: version, name: "probe-" + role, role: role, token: secret}));
    ws.onmessage = (event) => {
      const message = JSON.parse(event.data);
      got.push(message.type + ":" + (message.code || ""));
      if (message.type === "welcome" && role === "admin") {
        ws.send(JSON.stringify({type: "list_bots"}));
      } else if (message.type === "welcome" || message.type === "bots") {
        ws.close();
      }
    };
    ws.onclose = () => { results[role] = got; resolve(); };
  });
}
Promise.all([probe("bot", null), probe("spectator", null), probe("admin", token)])
  .then(() => { window.done = results; });
"""


def _serve_elsewhere(folder: Path) -> tuple[Any, str]:
    """A plain HTTP server on another port of this host (another origin) with one page."""
    import functools
    import http.server
    import threading

    (folder / "elsewhere.html").write_text("<!doctype html><title>elsewhere</title>")
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *_args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/elsewhere.html"


async def _probe(driver: Any, page: str, ws_url: str, token: str) -> dict[str, list[str]]:
    """Open ``page``, run :data:`PROBE` in it against ``ws_url``: what each role got."""
    await run(driver.get, page)
    await run(driver.execute_script, PROBE, ws_url, token, PROTOCOL_VERSION)
    return dict(await wait_for(driver, lambda d: d.execute_script("return window.done"),
                               "the probe's connections to close"))


async def test_a_page_from_another_origin_cannot_drive_the_server(driver: Any,
                                                                  tmp_path: Path) -> None:
    """Cross-site websocket hijacking: a page served from another origin (another port of
    the same host) opens websockets to the match server; every hello is refused, so it can
    neither play, watch, list bots nor start matches, even holding the admin token. The
    same probe run in the server's own page gets in as each role."""
    httpd, elsewhere = _serve_elsewhere(tmp_path)
    try:
        async with running_server(f"sqlite:///{tmp_path / 'o.db'}") as (server, _app, base):
            ws_url = base.replace("http://", "ws://")
            token = server.core.config.admin_token or ""
            foreign = await _probe(driver, elsewhere, ws_url, token)
            assert foreign == {role: ["error:forbidden_origin"]
                               for role in ("bot", "spectator", "admin")}, foreign
            assert not server.core.sessions and not server.core.matches

            own = await _probe(driver, f"{base}/", ws_url, token)
            assert own == {"bot": ["welcome:"], "spectator": ["welcome:"],
                           "admin": ["welcome:", "bots:"]}, own
    finally:
        httpd.shutdown()
