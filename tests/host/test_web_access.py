"""Accessibility in a real browser (issue 43, "Accessible"): the board's transport lines
and the possible-location fill, as Chromium renders them (computed colour with its
opacity, over the board's computed background), have a non-text contrast of at least 3:1
(WCAG 2.2, 1.4.11) and stay at least 20 apart (CIE76 ΔE) from each other under simulated
deuteranopia and protanopia (Machado 2009, severity 1); the lines also differ by width or
dash. axe-core (the ``axe-selenium-python`` package's copy) finds no serious or critical
violation on any page. The browser and the server are the group's
(:mod:`browser_helpers`)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.host.browser_helpers import Site, axe_serious, js, load, run, wait_for
from tests.host.colours import contrast, over, pair_distances, parse_css
from tests.host.web_helpers import CLASSIC_GAME

pytestmark = pytest.mark.xdist_group("browser")

#: The board's background and, for each transport and the possible fill, the computed
#: colour, opacities (element and paint), width and dash pattern.
RENDERED = """
const port = document.querySelector('.board-port');
const out = {background: getComputedStyle(port).backgroundColor, marks: {}};
for (const t of ['taxi', 'bus', 'underground', 'ferry']) {
  const el = document.querySelector(`svg.board .edge.${t}`);
  const s = getComputedStyle(el);
  out.marks[t] = {colour: s.stroke, opacity: Number(s.opacity) * Number(s.strokeOpacity),
                  width: s.strokeWidth, dash: s.strokeDasharray};
}
const c = getComputedStyle(document.querySelector('svg.board .station.possible circle'));
out.marks.possible = {colour: c.fill, opacity: Number(c.opacity) * Number(c.fillOpacity),
                      width: null, dash: null};
return out;
"""


async def test_board_colours_contrast_and_survive_colour_blindness(
        driver: Any, site: Site) -> None:
    await load(driver, site.base, f"#/games/{CLASSIC_GAME}?move=3&view=detectives")
    await wait_for(driver, lambda d: d.find_elements(
        "css selector", "svg.board .station.possible circle"), "possible stations")
    shown = await run(js, driver, RENDERED)
    background, _ = parse_css(shown["background"])
    colours = {}
    for name, mark in shown["marks"].items():
        colour, alpha = parse_css(mark["colour"])
        colours[name] = over(colour, alpha * mark["opacity"], background)
    ratios = {name: round(contrast(c, background), 2) for name, c in colours.items()}
    assert min(ratios.values()) >= 3, ratios
    for vision, pairs in pair_distances(colours).items():
        close = {pair: round(d, 1) for pair, d in pairs.items() if d < 20}
        assert not close, (vision, close)
    looks = {(m["width"], m["dash"]) for name, m in shown["marks"].items() if name != "possible"}
    assert len(looks) == 4, shown["marks"]  # not by colour alone


#: The pages axe checks: each kind of page of the router, a replay in each perspective.
PAGES = ["#/", "#/tournaments", "#/games", "#/live", "#/ladder", "#/play",
         f"#/games/{CLASSIC_GAME}?move=3&view=detectives",
         f"#/games/{CLASSIC_GAME}?move=end&view=all"]


async def test_axe_finds_no_serious_violation_on_any_page(driver: Any, site: Site) -> None:
    pages = [*PAGES, f"#/tournaments/{site.team_tid}"]
    found = {}
    for page in pages:
        await load(driver, site.base, page)
        bad = await run(axe_serious, driver)
        if bad:
            found[page] = bad
    assert not found, "\n".join(f"{p}: {b}" for p, b in found.items())
