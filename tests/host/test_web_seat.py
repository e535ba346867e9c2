"""People get a seat and come back (issue 41), in a real browser against real ``yard serve``
processes: with four busy house bots a person's Play starts a game or shows a queue place
and then starts one; a reload mid-game resumes the same game; a server stopped (SIGTERM)
ends the page's game as ``aborted`` and stores it so, and a server killed and restarted
tells the reconnecting page that its game is gone.

The browser is the group's (:mod:`browser_helpers`); every websocket frame the page gets is
recorded (``window.__frames``)."""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.host.browser_helpers import severe_logs
from tests.host.play_serving import (
    Server,
    free_port,
    get_json,
    start,
    state,
    states,
    until,
    wait,
)

pytestmark = pytest.mark.xdist_group("browser")
RECORD_WEBSOCKETS = True

#: Two house bots whose games take a few seconds (a move every 0.2 s), and two quick ones.
SLOW = ["tests/host/slow_bot.py:Slow:delay=0.2", "tests/host/slow_bot.py:Slow:delay=0.25"]
HOUSE = ["random", "greedy", *SLOW]


@pytest.fixture(scope="module")
def busy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Four house bots with one slot each, playing each other as often as they can."""
    server = Server(tmp_path_factory.mktemp("busy"), free_port(), HOUSE,
                    ("--house-games", "1", "--house-rate", "6000", "--move-time", "5"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def lone(tmp_path: Path) -> Iterator[Server]:
    """A server with one quick house bot, to be stopped and started again by the test."""
    server = Server(tmp_path, free_port(), ["random"])
    server.start()
    try:
        yield server
    finally:
        server.stop(signal.SIGKILL)


def my_turn(driver: Any) -> dict[str, Any]:
    """The page's state once it is the person's turn (rings on the board)."""
    return dict(wait(driver, lambda d: (s := state(d)) and s["state"] == "playing"
                     and s["legal"] and s, "my turn"))


def frames(driver: Any, kind: str) -> list[dict[str, Any]]:
    return [f for f in driver.execute_script("return window.__frames") if f.get("type") == kind]


def test_with_four_busy_house_bots_a_person_queues_then_plays(driver: Any, busy: Server
                                                              ) -> None:
    """The slow house bot is in a bot-vs-bot game when Play is pressed: the page shows its
    place in the bot's queue, then the game starts by itself (no try again)."""
    slow = SLOW[0]

    def playing(house: str) -> bool:
        return any(house in g["players"].values()
                   for g in get_json(f"{busy.base}api/live")["games"])

    for house in HOUSE:  # every house bot plays: the ladder keeps them all busy
        until(lambda house=house: playing(house), f"{house} in a ladder game")  # type: ignore[misc]
    until(lambda: playing(slow), "the slow bot in a ladder game")
    start(driver, busy.base, "quinn", slow)
    first = wait(driver, lambda d: (s := state(d)) and s["state"] in ("queued", "playing")
                 and s, "a queue place or the game")
    if first["state"] == "queued":  # the usual case: its game has seconds to go
        assert first["place"] == "1" and "number 1 in its queue" in first["status"]
        assert driver.find_elements("id", "leave-queue")
    turn = my_turn(driver)
    (started,) = frames(driver, "match_started")
    assert turn["game"] == started["game"]
    assert not frames(driver, "error")
    queued = frames(driver, "queued")
    # The queue may last less than a poll of the test: the page's own record of its states.
    assert ("queued" in states(driver)) == bool(queued), states(driver)
    assert all(q["opponent"] == slow and q["wait_s"] >= 0 for q in queued)
    driver.find_element("id", "resign").click()
    driver.find_element("id", "resign").click()
    wait(driver, lambda d: (s := state(d)) and s["state"] == "over", "the game over")
    assert not severe_logs(driver)


def test_a_reload_mid_game_resumes_the_same_game(driver: Any, busy: Server) -> None:
    """After a reload the page takes its seat again: same game id, its turn with rings, the
    Resign button; leaving first asks (beforeunload)."""
    start(driver, busy.base, "rory", "random")
    before = my_turn(driver)
    asks = driver.execute_script("""
const e = new Event('beforeunload', {cancelable: true});
window.dispatchEvent(e);
return e.defaultPrevented;""")
    assert asks  # leaving the page while the game runs asks first
    kept = json.loads(driver.execute_script(
        "return sessionStorage.getItem('yard.play.session')"))
    assert kept["game"] == before["game"] and kept["token"]
    driver.execute_script("location.reload()")
    from selenium.common.exceptions import NoAlertPresentException

    with contextlib.suppress(NoAlertPresentException):  # the beforeunload question
        driver.switch_to.alert.accept()
    after = my_turn(driver)
    assert after["game"] == before["game"] and after["resign"]
    (welcome,) = frames(driver, "welcome")
    assert welcome["resumed"] == [before["game"]] and not frames(driver, "match_started")
    hello = next(m for m in driver.execute_script("return window.__sent")
                 if isinstance(m, dict) and m.get("type") == "hello")
    assert hello["resume"] == kept["token"]
    driver.find_element("id", "resign").click()
    driver.find_element("id", "resign").click()
    over = wait(driver, lambda d: frames(d, "game_over"), "the game over")
    assert over[0]["game"] == before["game"] and over[0]["termination"] == "resigned"
    assert driver.execute_script("return sessionStorage.getItem('yard.play.session')") is None


def test_a_dropped_connection_comes_back_to_the_same_game(driver: Any, busy: Server) -> None:
    """The socket drops mid-game: the page reconnects by itself with its resume token and
    plays on in the same game."""
    start(driver, busy.base, "uma", "random")
    before = my_turn(driver)
    driver.execute_script("window.__sockets[window.__sockets.length - 1].close()")
    wait(driver, lambda d: len(frames(d, "welcome")) == 2, "the page back")
    after = my_turn(driver)
    assert after["game"] == before["game"] and after["resign"] and after["connected"] == "1"
    hellos = [m for m in driver.execute_script("return window.__sent")
              if isinstance(m, dict) and m.get("type") == "hello"]
    welcomes = frames(driver, "welcome")
    assert len(hellos) == 2 and hellos[1]["resume"] == welcomes[0]["resume_token"]
    assert welcomes[1]["resumed"] == [before["game"]]
    driver.find_element("id", "resign").click()
    driver.find_element("id", "resign").click()
    wait(driver, lambda d: frames(d, "game_over"), "the game over")


def stored_termination(db: Path, game: str) -> str | None:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        row = conn.execute("select termination from games where id = ?",
                           (game,)).fetchone()
    return None if row is None else str(row[0])


def test_a_stopped_server_ends_the_game_and_a_crashed_one_says_it_is_gone(
        driver: Any, lone: Server) -> None:
    """SIGTERM: the page is told at once (the server stopped the game) and the game is
    stored as aborted. A crash (SIGKILL) mid-game and a restart: the page reconnects by
    itself, shows no rings or Resign while the connection is gone, then says the game is
    gone (not stored)."""
    start(driver, lone.base, "sam", "random")
    game = my_turn(driver)["game"]
    lone.stop(signal.SIGTERM)
    wait(driver, lambda d: d.find_elements("id", "play-stopped"), "the page told")
    assert state(driver)["state"] == "over"  # type: ignore[index]
    (over,) = frames(driver, "game_over")
    assert over["termination"] == "aborted" and over["winner"] is None
    assert stored_termination(lone.db, game) == "aborted"

    lone.start()
    start(driver, lone.base, "sam", "random")
    game = my_turn(driver)["game"]
    lone.stop(signal.SIGKILL)
    dropped = wait(driver, lambda d: (s := state(d)) and s["state"] == "reconnecting" and s,
                   "the page reconnecting")
    assert dropped["legal"] == 0 and not dropped["resign"] and dropped["connected"] == "0"
    assert driver.find_elements("id", "play-grace")  # the time left before the game is lost
    lone.start()
    gone = wait(driver, lambda d: d.find_elements("id", "play-gone"), "the page told",
                timeout=60)
    assert game in gone[0].text
    wait(driver, lambda d: "not stored" in d.find_element("id", "play-gone-verdict").text,
         "the verdict")
    assert state(driver)["legal"] == 0  # type: ignore[index]
    errors = frames(driver, "error")
    assert errors and errors[-1]["code"] == "bad_resume_token"
    assert stored_termination(lone.db, game) is None
