"""Shared pieces of the browser tests (the xdist group ``browser``: tests/host/test_web_board.py,
test_web_browser.py, test_web_pages.py, test_web_phone.py, test_web_play.py,
test_web_access.py): one headless
Chromium (Debian's ``chromium-headless-shell``, else ``chromium``, with ``chromium-driver``,
driven by Selenium) and one match server on the seeded SQLite database of
:mod:`web_helpers`, both shared by every module of the group (one worker runs them all,
one after another, in one process) and stopped after the last of them; the Selenium
helpers the tests use.

A test that runs its own server runs it in its event loop, so every Selenium call goes
through ``asyncio.to_thread`` (:func:`run`). The shared server runs in a thread of its
own, on its own event loop: the tests that only read the seeded database use it
(:func:`shared_site`) instead of starting one each (a fresh server computes the ratings
again for its first leaderboard). Screenshots go to ``$YARD_SCREENSHOTS`` (default:
``build/screenshots`` in the repository). Without a browser these tests are skipped
locally and fail under ``CI=true``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import pytest

from tests.host.web_helpers import Seeded, add_team_tournament, running_server, seed_database

#: Debian's ``chromium-headless-shell`` (Chromium's old headless mode, without the browser's
#: user interface) when installed: the browser tests take ~20 % less CPU with it than with
#: ``chromium --headless``; else ``chromium``. YARD_CHROMIUM names another binary. The
#: shell's binary itself, not /usr/bin's wrapper script: the wrapper does not exec it, so
#: the driver's quit would stop the wrapper and leave the browser running.
CHROMIUM = os.environ.get("YARD_CHROMIUM") or next(
    (path for path in ("/usr/lib/chromium/chromium-headless-shell", "/usr/bin/chromium")
     if Path(path).exists()), "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("YARD_CHROMEDRIVER", "/usr/bin/chromedriver")
SHOTS = Path(os.environ.get("YARD_SCREENSHOTS",
                            Path(__file__).resolve().parents[2] / "build" / "screenshots"))
WAIT_S = 60.0  # what a page gets to show something: only to turn a hang into a failure
GROUP = "browser"
"""The xdist group of the modules that share the browser and the server."""

PHONE = (390, 844)
DESKTOP = (1400, 1000)

T = TypeVar("T")


def _browser_missing() -> str | None:
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (Path(path).exists() or shutil.which(path)):
            return (f"{path} not found (apt-get install chromium-headless-shell "
                    "chromium-driver)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    return None


def _launch() -> Any:
    missing = _browser_missing()
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"browser tests need a browser in CI: {missing}")
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # --disable-ipc-flooding-protection: Chromium ignores address changes beyond 200 in 10
    # seconds in a page; the route property test (test_web_pages.py) makes more.
    headless = () if "headless-shell" in Path(CHROMIUM).name else ("--headless=new",)
    for arg in (*headless, "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={DESKTOP[0]},{DESKTOP[1]}", "--hide-scrollbars",
                "--disable-ipc-flooding-protection"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    chrome = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    chrome.set_page_load_timeout(WAIT_S)
    return chrome


@dataclass
class Site:
    """The shared server: the seeded database (:func:`web_helpers.seed_database`, plus a
    tournament of the team player, :func:`web_helpers.add_team_tournament`) and the http
    base address of a match server on it. ``cache``: what tests compute once from it."""

    seeded: Seeded
    team_tid: str
    base: str
    cache: dict[str, Any] = field(default_factory=dict)


class _Shared:
    """The group's browser and server, and which of its modules are done with them."""

    chrome: ClassVar[Any] = None
    site: ClassVar[Site | None] = None
    stop_site: ClassVar[Callable[[], None] | None] = None
    done: ClassVar[set[Path]] = set()

    @classmethod
    def close(cls) -> None:
        chrome, cls.chrome = cls.chrome, None
        stop, cls.stop_site, cls.site = cls.stop_site, None, None
        try:
            if chrome is not None:
                chrome.quit()
        finally:
            if stop is not None:
                stop()


def _group_modules(session: pytest.Session) -> set[Path]:
    return {item.path for item in session.items
            if any(GROUP in mark.args for mark in item.iter_markers("xdist_group"))}


def _module_done(request: pytest.FixtureRequest) -> None:
    """After a module: the browser on an empty page at the desktop size, its console read
    (nothing left for the next module's tests); once no module of the group is left to
    run, the browser and the server stopped."""
    _Shared.done.add(request.path)
    chrome = _Shared.chrome
    if chrome is not None:
        try:
            chrome.set_window_size(*DESKTOP)
            chrome.get("about:blank")
            chrome.get_log("browser")
        except Exception:  # a dead browser: started again by the next module
            _Shared.close()
    if not _group_modules(request.session) - _Shared.done:
        _Shared.close()


def shared_browser(request: pytest.FixtureRequest) -> Iterator[Any]:
    """For a module-scoped ``driver`` fixture (``yield from shared_browser(request)``): the
    group's headless Chromium, started by the first module that asks for it."""
    if _Shared.chrome is None:
        _Shared.chrome = _launch()
        request.config.add_cleanup(_Shared.close)  # should a module of the group not run
    try:
        yield _Shared.chrome
    finally:
        _module_done(request)


def shared_site(request: pytest.FixtureRequest) -> Site:
    """For a module-scoped fixture: the group's server on the seeded database, started by
    the first module that asks (the tests using it only read the database), stopped with
    the browser."""
    if _Shared.site is not None:
        return _Shared.site
    folder = request.getfixturevalue("tmp_path_factory").mktemp("site")
    seeded = seed_database(folder / "yard.db")
    team_tid = add_team_tournament(seeded.url)
    started: list[str] = []
    failed: list[BaseException] = []
    up = threading.Event()
    loop = asyncio.new_event_loop()
    stopping = asyncio.Event()

    async def serve() -> None:
        try:
            async with running_server(seeded.url) as (_, _app, base):
                started.append(base)
                up.set()
                await stopping.wait()
        except BaseException as exc:
            failed.append(exc)
            raise
        finally:
            up.set()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),),
                              name="browser-tests-server", daemon=True)
    thread.start()
    up.wait(60)
    if not started:
        raise RuntimeError(f"the shared server did not start: {failed}")

    def stop() -> None:
        loop.call_soon_threadsafe(stopping.set)
        thread.join(30)
        loop.close()

    _Shared.site = Site(seeded, team_tid, started[0])
    _Shared.stop_site = stop
    request.config.add_cleanup(_Shared.close)
    return _Shared.site


async def run(fn: Callable[..., T], *args: Any) -> T:
    """A blocking Selenium call off the event loop (that may serve the pages)."""
    return await asyncio.to_thread(fn, *args)


async def wait_for(driver: Any, check: Callable[[Any], Any], what: str) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    def waiting() -> Any:
        return WebDriverWait(driver, WAIT_S, poll_frequency=0.05).until(check, what)

    return await run(waiting)


#: Wraps window.WebSocket: every frame a page's sockets receive goes to ``window.__frames``
#: (parsed), every frame they send to ``window.__sent`` (:func:`record_websockets`); the
#: sockets themselves to ``window.__sockets`` (a test may drop one). Every tone a page
#: starts (Web Audio) goes to ``window.__tones``.
RECORDER = """
(() => {
  const Native = window.WebSocket;
  window.__frames = [];
  window.__sent = [];
  window.__sockets = [];
  class Recording extends Native {
    constructor(...args) {
      super(...args);
      window.__sockets.push(this);
      this.addEventListener('message', (event) => {
        try { window.__frames.push(JSON.parse(event.data)); }
        catch { window.__frames.push({type: '?', raw: String(event.data)}); }
      });
    }
    send(data) {
      try { window.__sent.push(JSON.parse(data)); } catch { window.__sent.push(data); }
      return super.send(data);
    }
  }
  window.WebSocket = Recording;
  // Every tone a page starts, with its audio context's state then ('running': heard).
  window.__tones = [];
  const Audio = window.AudioContext;
  if (Audio) {
    const create = Audio.prototype.createOscillator;
    Audio.prototype.createOscillator = function (...args) {
      const tone = create.apply(this, args);
      const start = tone.start;
      tone.start = (...when) => {
        window.__tones.push({state: this.state, hz: tone.frequency.value});
        return start.apply(tone, when);
      };
      return tone;
    };
  }
})();
"""


def record_websockets(driver: Any) -> str:
    """Install :data:`RECORDER` in every page loaded from now on, before any page script
    runs (CDP ``Page.addScriptToEvaluateOnNewDocument``); its id, for
    :func:`stop_recording`."""
    added = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument",
                                   {"source": RECORDER})
    return str(added["identifier"])


def stop_recording(driver: Any, identifier: str) -> None:
    driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument",
                           {"identifier": identifier})


#: True once the router has rendered the address now in the location bar (a page that
#: moves on by itself, as the live page to a stored game's replay, is waited for; the
#: replay viewer adds ?move=&view= to its own address, so paths are compared).
SETTLED = """
const ready = document.body.getAttribute('data-ready');
const now = location.hash.replace(/^#/, '') || '/';
return ready !== null && ready.split('?')[0] === now.split('?')[0];
"""

#: What a rendered page shows: its heading, messages, and every address it fetched.
PAGE = """
const main = document.getElementById('main');
return {
  text: main.innerText,
  h1: [...main.querySelectorAll('h1')].map(e => e.textContent),
  errors: [...main.querySelectorAll('.error')].map(e => e.textContent),
  notes: [...main.querySelectorAll('.note')].map(e => e.textContent),
  fetched: performance.getEntriesByType('resource').map(e => e.name),
  scrollY: window.scrollY,
  at: [location.hash, document.body.getAttribute('data-ready')],
};
"""

#: Go to address ``arguments[0]`` in the page already open (as a link does), wait in
#: the page until it is rendered (at most ``arguments[1]`` ms: checked whenever the
#: router marks the body, no polling), then answer :data:`PAGE` with ``settled``. An
#: address with the path of the page shown passes through an unknown one first (the
#: replay viewer keeps its page when only ?move=&view= change).
NAVIGATE = """
const [target, limit, done] = arguments;
const path = (h) => (h.replace(/^#/, '') || '/').split('?')[0];
const settled = () => { SETTLED };
const page = () => { PAGE };
const go = (hash) => new Promise((resolve) => {
  document.body.removeAttribute('data-ready');
  performance.clearResourceTimings();
  const finish = (ok) => { observer.disconnect(); clearTimeout(timer); resolve(ok); };
  const observer = new MutationObserver(() => { if (settled()) finish(true); });
  observer.observe(document.body, {attributes: true, attributeFilter: ['data-ready']});
  const timer = setTimeout(() => finish(settled()), limit);
  location.hash = hash;
});
(async () => {
  if (path(location.hash) === path(target)) await go('#/-');
  const ok = await go(target);
  done({...page(), settled: ok});
})();
""".replace("SETTLED", SETTLED).replace("PAGE", PAGE)

#: How the page fits the window: its width against the window's, the widest element
#: outside a sideways-scrolling box (what makes it wider), and the menu's box.
FIT = """
const out = {scroll: document.documentElement.scrollWidth, inner: window.innerWidth,
             body: document.body.scrollWidth, wide: []};
for (const el of document.querySelectorAll('body *')) {
  if (el.closest('.scroll, .turns, .board-port')) continue;
  const box = el.getBoundingClientRect();
  if (box.right > window.innerWidth + 0.5) out.wide.push(el.tagName + '.' + el.className);
  // Text wider than its own box (an unbreakable word) spills out without widening it.
  else if (el.clientWidth && el.scrollWidth > el.clientWidth + 1 &&
           getComputedStyle(el).overflowX === 'visible') {
    out.wide.push(el.tagName + '.' + el.className + ' (its text)');
  }
}
const nav = document.querySelector('nav').getBoundingClientRect();
out.nav = [nav.left, nav.right];
return out;
"""


def assert_fits(fit: dict[str, Any], where: str) -> None:
    """:data:`FIT`'s answer on a phone (390x844): nothing wider than the screen."""
    assert fit["inner"] == PHONE[0], fit
    assert fit["scroll"] <= fit["inner"], (where, fit)
    assert not fit["wide"], (where, fit["wide"][:5])
    assert fit["nav"][1] <= fit["inner"], (where, fit["nav"])


_counter = iter(range(1_000_000))


async def load(driver: Any, base: str, hash_: str) -> dict[str, Any]:
    """Open ``base`` + ``hash_`` as a fresh page (a query of its own makes every load a
    real one) and wait until it is rendered; what it shows."""
    await run(driver.get, f"{base}?load={next(_counter)}{hash_}")
    await wait_for(driver, lambda d: d.execute_script(SETTLED), f"{hash_} rendered")
    return dict(await run(js, driver, PAGE))


def js(driver: Any, script: str, *args: Any) -> Any:
    return driver.execute_script(script, *args)


def severe_logs(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def axe_serious(driver: Any) -> list[tuple[str, str, list[Any]]]:
    """axe-core's serious and critical violations on the page shown (the copy bundled by
    ``axe-selenium-python``): rule, impact, the first elements."""
    from axe_selenium_python import Axe

    axe = Axe(driver)
    axe.inject()
    result = axe.run()
    return [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
            for v in result["violations"] if v["impact"] in ("serious", "critical")]


def shoot(driver: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SHOTS / f"{name}.png"))
