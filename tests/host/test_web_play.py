"""The Play, Ladder and bot pages in a real browser (issue 26): a person plays whole games
against a ladder bot by clicking on the board, as Mister X and as the detectives; the
detectives' page never receives or shows Mister X's hidden station; a classic game takes a
double move and a secret ticket through the ticket chooser; the ladder and a bot's page
show what /api/ladder and /api/ladder/RULES/bots/NAME say.

A real ``yard serve --ladder grid5,classic --house random`` process (the house bot connects
by itself), headless Chromium via Selenium (as tests/host/test_web_browser.py). Every websocket
frame the page receives is recorded by a wrapper around ``window.WebSocket`` installed
before any page script runs (:func:`browser_helpers.record_websockets`). The browser is
the group's (:mod:`browser_helpers`)."""

from __future__ import annotations

import os
import secrets
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.host.browser_helpers import (
    DESKTOP,
    FIT,
    PHONE,
    WAIT_S,
    assert_fits,
    axe_serious,
    severe_logs,
    shoot,
)
from tests.host.play_serving import get_json, until
from tournament.processes import yard_argv

pytestmark = pytest.mark.xdist_group("browser")
RECORD_WEBSOCKETS = True  # the `driver` fixture records every websocket frame

#: The Play page's state: null while nothing is to be done (the bot thinks, a move is
#: on its way, the same turn as ``arguments[0]``), else the turn with its legal stations,
#: or ``over``.
TURN = """
const root = document.getElementById('play-view');
if (!root) return null;
if (root.getAttribute('data-state') === 'over') return {over: true};
const turn = root.getAttribute('data-turn');
const legal = [...document.querySelectorAll('.station.legal')]
  .map(g => Number(g.getAttribute('data-station')));
if (!turn || turn === arguments[0] || !legal.length) return null;
return {over: false, turn, seat: root.getAttribute('data-seat'), legal,
        moveNumber: Number(root.getAttribute('data-move-number'))};
"""

#: What the page shows of Mister X: his piece, his path, the travel log's stations.
SHOWN = """
return {pieces: document.querySelectorAll('#play-view .piece.mrx').length,
        paths: document.querySelectorAll('#play-view polyline.path').length,
        log: [...document.querySelectorAll('#travel-log .slot')].map(s => [
          s.querySelector('.t').textContent, s.querySelector('.st').textContent]),
        clock: document.getElementById('clock').textContent,
        status: document.getElementById('play-status').textContent};
"""


#: On a phone-sized window: the legal stations well inside the board's box, once Mister
#: X's piece is in it (null before).
IN_VIEW = """
if (window.innerWidth > 400) return null;
const port = document.querySelector('.board-port').getBoundingClientRect();
const inside = (el) => {
  const b = el.getBoundingClientRect();
  const x = b.left + b.width / 2, y = b.top + b.height / 2;
  return x > port.left + 20 && x < port.right - 50 && y > port.top + 20 && y < port.bottom - 20;
};
const mrx = document.querySelector('#play-view .piece.mrx');
if (!mrx || !inside(mrx)) return null;
const legal = [...document.querySelectorAll('.station.legal')].filter(inside)
  .map(g => Number(g.getAttribute('data-station')));
return legal.length ? legal : null;
"""


#: Whether every station of the board is inside the board's box.
ALL_IN_VIEW = """
const port = document.querySelector('.board-port').getBoundingClientRect();
return [...document.querySelectorAll('svg.board .station circle')].every(c => {
  const b = c.getBoundingClientRect();
  const x = b.left + b.width / 2, y = b.top + b.height / 2;
  return x >= port.left && x <= port.right && y >= port.top && y <= port.bottom;
});
"""


#: A ruleset where four of the five detectives are stuck from the first round on.
STRANDED = Path(__file__).with_name("stranded.toml")


@dataclass
class Served:
    base: str
    db: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``yard serve --ladder grid5,classic,stranded.toml --house random``: up, with random
    connected."""
    folder = tmp_path_factory.mktemp("play")
    ready = folder / "ready"
    log = (folder / "server.log").open("wb")
    proc = subprocess.Popen(
        yard_argv("serve", "--port", "0", "--db", f"sqlite:///{folder / 'yard.db'}",
                  "--ladder", f"grid5,classic,{STRANDED}", "--house", "random",
                  "--house-games", "4",
                  "--ready-file", str(ready), "--admin-token-file", str(folder / "admin")),
        stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "YARD_ADMIN_TOKEN": secrets.token_urlsafe(24)})
    try:
        def up() -> str | None:
            assert proc.poll() is None, (folder / "server.log").read_text()[-3000:]
            return ready.read_text().strip() if ready.exists() else None

        base = until(up, "the server's ready file", 60).replace("ws://", "http://") + "/"

        def connected() -> bool:
            ladders = get_json(f"{base}api/ladder")["ladders"]
            return all(any(r["name"] == "random" and r["connected"] for r in ladders.get(rules, []))
                       for rules in ("grid5", "classic"))

        until(connected, "random on the ladder", 60)
        yield Served(base, folder / "yard.db")
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def wait(driver: Any, check: Callable[[Any], Any], what: str) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_S, poll_frequency=0.03).until(check, what)


def settled(driver: Any, script: str, what: str) -> Any:
    """``script``'s result once it is not null and two reads in a row agree: after a
    resize the board refits and pans to the piece in observer callbacks that may still
    be on their way when the first read looks right."""
    last: list[Any] = [None]

    def agreed(d: Any) -> Any:
        now = d.execute_script(script)
        same = now is not None and now == last[0]
        last[0] = now
        return now if same else None

    return wait(driver, agreed, what)


def open_play(driver: Any, base: str, query: str = "") -> None:
    driver.get(f"{base}?load={time.monotonic_ns()}#/play{query}")
    wait(driver, lambda d: d.execute_script(
        "return document.body.getAttribute('data-ready') !== null && "
        "!document.getElementById('play-start').disabled"), "the Play form with an opponent")


def start(driver: Any, base: str, name: str, rules: str, side: str, guest: bool = False,
          state: str = "playing") -> None:
    """Fill in the Play form (``guest``: tick "as a guest") and press Play; wait for the
    game to start (or for the page's ``state``, e.g. ``refused``)."""
    from selenium.webdriver.support.ui import Select

    open_play(driver, base)
    box = driver.find_element("id", "play-name")
    box.clear()
    box.send_keys(name)
    if driver.find_element("id", "play-guest").is_selected() != guest:
        driver.find_element("id", "play-guest").click()
    Select(driver.find_element("id", "play-rules")).select_by_value(rules)
    Select(driver.find_element("id", "play-side")).select_by_value(side)
    wait(driver, lambda d: "random" in [o.get_attribute("value") for o in d.find_elements(
        "css selector", "#play-opponent option")], "random offered")
    Select(driver.find_element("id", "play-opponent")).select_by_value("random")
    driver.find_element("id", "play-start").click()
    ended = ", #play-view[data-state='over']" if state == "playing" else ""
    wait(driver, lambda d: d.find_elements(
        "css selector", f"#play-view[data-state='{state}']{ended}"), f"the page {state}")


def click_station(driver: Any, station: int) -> None:
    """Click station ``station`` on the board (the board's port in view first: the
    sticky bar above it must not cover it)."""
    from selenium.webdriver.common.action_chains import ActionChains

    driver.execute_script("document.querySelector('.board-port').scrollIntoView({block: 'end'})")
    target = driver.find_element("css selector", f'svg.board .station[data-station="{station}"]')
    # No 250 ms glide of the pointer to it (Selenium's default), which Chromium plays out
    # as mouse moves over the board.
    ActionChains(driver, duration=0).move_to_element(target).click().perform()


def next_turn(driver: Any, last: str | None) -> dict[str, Any]:
    return dict(wait(driver, lambda d: d.execute_script(TURN, last), "my turn or the end"))


def play_out(driver: Any, each: Callable[[dict[str, Any]], None] | None = None,
             pick: Callable[[list[int]], int] = lambda legal: legal[0]) -> list[str]:
    """Play the game to its end: each turn, click ``pick(legal stations)`` (and the first
    ticket the chooser offers, if it asks); ``each(turn)`` first. The moves sent."""
    last = None
    while not (turn := next_turn(driver, last))["over"]:
        if each is not None:
            each(turn)
        click_station(driver, pick(turn["legal"]))
        if driver.find_elements("css selector", "#chooser:not([hidden]) button[data-move]"):
            driver.find_element("css selector", "#chooser button[data-move]").click()
        last = turn["turn"]
    return [m["move"] for m in driver.execute_script("return window.__sent")
            if isinstance(m, dict) and m.get("type") == "move"]


def stored_game(driver: Any, base: str) -> dict[str, Any]:
    """The game just played, once the page links its stored replay: its full record."""
    wait(driver, lambda d: d.find_elements("id", "replay-link"), "the replay link")
    game = driver.find_element("id", "play-view").get_attribute("data-game")
    href = driver.find_element("id", "replay-link").get_attribute("href")
    assert href.endswith(f"#/games/{game}?move=end&view=all"), href
    return dict(get_json(f"{base}api/games/{game}?perspective=all"))


def moves_of(record: dict[str, Any], mine: Callable[[str], bool]) -> list[str]:
    return [f["turn"]["move"] for f in record["frames"][1:] if mine(f["turn"]["seat"])]


def page_moves(driver: Any) -> list[str]:
    """The page's own move log: its moves (rows marked ``mine``), oldest first."""
    return list(reversed(driver.execute_script(
        "return [...document.querySelectorAll('#move-log tr.mine td.mv')]"
        ".map(td => td.textContent)")))


def test_a_person_plays_grid5_as_mister_x(driver: Any, served: Served) -> None:
    """A whole grid5 game as Mister X by clicking: the result is shown, the replay linked,
    and the stored game holds exactly the moves the page sent (and its move log lists).
    With the sound option on, each of his turns plays one tone, in an audio context that
    runs (the Play click allowed it)."""
    open_play(driver, served.base)
    driver.execute_script("localStorage.setItem('yard.play.sound', 'true')")
    try:
        start(driver, served.base, "alice", "grid5", "mrx")
        _play_grid5_as_mister_x(driver, served)
    finally:
        driver.execute_script("localStorage.removeItem('yard.play.sound')")


def _play_grid5_as_mister_x(driver: Any, served: Served) -> None:
    checked: list[dict[str, Any]] = []

    def each(turn: dict[str, Any]) -> None:
        assert turn["seat"] == "mrx"
        if not checked:
            shown = driver.execute_script(SHOWN)
            assert shown["pieces"] == 1  # his own page shows him
            assert "for this move" in shown["clock"] and "Your move" in shown["status"]
            checked.append(shown)

    sent = play_out(driver, each)
    record = stored_game(driver, served.base)
    assert sent and moves_of(record, lambda seat: seat == "mrx") == sent
    tones = driver.execute_script("return window.__tones")
    assert tones == [{"state": "running", "hz": 660}] * len(sent), tones
    # His travel log holds every move he made, the last one too when the detectives end
    # the game before his next turn (no view brings it then).
    shown = [(t, st) for t, st in driver.execute_script(SHOWN)["log"] if st]
    assert shown == [tuple(leg.split(":")) for move in sent for leg in move.split("+")]
    assert page_moves(driver) == sent
    assert record["players"]["mrx"] == "human:alice" and record["tournament_id"] == "play-grid5"
    headline = driver.find_element("id", "play-headline")
    assert headline.text == ("You win!" if record["outcome"]["winner"] == "mrx" else "You lose")
    assert driver.find_element("id", "mrx-path").text == \
        "Mister X's path: " + " → ".join(map(str, record["mrx_path"]))
    driver.find_element("id", "replay-link").click()
    wait(driver, lambda d: d.find_elements(
        "css selector", f"#viewer[data-game='{record['game_id']}']"), "the replay")
    assert not severe_logs(driver)


def _no_station_of_mrx(value: Any, where: str) -> None:
    """No ``mrx`` station, ``mrx_path`` or other Mister X location field anywhere in
    ``value`` (``players.mrx`` is his player's name, ``tickets.mrx`` his tickets)."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert key != "mrx_path", where
            if key == "mrx":
                assert item is None or isinstance(item, (str, dict)), (where, item)
            _no_station_of_mrx(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _no_station_of_mrx(item, f"{where}[{i}]")


def test_the_detectives_page_never_gets_or_shows_mister_x(driver: Any, served: Served) -> None:
    """A whole grid5 game as the detectives (both seats the person's): no frame the page
    receives before game_over holds Mister X's station outside reveal moves, and the page
    never draws him (no piece, no path, "?" in his travel log but on reveals) until the end;
    the stored game holds exactly the moves the page sent."""
    start(driver, served.base, "bob", "grid5", "detectives")
    seats: set[str] = set()
    shown_at: list[dict[str, Any]] = []

    def each(turn: dict[str, Any]) -> None:
        seats.add(turn["seat"])
        shown = driver.execute_script(SHOWN)
        assert shown["pieces"] == 0 and shown["paths"] == 0, shown
        news = driver.execute_script(
            "const n = document.getElementById('mrx-news');"
            "return n && [n.textContent, n.getAttribute('data-surfaced')]")
        shown_at.append({**shown, "moveNumber": turn["moveNumber"], "news": news})

    sent = play_out(driver, each, pick=lambda legal: legal[-1])
    record = stored_game(driver, served.base)
    assert seats <= {"d1", "d2"} and "d1" in seats
    assert moves_of(record, lambda seat: seat != "mrx") == sent
    assert page_moves(driver) == sent
    truth, reveals = record["mrx_path"], set(record["rules"]["reveal_moves"])

    # The DOM: his travel log shows stations on reveal moves only (they are the truth);
    # his last move is told in a banner (where he surfaced, on a reveal); the counter
    # says the round.
    for shown in shown_at:
        for slot, (_ticket, station) in enumerate(shown["log"][:shown["moveNumber"]], start=1):
            assert station == (str(truth[slot]) if slot in reveals else "?"), (slot, shown)
        n = shown["moveNumber"]
        assert f"round {n} of {record['rules']['max_moves']}" in shown["status"], shown
        text, surfaced = shown["news"]
        if n in reveals:
            assert surfaced == str(truth[n]) and f"Mister X surfaced at {truth[n]}" in text, shown
        else:
            assert surfaced is None and "hidden" in text, shown
    # At the end his whole path is in the travel log, and the ending is explained.
    final_log = [st for _t, st in driver.execute_script(SHOWN)["log"] if st]
    assert final_log == [str(st) for st in truth[1:]]
    assert driver.find_element("id", "play-why").text
    assert not driver.find_elements("id", "mrx-news")  # no "where to is hidden" any more

    # Every frame before game_over.
    frames = driver.execute_script("return window.__frames")
    over = next(i for i, f in enumerate(frames) if f["type"] == "game_over")
    assert frames[over]["mrx_path"] == truth
    mrx_moves = 0
    for frame in frames[:over]:
        _no_station_of_mrx(frame, frame["type"])
        view = frame.get("view")
        if view is not None:
            assert view["seat"] in ("d1", "d2") and "mrx" not in view, view
            for slot, entry in enumerate(view["log"], start=1):
                assert entry["station"] == (truth[slot] if slot in reveals else None), (slot, view)
            reveal = view["last_reveal"]
            assert reveal is None or (reveal["move"] in reveals and
                                      reveal["station"] == truth[reveal["move"]]), view
        if frame["type"] == "update" and frame["seat"] == "mrx":
            mrx_moves += 1
            station = frame["move"].partition(":")[2]
            assert station == (str(truth[mrx_moves]) if mrx_moves in reveals else ""), frame
    assert mrx_moves == record["moves"]
    # After the end the truth is shown: his path on the board.
    final = driver.execute_script(SHOWN)
    assert final["pieces"] == 1 and final["paths"] == (1 if len(truth) > 1 else 0)
    # Playing every detective, resigning is the side's, not one seat's.
    start(driver, served.base, "bob", "grid5", "detectives")
    assert resign(driver, served.base)["outcome"]["termination"] == "resigned"
    said = driver.find_element("id", "play-result").text
    assert "by d1" not in said and "You (the detectives) resigned." in said, said
    assert driver.execute_script("return window.__tones") == []  # the sound option is off
    assert not severe_logs(driver)


def test_classic_double_move_and_secret_ticket_through_the_chooser(
        driver: Any, served: Served) -> None:
    """Classic as Mister X: a double move (chooser: "…, then double move", a second
    station) and a secret ticket (chooser: "secret (black)"); the tickets and the travel
    log follow; then resign. Also the Play page's screenshots, desktop and phone."""
    for _ in range(5):  # a new game if the random detectives catch him within two moves
        driver.execute_script("window.__sent = []")
        start(driver, served.base, "carol", "classic", "mrx")
        turn = next_turn(driver, None)
        first = turn["legal"][0]
        click_station(driver, first)
        wait(driver, lambda d: d.find_elements("css selector", "#chooser:not([hidden]) "
                                               "button[data-double]"), "the double-move choice")
        driver.find_element("css selector", "#chooser button[data-double]").click()
        second = wait(driver, lambda d: d.execute_script(
            "return document.getElementById('double-note') && [...document.querySelectorAll("
            "'.station.legal')].map(g => Number(g.getAttribute('data-station')))"),
                      "the second leg's stations")
        assert second
        click_station(driver, second[0])
        if driver.find_elements("css selector", "#chooser:not([hidden]) button[data-move]"):
            driver.find_element("css selector", "#chooser button[data-move]").click()
        turn = next_turn(driver, turn["turn"])
        if turn["over"]:
            continue
        click_station(driver, turn["legal"][0])
        wait(driver, lambda d: d.find_elements(
            "css selector", "#chooser:not([hidden]) button[data-ticket='secret'][data-move]"),
             "the secret ticket offered")
        driver.find_element("css selector",
                            "#chooser button[data-ticket='secret'][data-move]").click()
        turn = next_turn(driver, turn["turn"])
        if not turn["over"]:
            break
    assert not turn["over"], "five games ended within Mister X's first two moves"
    sent = [m["move"] for m in driver.execute_script("return window.__sent")
            if isinstance(m, dict) and m.get("type") == "move"]
    assert len(sent) == 2 and "+" in sent[0] and sent[1].startswith("secret:"), sent
    expected = [leg.split(":")[0] for leg in sent[0].split("+")] + ["secret"]
    wait(driver, lambda d: [t for t, _ in d.execute_script(SHOWN)["log"][:3]] == expected,
         f"the travel log showing {expected}")
    tickets = driver.execute_script(
        "return Object.fromEntries([...document.querySelectorAll("
        "'#tickets tr[data-seat=\"mrx\"] td[data-ticket]')].map(td => "
        "[td.getAttribute('data-ticket'), Number(td.textContent)]))")
    assert tickets["double"] == 1 and tickets["secret"] == 5 - 1 - sent[0].count("secret"), tickets

    # The screenshots: a destination clicked, the ticket chooser open; on a phone (part
    # of London in view) the board pans to Mister X's piece.
    click_station(driver, turn["legal"][-1])
    wait(driver, lambda d: d.find_elements("css selector", "#chooser:not([hidden])"), "chooser")
    assert driver.execute_script(ALL_IN_VIEW), "a desktop shows the whole of London"
    shoot(driver, "play-london")
    driver.find_element("id", "cancel-move").click()
    try:
        driver.set_window_size(*PHONE)
        visible = settled(driver, IN_VIEW, "Mister X in view")
        click_station(driver, visible[0])
        wait(driver, lambda d: d.find_elements("css selector", "#chooser:not([hidden])"),
             "chooser on a phone")
        assert_fits(driver.execute_script(FIT), "a game on the Play page")
        # The bar at the top of the screen (it sticks there), the board under it.
        driver.execute_script("window.scrollTo(0, document.getElementById('play-bar')"
                              ".getBoundingClientRect().top + window.scrollY)")
        shoot(driver, "play-london-phone")
        driver.find_element("id", "cancel-move").click()
    finally:
        driver.set_window_size(*DESKTOP)

    driver.find_element("id", "resign").click()
    driver.find_element("id", "resign").click()
    wait(driver, lambda d: d.find_elements("css selector", "#play-view[data-state='over']"),
         "the end")
    record = stored_game(driver, served.base)
    assert record["outcome"]["termination"] == "resigned" and record["outcome"]["winner"] == \
        "detectives"
    assert moves_of(record, lambda seat: seat == "mrx")[:2] == sent
    assert not severe_logs(driver)


def resign(driver: Any, base: str, or_over: bool = False) -> dict[str, Any]:
    """Resign the game on the page (two clicks); its stored record. ``or_over``: the game
    may end by itself first (the Resign button goes as it ends), which is fine too."""
    from selenium.common.exceptions import ElementNotInteractableException

    try:
        driver.find_element("id", "resign").click()
        driver.find_element("id", "resign").click()
    except ElementNotInteractableException:
        if not (or_over and driver.find_elements(
                "css selector", "#play-view[data-state='over']")):
            raise
    wait(driver, lambda d: d.find_elements("css selector", "#play-view[data-state='over']"),
         "the end")
    return stored_game(driver, base)


def test_a_name_is_claimed_kept_by_the_browser_and_guests_play_unrated(
        driver: Any, served: Served) -> None:
    """The first game claims the person's name: the server's token is kept in the
    browser's localStorage and proves the name on the next game. A browser without it is
    refused the name, saying why; as a guest the same name plays, shown as a guest, and is
    not rated."""
    claims = "return JSON.parse(localStorage.getItem('yard.play.claims') || '{}')"
    kept = None
    for _ in range(2):  # claimed, then proved with the kept token
        start(driver, served.base, "zoe", "grid5", "mrx")
        (hello,) = [m for m in driver.execute_script("return window.__sent")
                    if isinstance(m, dict) and m.get("type") == "hello"]
        assert bool(hello.get("register")) is (kept is None) and hello.get("token") == kept
        kept = driver.execute_script(claims).get("zoe")
        assert kept
        assert resign(driver, served.base)["players"]["mrx"] == "human:zoe"
    driver.execute_script("localStorage.removeItem('yard.play.claims')")  # another browser
    try:
        start(driver, served.base, "zoe", "grid5", "mrx", state="refused")
        message = driver.find_element("id", "play-message").text
        assert "That name is someone else's" in message and "'zoe' is claimed" in message
        assert driver.execute_script(NO_DEBRIS) == {"said": 1, "clipped": False, "shown": []}
        shoot(driver, "play-refused")
        start(driver, served.base, "zoe", "grid5", "mrx", guest=True)
        record = resign(driver, served.base)
        assert record["players"]["mrx"] == "guest:zoe"
        assert "guest:zoe" not in {r["name"] for r in get_json(
            f"{served.base}api/ladder")["people"].get("grid5", [])}
    finally:
        driver.execute_script("localStorage.removeItem('yard.play.guest')")
    assert not [e for e in severe_logs(driver) if "claimed" not in e]


#: After a refused request: how often the page shows the server's words (its last error
#: frame's message), whether the message box clips them, and what of a game is still
#: shown (a Resign button, a clock, a board, a panel: none should be).
NO_DEBRIS = """
const error = window.__frames.filter(f => f.type === 'error').pop();
const box = document.getElementById('play-message');
const text = document.body.innerText;
const visible = (el) => el.getClientRects().length > 0 &&
  getComputedStyle(el).visibility !== 'hidden';
return {said: text.split(error.message).length - 1,
        clipped: box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1,
        shown: ['#resign', '#clock', '#play-view', 'svg.board', '.panel']
          .filter(sel => [...document.querySelectorAll(sel)].some(visible))};
"""


def _people(base: str) -> set[str]:
    """The people in the Play page's grid5 pool (/api/ladder)."""
    rows = get_json(f"{base}api/ladder")["people"].get("grid5") or []
    return {str(r["name"]) for r in rows if str(r["name"]).startswith("human:")}


def test_ladder_and_bot_pages(driver: Any, served: Served) -> None:
    """With a second bot on the grid5 ladder: the ladder page lists both (a link to each
    bot's page, the note, the link to the Elo leaderboard of ladder-grid5), the people's
    table lists the people who played grid5 (the tests above; run alone, this test has a
    person play and resign one first); a bot's page plots its rating after each game (one
    point per game of its history) and links its recent games' replays."""
    people_played = _people(served.base)
    if not people_played:
        start(driver, served.base, "dave", "grid5", "mrx")
        driver.find_element("id", "resign").click()
        driver.find_element("id", "resign").click()
        wait(driver, lambda d: d.find_elements("css selector", "#play-view[data-state='over']"),
             "the end")
        stored_game(driver, served.base)
        people_played = until(lambda: _people(served.base), "dave in the people's pool")
    # Six games with random (three pairs), then the bot leaves: no games played on in the
    # background while the pages are looked at.
    log = (served.db.parent / "bot.log").open("wb")
    bot = subprocess.Popen(yard_argv("bot", "greedy", "--url",
                                     served.base.replace("http://", "ws://").rstrip("/"),
                                     "--ladder", "grid5", "--max-games", "2", "--games", "6"),
                           stdout=log, stderr=subprocess.STDOUT)
    try:
        def stored() -> bool:  # the bot page reads the stored games, written a moment
            # after the live ladder rates them (group commits)
            page = get_json(f"{served.base}api/ladder/grid5/bots/random")
            return len(page["history"]) >= 6

        until(stored, "six stored ladder games of random", 120)
        driver.get(f"{served.base}?load={time.monotonic_ns()}#/ladder")
        wait(driver, lambda d: len(d.find_elements(
            "css selector", "table.ladder[data-ruleset='grid5'] tbody tr")) == 2, "two bots")
        links = driver.execute_script(
            "return [...document.querySelectorAll('table.ladder[data-ruleset=\"grid5\"] "
            "td.player a')].map(a => a.getAttribute('href'))")
        assert sorted(links) == ["#/ladder/grid5/bots/greedy", "#/ladder/grid5/bots/random"]
        people = driver.execute_script(
            "return [...document.querySelectorAll('table.people[data-ruleset=\"grid5\"] "
            "tbody tr')].map(tr => tr.getAttribute('data-player'))")
        assert people_played <= set(people), (people_played, people)
        elo = driver.find_element("css selector", "section[data-ruleset='grid5'] a.elo-link")
        assert elo.get_attribute("href").endswith("#/?tournament=ladder-grid5")
        assert "OpenSkill" in driver.find_element("id", "ladder-note").text
        shoot(driver, "ladder")
        elo.click()  # the authoritative Elo of the ladder's games
        wait(driver, lambda d: d.find_elements("css selector", "table.leaderboard tbody tr"),
             "the Elo leaderboard of ladder-grid5")

        page = get_json(f"{served.base}api/ladder/grid5/bots/random")
        driver.get(f"{served.base}?load={time.monotonic_ns()}#/ladder/grid5/bots/random")
        wait(driver, lambda d: d.find_elements("css selector", "#rating-plot"), "the plot")
        points = driver.execute_script(
            "return document.querySelectorAll('#rating-plot .points circle').length")
        assert points >= len(page["history"]) >= 6
        replays = driver.execute_script(
            "return [...document.querySelectorAll('#games tbody a')].map(a => a.hash)")
        assert replays and all(r.startswith("#/games/") for r in replays)
        assert driver.find_element("id", "bot-rating").text.startswith("Rating ")
        shoot(driver, "bot-page")
        try:  # both pages on a phone: nothing wider than the screen
            driver.set_window_size(*PHONE)
            for hash_ in ("#/ladder", "#/ladder/grid5/bots/random", "#/play", "#/",
                          "#/tournaments", "#/tournaments/ladder-grid5",
                          "#/tournaments/play-grid5", "#/games", "#/live"):
                driver.get(f"{served.base}?load={time.monotonic_ns()}{hash_}")
                wait(driver, lambda d: d.execute_script(
                    "return document.body.getAttribute('data-ready') !== null"), hash_)
                assert_fits(driver.execute_script(FIT), hash_)
        finally:
            driver.set_window_size(*DESKTOP)
        # The leaderboard's default view, with the ladder storing games all the while:
        # the ratings of each ruleset.
        driver.get(f"{served.base}?load={time.monotonic_ns()}#/")
        wait(driver, lambda d: d.find_elements(
            "css selector", "table.leaderboard[data-ruleset='grid5'] tbody tr"),
             "the default leaderboard")
        # The Elo leaderboard may answer 503 "computing" at first (the page asks again).
        assert not [e for e in severe_logs(driver) if "status of 503" not in e]
    finally:
        bot.terminate()
        bot.wait(20)
        log.close()


#: Records what the Play page shows after every change: the moves its numbers count
#: (``data-applied``) and the tickets table (seat -> ticket -> number, null for "–"/"∞").
TICKET_SNAPSHOTS = """
window.__tickets = [];
const take = () => {
  const root = document.getElementById('play-view');
  const table = document.getElementById('tickets');
  if (!root || !table || table.tagName !== 'TABLE') return;
  const applied = Number(root.getAttribute('data-applied'));
  const kinds = [...table.querySelectorAll('thead th')].slice(1).map(th => th.textContent);
  const shown = {};
  for (const tr of table.querySelectorAll('tbody tr')) {
    const cells = [...tr.querySelectorAll('td[data-ticket]')];
    shown[tr.getAttribute('data-seat')] = Object.fromEntries(cells.map(td => [
      td.getAttribute('data-ticket'),
      /^\\d+$/.test(td.textContent) ? Number(td.textContent) : null]));
  }
  const last = window.__tickets[window.__tickets.length - 1];
  const entry = {applied, kinds, shown, over: root.getAttribute('data-state') === 'over'};
  if (!last || JSON.stringify(last) !== JSON.stringify(entry)) window.__tickets.push(entry);
};
take();
new MutationObserver(take).observe(document.getElementById('play-game'),
  {subtree: true, childList: true, attributes: true, characterData: true});
"""

#: What the Play page shows of the detectives' last moves and the clocks, on its turn.
FEEDBACK = """
return {marks: [...document.querySelectorAll('#play-view .last-move')].map(g => [
          g.getAttribute('data-seat'), Number(g.getAttribute('data-from')),
          Number(g.getAttribute('data-to'))]),
        title: document.title,
        mine: (document.getElementById('clock-mine') || {}).textContent,
        theirs: (document.getElementById('clock-theirs') || {}).textContent,
        status: document.getElementById('play-status').textContent,
        statusLive: document.getElementById('play-status').getAttribute('aria-live'),
        stuck: (document.getElementById('play-stuck') || {}).textContent || null};
"""


#: A legal station's ring against a plain station's dot and the legend's key for it.
RINGS = """
const legal = document.querySelector('svg.board .station.legal circle');
const plain = document.querySelector(
  'svg.board .station:not(.legal):not(.possible):not(.selected) circle');
const key = document.querySelector('.swatch.d-legal');
const ring = getComputedStyle(legal);
return {ring: legal.getBoundingClientRect().width / plain.getBoundingClientRect().width,
        stroke: ring.stroke, width: parseFloat(ring.strokeWidth),
        key: getComputedStyle(key).borderTopColor, legend: key.parentElement.textContent};
"""


def _expected_tickets(frame: dict[str, Any], kinds: list[str]) -> dict[str, dict[str, Any]]:
    return {seat: {k: (own.get(k) if own else None) for k in kinds}
            for seat, own in frame["tickets"].items()}


def _rematch_confirmed_and_remembered(driver: Any, served: Served) -> None:
    """After a classic game as Mister X: Rematch starts another with the same settings
    (with "confirm moves" on, a move waits for Confirm); the form keeps the choice."""
    game = driver.find_element("id", "play-view").get_attribute("data-game")
    driver.execute_script("localStorage.setItem('yard.play.confirm', 'true')")
    try:
        driver.find_element("id", "rematch").click()
        wait(driver, lambda d: d.execute_script(
            "const v = document.getElementById('play-view');"
            "return v && v.getAttribute('data-game') && v.getAttribute('data-game') !== "
            "arguments[0] && v.getAttribute('data-state') === 'playing'", game), "the rematch")
        assert driver.find_element("id", "play-view").get_attribute("data-side") == "mrx"
        turn = next_turn(driver, None)
        sent = len(driver.execute_script("return window.__sent"))
        click_station(driver, turn["legal"][0])
        if driver.find_elements("css selector", "#chooser:not([hidden]) button[data-move]"):
            driver.find_element("css selector", "#chooser button[data-move]").click()
        wait(driver, lambda d: d.find_elements("css selector", "#chooser:not([hidden]) "
                                               "#confirm-move"), "Confirm asked")
        assert len(driver.execute_script("return window.__sent")) == sent  # not yet
        driver.find_element("id", "confirm-move").click()
        wait(driver, lambda d: d.execute_script(
            "return window.__sent.some(m => m.type === 'move' && m.turn === arguments[0])",
            int(turn["turn"])), "the confirmed move sent")
        # Resigned, or ended by itself (the random detectives may catch him at once).
        record = resign(driver, served.base, or_over=True)
        assert record["ruleset"] == "classic"
    finally:
        driver.execute_script("localStorage.removeItem('yard.play.confirm')")
    # The form remembers the choice.
    open_play(driver, served.base)
    assert [driver.execute_script(f"return document.getElementById('play-{k}').value")
            for k in ("rules", "side", "opponent")] == ["classic", "mrx", "random"]


def test_a_detective_who_cannot_move_is_announced_and_the_ending_explained(
        driver: Any, served: Served) -> None:
    """``stranded`` (tests/host/stranded.toml): the detectives hold underground tickets
    only, so the four away from station 13 cannot move from the first round on. The
    person plays all five: every turn is the one on 13's, and at each the page names each
    detective skipped since the person's last move and why; when its four tickets are
    spent no detective can move, and the end says so in words."""
    start(driver, served.base, "fay", "stranded", "detectives")
    (begun,) = [f for f in driver.execute_script("return window.__frames")
                if f.get("type") == "game_start"]
    stations = begun["view"]["detectives"]
    mobile = f"d{stations.index(13) + 1}"

    def notice(seats: list[int]) -> str | None:
        said = [f"Detective D{i + 1} cannot move: no ticket left for any line from "
                f"{stations[i]}." for i in seats]
        return " ".join([*said, "They are skipped." if len(said) > 1 else "It is skipped."]) \
            if said else None

    stuck = [i for i, station in enumerate(stations) if station != 13]
    notices: list[str | None] = []

    def each(turn: dict[str, Any]) -> None:
        assert turn["seat"] == mobile, turn
        shown = driver.find_elements("id", "play-stuck")
        notices.append(shown[0].text if shown else None)
        if len(notices) == 2:
            shoot(driver, "play-stuck")

    def away_from_mrx(legal: list[int]) -> int:
        # Not where Mister X may be: this test is about the detectives' end, not a catch.
        possible = set(driver.execute_script(
            "return [...document.querySelectorAll('.station.possible')]"
            ".map(g => Number(g.getAttribute('data-station')))"))
        return next((st for st in legal if st not in possible), legal[0])

    sent = play_out(driver, each, away_from_mrx)
    record = stored_game(driver, served.base)
    # The first turn names those before the one on 13 in the round (none for D1), every
    # later turn all four: skipped after its move, and before it.
    first = notice([i for i in stuck if i < stations.index(13)])
    assert notices == [first] + [notice(stuck)] * (len(notices) - 1), record["outcome"]
    assert moves_of(record, lambda seat: seat != "mrx") == sent
    ending = record["outcome"]["termination"]
    assert ending in ("detectives_stuck", "caught"), ending  # caught: all moves were near him
    if ending == "detectives_stuck":
        assert len(sent) == 4  # its four underground tickets
        assert driver.find_element("id", "play-headline").text == "You lose"
        assert driver.find_element("id", "play-why").text.startswith(
            "No detective could move any more")
        shoot(driver, "play-over")
    assert not severe_logs(driver)


def test_a_whole_classic_game_shows_the_replays_numbers_and_the_last_moves(
        driver: Any, served: Served) -> None:
    """A whole classic game as Mister X: after every move (the detectives' too, and after
    the last) the tickets table shows the stored replay's counts; on each of his turns
    the detectives' moves since his last are drawn from→to on the board, the tab title
    says "your turn", both clocks are shown, the status line is a live region, his
    moves are ringed as the legend says; Esc
    closes the ticket chooser, which opens over the board without moving it; a detective
    the rules skip is announced; on a phone the tickets table is not clipped."""
    start(driver, served.base, "erin", "classic", "mrx")
    driver.execute_script(TICKET_SNAPSHOTS)
    seen: list[tuple[int, dict[str, Any]]] = []
    checked_chooser: list[bool] = []

    def each(turn: dict[str, Any]) -> None:
        seen.append((int(turn["turn"]), dict(driver.execute_script(FEEDBACK))))
        if checked_chooser:
            return
        # His moves are ringed as the legend's key draws it: wider than a station's dot,
        # in the key's colour.
        rings = driver.execute_script(RINGS)
        assert rings["ring"] >= 1.3 and rings["width"] >= 3, rings
        assert rings["stroke"] == rings["key"] and "ringed: your moves" in rings["legend"], rings
        # Esc closes the chooser; the board does not move when it opens.
        top = driver.execute_script(
            "return document.querySelector('.board-port').getBoundingClientRect().top")
        for station in turn["legal"]:
            click_station(driver, station)
            if driver.find_elements("css selector", "#chooser:not([hidden])"):
                break
        else:
            return
        top_open = driver.execute_script(
            "return document.querySelector('.board-port').getBoundingClientRect().top")
        assert abs(top_open - top) < 0.5, (top, top_open)  # the chooser opens over it
        from selenium.webdriver.common.keys import Keys
        driver.find_element("css selector", "body").send_keys(Keys.ESCAPE)
        wait(driver, lambda d: d.find_elements("css selector", "#chooser[hidden]"), "Esc closes it")
        assert driver.execute_script(
            "return document.querySelector('.board-port').getBoundingClientRect().top") == top
        checked_chooser.append(True)

    play_out(driver, each)
    record = stored_game(driver, served.base)
    frames = record["frames"]
    snapshots = driver.execute_script("return window.__tickets")
    assert snapshots[-1]["over"] and snapshots[-1]["applied"] == len(frames) - 1, snapshots[-1]
    applied = {s["applied"] for s in snapshots}
    assert applied >= set(range(1, len(frames))), sorted(set(range(len(frames))) - applied)
    for snap in snapshots:
        assert snap["shown"] == _expected_tickets(frames[snap["applied"]], snap["kinds"]), (
            snap, frames[snap["applied"]]["tickets"])
    # The detectives' moves since his last one, marked on his turn.
    turns = [f["turn"] for f in frames[1:]]
    seats = ["mrx", *sorted(s for s in record["players"] if s != "mrx")]
    for number, shown in seen:
        assert shown["title"].startswith("Your turn"), shown
        assert shown["mine"].startswith("You: ") and "for this move" in shown["mine"], shown
        assert shown["theirs"].startswith("random: "), shown
        assert shown["statusLive"] == "polite"
        since: list[dict[str, Any]] = []
        for t in reversed(turns[:number - 1]):
            if t["seat"] == "mrx":
                break
            since.insert(0, t)
        expected = []
        for t in since:
            i = turns.index(t) + 1
            seat = t["seat"]
            k = seats.index(seat) - 1
            expected.append([seat, frames[i - 1]["detectives"][k], frames[i]["detectives"][k]])
        assert shown["marks"] == expected, (number, shown, since)
        skipped = number > 1 and len(since) < len(seats) - 1
        assert (shown["stuck"] is not None) == skipped, (number, shown, since)
    assert checked_chooser
    assert "Your turn" not in driver.title
    assert not axe_serious(driver)  # the Play page with a finished game
    try:
        driver.set_window_size(*PHONE)
        clipped = settled(driver, """
            const t = document.getElementById('tickets');
            const box = t.closest('.scroll');
            return {table: Math.ceil(t.scrollWidth), box: box.clientWidth,
                    page: document.documentElement.scrollWidth};""", "the tickets on a phone")
        assert clipped["table"] <= clipped["box"] and clipped["page"] <= PHONE[0], clipped
    finally:
        driver.set_window_size(*DESKTOP)
    _rematch_confirmed_and_remembered(driver, served)
    assert not severe_logs(driver)
