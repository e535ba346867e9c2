"""A real ``yard serve`` for the Play page's browser tests, and what they share: polling
outside the browser, JSON answers that may be busy (503), and the Play form filled in
(:func:`start`) with the page's state read back (:func:`state`, :func:`states`)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests import SCALE
from tests.host.browser_helpers import WAIT_S
from tournament.processes import yard_argv

ROOT = Path(__file__).resolve().parents[2]


def get_json(url: str, timeout: float = 120.0) -> Any:
    """GET a JSON answer; a 503 (busy while games are played, ratings being computed) is
    asked again after its Retry-After, for ``timeout`` seconds (times :data:`SCALE`)."""
    deadline = time.monotonic() + timeout * SCALE
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=10) as reply:
                return json.load(reply)
        except urllib.error.HTTPError as exc:
            if exc.code != 503:
                raise
            time.sleep(float(exc.headers.get("Retry-After") or 1))  # what the server asks
    raise AssertionError(f"{url} stayed busy for {timeout * SCALE:.0f} s")


def until(check: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
    """Poll ``check`` (outside the browser) until it answers something truthy."""
    deadline = time.monotonic() + timeout * SCALE
    while True:
        try:
            found = check()
        except OSError:
            found = None
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def free_port() -> int:
    """A TCP port free on this machine now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """A ``yard serve --ladder grid5`` process (in a process group of its own, with its
    house bots) on a fixed port and database."""

    folder: Path
    port: int
    house: list[str]
    extra: tuple[str, ...] = ()
    proc: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def db(self) -> Path:
        return self.folder / "yard.db"

    def start(self) -> None:
        ready = self.folder / "ready"
        ready.unlink(missing_ok=True)
        args = ["serve", "--port", str(self.port), "--db", f"sqlite:///{self.db}",
                "--ladder", "grid5", "--ready-file", str(ready),
                "--admin-token-file", str(self.folder / "admin"), *self.extra]
        for spec in self.house:
            args += ["--house", spec]
        with (self.folder / "server.log").open("ab") as log:
            self.proc = subprocess.Popen(
                yard_argv(*args), stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
                start_new_session=True,
                env={**os.environ, "YARD_ADMIN_TOKEN": secrets.token_urlsafe(24),
                     "PYTHONPATH": str(ROOT)})

        def up() -> bool:
            assert self.proc is not None and self.proc.poll() is None, \
                (self.folder / "server.log").read_text()[-3000:]
            return ready.exists()

        until(up, "the server's ready file", 60)

        def connected() -> bool:
            rows = get_json(f"{self.base}api/ladder")["ladders"].get("grid5", [])
            return {r["name"] for r in rows if r["connected"]} >= set(self.house)

        until(connected, "the house bots on the ladder", 120)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop the server: SIGTERM (it stops its house bots and stores its games), or
        SIGKILL to its whole process group (a crash: nothing stored, bots gone too)."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        if sig == signal.SIGKILL:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.send_signal(sig)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wait(driver: Any, check: Callable[[Any], Any], what: str, timeout: float = WAIT_S
         ) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout * SCALE, poll_frequency=0.05).until(check, what)


def state(driver: Any) -> dict[str, Any] | None:
    return driver.execute_script("""
const root = document.getElementById('play-view');
if (!root) return null;
return {state: root.getAttribute('data-state'), game: root.getAttribute('data-game'),
        place: root.getAttribute('data-place'), turn: root.getAttribute('data-turn'),
        connected: root.getAttribute('data-connected'),
        legal: document.querySelectorAll('.station.legal').length,
        resign: !document.getElementById('resign').hidden,
        status: document.getElementById('play-status').textContent};""")


#: Records every state the Play page takes from now on in ``window.__states`` (the value
#: before each change of ``data-state``): a state that lasts less than a poll is seen too.
STATES = """
window.__states = [];
new MutationObserver((records) => {
  for (const r of records) window.__states.push(r.oldValue);
}).observe(document.body, {subtree: true, attributes: true, attributeOldValue: true,
                           attributeFilter: ['data-state']});
"""


def states(driver: Any) -> list[str]:
    """The states the Play page took since Play was pressed, in order, the present last."""
    return [s for s in driver.execute_script(
        "const v = document.getElementById('play-view');"
        "return [...window.__states, v && v.getAttribute('data-state')]") if s]


def start(driver: Any, base: str, name: str, opponent: str, side: str = "detectives"
          ) -> None:
    """Fill in the Play form and press Play (the game may start or queue)."""
    from selenium.webdriver.support.ui import Select

    driver.get(f"{base}?load={time.monotonic_ns()}#/play")
    wait(driver, lambda d: d.execute_script(
        "return document.body.getAttribute('data-ready') !== null && "
        "!document.getElementById('play-start').disabled"), "the Play form")
    box = driver.find_element("id", "play-name")
    box.clear()
    box.send_keys(name)
    Select(driver.find_element("id", "play-rules")).select_by_value("grid5")
    Select(driver.find_element("id", "play-side")).select_by_value(side)
    wait(driver, lambda d: opponent in [o.get_attribute("value") for o in d.find_elements(
        "css selector", "#play-opponent option")], f"{opponent} offered")
    Select(driver.find_element("id", "play-opponent")).select_by_value(opponent)
    driver.execute_script(STATES)
    driver.find_element("id", "play-start").click()
