"""The pages say what they show and why, in a real browser (issue 25): every address the
router can be given renders a page or a clear message, a team's leaderboard link finds
its games, permalinks keep the controls in view, counts read right, empty lists say what
was filtered, and the live page shows a running game from move 1. Headless Chromium via
Selenium (as tests/host/test_web_browser.py), a real match server, a real SQLite file."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.host.browser_helpers import (
    DESKTOP,
    FIT,
    NAVIGATE,
    PHONE,
    Site,
    js,
    load,
    run,
    severe_logs,
    wait_for,
)
from tests.host.web_helpers import (
    CLASSIC_GAME,
    TEAM,
    XSS,
    get_json,
    live_grid5_game,
)

pytestmark = pytest.mark.xdist_group("browser")


def failed_fetches(logs: list[str]) -> list[tuple[str, int]]:
    """(API address, status) of each "Failed to load resource" console entry; anything
    else in ``logs`` fails the test."""
    out = []
    for entry in logs:
        found = re.match(r"^(\S+/api/\S+) - Failed to load resource: the server responded "
                         r"with a status of (\d{3})", entry)
        assert found, entry
        out.append((found.group(1), int(found.group(2))))
    return out


# ---------------------------------------------------------------------- the routes


def routes(tid: str, team_tid: str, players: list[str], rulesets: list[str],
           games: list[str]) -> list[tuple[str, set[int]]]:
    """Every kind of address app.js's router takes (leaderboard, tournaments, games, live:
    list and item pages, each page's query parameters), with real and unknown values, and
    malformed ones; each with the API statuses other than 200 its page may meet (a page
    that asks for one game or tournament by id meets 404 for an unknown one)."""
    def q(text: str) -> str:
        return quote(text, safe="")

    out: list[tuple[str, set[int]]] = [("", set()), ("#", set()), ("#/", set()),
                                       ("#/leaderboard", set())]
    for rules in [*rulesets, "nope", ""]:
        out.append((f"#/?rules={q(rules)}", set()))
        for tournament in (tid, team_tid):
            out.append((f"#/?rules={q(rules)}&tournament={tournament}", set()))
    out += [(f"#/?tournament={t}", set()) for t in (tid, team_tid, "nope", "")]
    out += [("#/tournaments", set()), (f"#/tournaments/{tid}", set()),
            (f"#/tournaments/{team_tid}", set()), ("#/tournaments/nope", {404}),
            ("#/tournaments/", set())]
    out += [(f"#/games?player={q(p)}", set()) for p in [*players, "nobody", ""]]
    out += [(f"#/games?rules={q(r)}", set()) for r in [*rulesets, "nope"]]
    out += [(f"#/games?tournament={t}", set()) for t in (tid, team_tid, "nope")]
    out += [(f"#/games?result={r}", set()) for r in ("mrx", "detectives", "none", "maybe")]
    out += [("#/games?termination=caught", set()), ("#/games?termination=nap", {400}),
            (f"#/games?rules=classic&tournament={tid}&player={q(TEAM)}", set())]
    out += [(f"#/games?offset={o}", set()) for o in
            ("0", "10", "13", "500", "-1", "abc", "99999999999999999999999", "", "1e3")]
    for game in games:
        out += [(f"#/games/{q(game)}", set()), (f"#/games/{q(game)}?move=end&view=mrx", set()),
                (f"#/games/{q(game)}?move=5&view=detectives", set()),
                (f"#/live/{q(game)}", {404})]  # over: its replay
    out += [(f"#/games/{q(games[0])}?move={move}&view={view}", set()) for move, view in (
        ("0", "all"), ("-5", "all"), ("99999999999999999999", "mrx"), ("x", "bogus"),
        ("", ""), ("end", "detectives"))]
    out += [("#/games/nope", {404}), ("#/live", set()), ("#/live/nope", {404}),
            ("#/games/", set()), ("#/live/", set())]
    # Malformed: broken escapes, unknown routes, extra path segments, odd characters.
    out += [(h, set()) for h in (
        "#/games/%", "#/games/%E0%A4%A", "#/tournaments/%zz", "#/live/%", "#/%",
        "#/games?player=%", "#/games?player=%E0%A4%A", "#/?rules=%", "#/nope",
        "#/constructor", "#/__proto__", "#/games/a/b", "#/leaderboard/x", "#//",
        "#/games?offset=1&offset=-1", "#/games??player=x")]
    out += [("#/games/%3Cb%3E", {404}), ("#/games/%3Cb%3E?move=1", {404})]
    # The ladder, a bot's ladder page and the Play page (issue 26; this server runs no
    # ladder and stores no ladder game: a bot's page is a 404 said in words).
    out += [("#/ladder", set()), ("#/ladder/grid5", set()), ("#/ladder/nope", set()),
            ("#/ladder/grid5/bots/random", {404}), (f"#/ladder/grid5/bots/{q(XSS)}", {404}),
            ("#/ladder/nope/bots/random", {404}), ("#/ladder/grid5/bots", set()),
            ("#/ladder/grid5/x/random", set()), ("#/ladder/grid5/bots/random/x", set()),
            ("#/ladder/%", set()), ("#/ladder/grid5/bots/%E0%A4%A", set()),
            ("#/play", set()), ("#/play?rules=grid5&side=detectives&opponent=random", set()),
            (f"#/play?rules=nope&side=bogus&opponent={q(XSS)}", set()), ("#/play/x", set())]
    return out


@dataclass
class Visit:
    """One address of :func:`routes` as :func:`visit_routes` saw it."""

    hash: str
    expected: set[int]
    """The API statuses other than 200 its page may meet."""
    page: dict[str, Any]
    """:data:`browser_helpers.NAVIGATE`'s answer."""
    board: str | None
    """A replay whose board was not laid out: what was waited for."""
    fit: dict[str, Any]
    """How the page fit the screen (:data:`browser_helpers.FIT`)."""
    severe: list[str]
    """The console's SEVERE entries it left."""


@dataclass
class Walk:
    players: list[str]
    rulesets: list[str]
    visits: list[Visit]


async def visit_routes(driver: Any, site: Site) -> Walk:
    """Every address of :func:`routes`, opened one after another in one page at 390x844,
    once for the two tests that check them (here and tests/host/test_web_phone.py: it is the
    same walk, a hundred pages rendered): what each showed, how it fit the screen (a
    replay's once its board is laid out) and the console's SEVERE entries it left."""
    walk: Walk | None = site.cache.get("routes")
    if walk is not None:
        return walk
    base = site.base
    _, board = await get_json(f"{base}api/leaderboard", ready=True)
    rulesets = [b["ruleset"] for b in board["rulesets"]]
    players = sorted({r["player"] for b in board["rulesets"] for r in b["rows"]})
    _, listing = await get_json(f"{base}api/games?limit=500", ready=True)
    ids = [g["game_id"] for g in listing["games"]]
    games = [CLASSIC_GAME, ids[1], next(i for i in ids if i.startswith("team-"))]
    visits = []
    try:
        await run(driver.set_window_size, *PHONE)
        await load(driver, base, "#/")
        await run(severe_logs, driver)  # nothing from before
        for hash_, expected in routes(site.seeded.tournament_id, site.team_tid, players,
                                      rulesets, games):
            page = await run(driver.execute_async_script, NAVIGATE, hash_, 10_000)
            board_missing = None
            if page["settled"] and "/games/" in hash_ and page["h1"] and \
                    page["h1"][0].startswith("Game "):
                # A replay: wait for its board to be laid out at this width.
                try:
                    await wait_for(driver, lambda d: d.execute_script(
                        "const s = document.querySelector('svg.board');"
                        "return !s || s.getAttribute('data-scale') !== null"), f"{hash_} board")
                except Exception as exc:  # a TimeoutException: the test that needs it fails
                    board_missing = f"{hash_} board: {exc!r}"
            fit = await run(js, driver, FIT)
            visits.append(Visit(hash_, expected, page, board_missing, fit,
                                await run(severe_logs, driver)))
    finally:
        await run(driver.set_window_size, *DESKTOP)
    walk = site.cache["routes"] = Walk(players, rulesets, visits)
    return walk


async def test_every_route_renders_a_page_or_a_message(driver: Any, site: Site) -> None:
    """Property: each address of :func:`routes` renders a page (a heading) or a clear
    message; never "Loading…" forever, never "undefined", "NaN" or "[object"; the page
    asks the API only with its own parameters; the browser's console has no SEVERE entry
    but an API answer the address was expected to meet (an unknown id's 404), and the page
    then says what is wrong. (On a phone's screen: :func:`visit_routes`.)"""
    walk = await visit_routes(driver, site)
    assert TEAM in walk.players and XSS in walk.players
    assert walk.rulesets == ["classic", "grid5"]
    assert len(walk.visits) > 80
    for visit in walk.visits:
        hash_, page = visit.hash, visit.page
        assert page["settled"], (hash_, page["at"], page["text"][:200])
        text = page["text"]
        assert "Loading…" not in text, hash_
        assert page["h1"] or page["errors"], (hash_, text[:200])
        assert all(e.strip() for e in page["errors"]), hash_
        for bad in ("undefined", "NaN", "[object", "null"):
            assert bad not in text, (hash_, bad, text[:300])
        for address in page["fetched"]:
            assert "object" not in address and "undefined" not in address, address
            if "/api/games?" in address:
                assert set(re.findall(r"[?&]([^=&]+)=", address)) <= {
                    "rules", "tournament", "player", "result", "termination", "limit",
                    "offset"}, address
        failed = failed_fetches(visit.severe)
        assert {status for _, status in failed} <= visit.expected, (hash_, failed)
        if failed and not hash_.startswith("#/live/"):
            assert page["errors"], (hash_, text[:200])


# ---------------------------------------------------------------------- the items


async def test_team_leaderboard_link_lists_the_team_games(driver: Any,
                                                          site: Site) -> None:
    """Item 14: a team player's leaderboard link (``#/games?player=random%2Fgreedy``)
    lists its games, naming the player with the bot that played each side."""
    base = site.base
    await load(driver, base, f"#/?tournament={site.team_tid}")
    link = await run(js, driver, """
        return [...document.querySelectorAll('table.leaderboard td.player a')]
          .find(a => a.textContent === arguments[0]).getAttribute('href');""", TEAM)
    assert link == f"#/games?player={quote(TEAM, safe='')}&rules=grid5"
    page = await load(driver, base, link)
    assert "4 games" in page["notes"], page["text"][:300]
    rows = await run(js, driver, "return [...document.querySelectorAll('#games tbody tr')]"
                                 ".map(tr => [...tr.querySelectorAll('td.player')]"
                                 ".map(td => td.textContent))")
    assert len(rows) == 4
    for mrx, detectives in rows:
        assert f"{TEAM} (random)" in (mrx, detectives) or \
            f"{TEAM} (greedy)" in (mrx, detectives), (mrx, detectives)
    assert not await run(severe_logs, driver)


async def test_replay_permalinks_keep_the_header_and_controls_in_view(
        driver: Any, site: Site) -> None:
    """Item 15: a permalink to a move (``?move=10``, ``?move=end``) opens at the top of
    the page, on a phone (390x844) and on a desktop: the header and the replay controls
    in view, the move's row scrolled into view inside the turns panel only."""
    base = site.base
    try:
        for width, height in (PHONE, DESKTOP):
            await run(driver.set_window_size, width, height)
            for move in ("10", "end", "20"):
                page = await load(driver, base, f"#/games/{CLASSIC_GAME}?move={move}")
                assert page["scrollY"] == 0, (width, move)
                view = await run(js, driver, """
                    const box = (e) => e.getBoundingClientRect();
                    const row = document.querySelector('.turns tr.current');
                    const panel = row.closest('.turns');
                    return {header: box(document.querySelector('header')).top,
                      wide: document.documentElement.scrollWidth - window.innerWidth,
                      controls: box(document.getElementById('next')).bottom,
                      height: window.innerHeight,
                      rowTop: box(row).top, rowBottom: box(row).bottom,
                      panelTop: box(panel).top, panelBottom: box(panel).bottom};""")
                assert view["header"] == 0 and view["controls"] <= view["height"], view
                assert view["wide"] <= 0, view  # no sideways scrolling either
                assert view["panelTop"] <= view["rowTop"] and \
                    view["rowBottom"] <= view["panelBottom"] + 1, (width, move, view)
    finally:
        await run(driver.set_window_size, *DESKTOP)


async def test_malformed_escapes_render_a_message(driver: Any,
                                                  site: Site) -> None:
    """Item 16: ``#/games/%`` (and every other broken %-escape in a path) renders a
    message instead of "Loading…" forever with ``URIError: URI malformed``."""
    base = site.base
    for hash_ in ("#/games/%", "#/tournaments/%E0%A4%A", "#/live/%zz"):
        page = await load(driver, base, hash_)
        assert page["h1"] == ["Malformed address"], page["text"][:200]
        assert "broken %-escape" in page["errors"][0]
        assert not await run(severe_logs, driver), hash_


async def test_games_page_sends_only_its_filters(driver: Any,
                                                 site: Site) -> None:
    """Item 17: the games page asks ``/api/games`` with its filters, the limit and the
    offset only (it sent ``page=[object Object]``), and its pager links keep the filters."""
    base = site.base
    page = await load(driver, base, "#/games?rules=grid5&offset=10")
    [asked] = [a for a in page["fetched"] if "/api/games" in a]
    assert asked.endswith("/api/games?rules=grid5&offset=10&limit=50"), asked
    newer = await run(js, driver, "return [...document.querySelectorAll('main a')]"
                                  ".find(a => a.textContent === '← newer').hash")
    assert newer == "#/games?rules=grid5&offset=0"
    assert not await run(severe_logs, driver)


async def test_counts_read_right_for_one(driver: Any, site: Site) -> None:
    """Item 20: "1 possible location", "1 game" (it said "1 possible locations"): every
    count goes through one helper."""
    base = site.base
    _, full = await get_json(f"{base}api/games/{CLASSIC_GAME}?perspective=detectives")
    frame = next(i for i, f in enumerate(full["frames"]) if len(f["possible"]) == 1)
    await load(driver, base, f"#/games/{CLASSIC_GAME}?move={frame}&view=detectives")
    count = await run(js, driver, "return document.getElementById('possible-count')"
                                  ".textContent")
    assert count == "1 possible location"
    page = await load(driver, base, "#/games?rules=classic")
    assert "1 game" in page["notes"]
    words = await run(driver.execute_async_script, """
        const done = arguments[arguments.length - 1];
        import('/static/dom.js').then(m => done(
          [m.plural(0, 'game'), m.plural(1, 'game'), m.plural(2, 'pair')]));""")
    assert words == ["0 games", "1 game", "2 pairs"]
    assert not await run(severe_logs, driver)


async def test_empty_states_say_what_was_filtered(driver: Any,
                                                  site: Site) -> None:
    """Item 21: a ruleset filter with another ruleset's tournament says that there are no
    decided games of that ruleset in that tournament, and which ruleset the tournament
    plays (it said "No decided games yet. Play some…"); empty games lists name their
    filters too."""
    tid = site.seeded.tournament_id
    base = site.base
    page = await load(driver, base, f"#/?rules=classic&tournament={tid}")
    message = await run(js, driver, "return document.getElementById('no-games')"
                                    ".textContent")
    assert message == (f"No decided games of ruleset classic, tournament {tid}. "
                       f"Tournament {tid} plays ruleset grid5."), message
    assert "Play some" not in page["text"]
    page = await load(driver, base, "#/?rules=nope")
    assert "No decided games of ruleset nope." in page["text"]
    page = await load(driver, base, "#/games?player=nobody&result=mrx")
    assert "No games of player nobody, result mrx." in page["notes"][0]
    page = await load(driver, base, "#/games?offset=500")
    assert page["notes"][0] == ("No games on this page: 17 games match, and this page "
                                "starts at game 501. First page")
    page = await load(driver, base, "#/?tournament=nope")
    assert page["errors"][0].startswith("No tournament nope is stored here.")
    assert not await run(severe_logs, driver)


async def test_live_page_shows_the_moves_from_move_1(driver: Any, tmp_path: Path) -> None:
    """Item 19: the live page opened mid-game lists every move from turn 1 (it began at
    the turn it was opened at), Mister X's as tickets with stations on reveal moves only,
    then each new move as it is played."""
    # Mister X's 4 moves, the detectives' 8.
    async with live_grid5_game(tmp_path, 12) as live:
        await load(driver, live.base, f"#/live/{live.game}")
        rows = await run(js, driver, """
            return [...document.querySelectorAll('.turns tbody tr')]
              .map(tr => [...tr.children].map(td => td.textContent));""")
        assert [int(r[0]) for r in rows] == list(range(12, 0, -1))
        mrx = [r[2] for r in reversed(rows) if r[1] == "Mister X"]
        assert len(mrx) == 4 and [":" in m for m in mrx] == [False, False, True, False]
        await live.play(1)
        await wait_for(driver, lambda dr: dr.find_elements(
            "css selector", ".turns tbody tr[data-turn='13']"), "turn 13 listed")
        assert not await run(severe_logs, driver)
