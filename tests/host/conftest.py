"""Fixtures of the web tests: the seeded database (:func:`web_helpers.seed_database`) and,
for the browser tests (the xdist group ``browser``), the shared browser and server
(:mod:`browser_helpers`).

A module whose tests read the pages' websocket traffic sets ``RECORD_WEBSOCKETS = True``:
its ``driver`` records every frame (:func:`browser_helpers.record_websockets`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.host.browser_helpers import (
    Site,
    record_websockets,
    shared_browser,
    shared_site,
    stop_recording,
)
from tests.host.web_helpers import Seeded, add_team_tournament, seed_database


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Seeded:
    """The module's own copy of the web tests' database."""
    return seed_database(tmp_path_factory.mktemp("web") / "yard.db")


@pytest.fixture(scope="module")
def team_tid(seeded: Seeded) -> str:
    """The id of a tournament of the team player :data:`web_helpers.TEAM`, added to
    :func:`seeded`."""
    return add_team_tournament(seeded.url)


@pytest.fixture(scope="module")
def driver(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The browser group's headless Chromium (:func:`browser_helpers.shared_browser`)."""
    for chrome in shared_browser(request):
        if not getattr(request.module, "RECORD_WEBSOCKETS", False):
            yield chrome
            continue
        recording = record_websockets(chrome)
        try:
            yield chrome
        finally:
            stop_recording(chrome, recording)


@pytest.fixture(scope="module")
def site(request: pytest.FixtureRequest) -> Site:
    """The browser group's server on the seeded database plus a tournament of the team
    player :data:`web_helpers.TEAM` (:func:`browser_helpers.shared_site`)."""
    return shared_site(request)
