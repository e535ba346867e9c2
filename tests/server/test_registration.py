"""Registration nobody can flood (issue 40.2): new accounts are bounded per remote address,
in all and in flight, each refusal saying which bound; and a flood of registrations never
holds up the logins of bots already registered (registrations hash on a thread of their
own). Counts and order of events, never wall-clock times (bench/registration_flood.py
measures those)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from db.store import Database
from host.accounts import AccountChecker
from host.writer import GameWriter
from protocol import Error, ErrorCode, Hello, Role, encode
from records import AccountInfo
from server.app import MatchServer
from server.config import ServerConfig
from server.core import Core
from server.outputs import AccountStatus, AccountVerdict, Authenticate, Send
from tests import SCALE
from tests.server.test_access import refused, say_hello, welcomed


def hello(core: Core, name: str, address: str, now: float, **fields: Any) -> tuple[int, Any]:
    """A registering ``hello`` from ``address``: its connection and what came back (an
    ``Authenticate`` while it waits for the account check, else the reply)."""
    conn = core.connect(now, address=address)
    out = core.receive(conn, encode(Hello(1, name, register=True, **fields)), now)
    return conn, next(o if isinstance(o, Authenticate) else o.message
                      for o in out if isinstance(o, Authenticate | Send))


def test_registrations_are_bounded_per_address_in_all_and_in_flight() -> None:
    core = Core(ServerConfig(accounts=True, open_registration=True, ladder=("grid5",),
                             registrations_per_address=2, registrations_total=5,
                             registration_window_s=60.0, registration_queue=3))
    waiting = [hello(core, f"a{i}", "10.0.0.1", 0.0) for i in range(2)]
    assert all(isinstance(out, Authenticate) for _, out in waiting)
    _, out = hello(core, "a2", "10.0.0.1", 1.0)  # a third from the same address
    assert isinstance(out, Error) and out.code is ErrorCode.REGISTRATION_LIMIT
    assert "from 10.0.0.1: 2 in the last 60 s, at most 2 (try again in 59 s)" in out.message
    conn, claim = hello(core, "bea", "10.0.0.2", 1.0, role=Role.HUMAN)  # people count too
    assert isinstance(claim, Authenticate) and claim.name == "human:bea"
    _, out = hello(core, "c0", "10.0.0.3", 1.0)  # three being made: the queue is full
    assert isinstance(out, Error) and "at most 3 at once" in out.message
    for c, _ in [*waiting, (conn, None)]:
        core.authenticated(c, AccountVerdict(AccountStatus.REGISTERED, "t"), 2.0)
    _, out = hello(core, "c1", "10.0.0.3", 2.0)
    assert isinstance(out, Authenticate)
    core.authenticated(1000, AccountVerdict(AccountStatus.UNAVAILABLE), 2.0)  # gone: no-op
    _, out = hello(core, "c2", "10.0.0.4", 3.0)
    assert isinstance(out, Authenticate)
    _, out = hello(core, "d0", "10.0.0.5", 4.0)  # five in the window: the server's bound
    assert isinstance(out, Error) and "on this server: 5 in the last 60 s, at most 5" in \
        out.message
    _, out = hello(core, "d1", "10.0.0.1", 61.0)  # the window has moved on
    assert isinstance(out, Authenticate)
    assert core.admission.registrations.refused == 3


class _Held:
    """An account store whose new accounts wait until ``release`` is set (a registration
    that takes as long as the test wants), counting them."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.release = threading.Event()
        self.started = 0

    def account(self, name: str) -> AccountInfo | None:
        return self.db.account(name)

    def account_like(self, name: str) -> str | None:
        return self.db.account_like(name)

    def add_account(self, name: str, source: str = "cli") -> str:
        self.started += 1
        assert self.release.wait(60 * SCALE), "never released"
        return self.db.add_account(name, source)

    def touch_account(self, name: str, when: Any = None) -> None:
        self.db.touch_account(name, when)


async def test_a_registration_flood_never_holds_up_a_registered_bots_logins(
        db: Database) -> None:
    token = db.add_account("steady")
    store = _Held(db)
    config = ServerConfig(accounts=True, open_registration=True, registration_queue=4,
                          registrations_per_address=1000, registrations_total=1000)
    server = MatchServer(config, GameWriter(db), port=0)
    server.accounts = AccountChecker(store)
    await server.start()
    flood: list[asyncio.Task[tuple[dict[str, Any], Any]]] = []
    try:
        url = server.url
        flood = [asyncio.create_task(say_hello(url, name=f"flood{i}", register=True))
                 for i in range(40)]
        async with asyncio.timeout(30 * SCALE):
            while sum(t.done() for t in flood) < 36:  # all but the queue: refused at once
                await asyncio.wait([t for t in flood if not t.done()],
                                   return_when=asyncio.FIRST_COMPLETED)
        refusals = [t.result()[0] for t in flood if t.done()]
        assert len(refusals) == 36
        assert {r["code"] for r in refusals} == {"registration_limit"}
        assert "at most 4 at once" in refusals[0]["message"]
        # The four accepted registrations hang in the database; logins go on regardless.
        for _ in range(10):
            _, ws = await welcomed(url, name="steady", token=token)
            await ws.close()
        assert store.started == 1  # one registration thread, held; three wait behind it
        assert sum(t.done() for t in flood) == 36  # none of the four is answered yet
        assert {a.name for a in db.accounts()} == {"steady"}
        store.release.set()
        async with asyncio.timeout(30 * SCALE):
            made = [(await t)[0] for t in flood if not t.done()]
        assert [m["type"] for m in made] == ["welcome"] * 4 and all(m["token"] for m in made)
        assert len(db.accounts()) == 5
        # Once they are made, registrations are taken again.
        _, ws = await welcomed(url, name="late", register=True)
        await ws.close()
    finally:
        store.release.set()
        for task in flood:
            if task.done() and not task.cancelled():
                await task.result()[1].close()
            else:
                task.cancel()
        await server.stop()


async def test_registrations_from_one_address_are_counted_by_the_real_server(
        db: Database) -> None:
    config = ServerConfig(accounts=True, open_registration=True, registrations_per_address=2)
    server = MatchServer(config, GameWriter(db), port=0)
    server.accounts = AccountChecker(db)
    await server.start()
    try:
        for name in ("one", "two"):
            _, ws = await welcomed(server.url, name=name, register=True)
            await ws.close()
        error = await refused(server.url, name="three", register=True)
        assert error["code"] == "registration_limit" and "from 127.0.0.1" in error["message"]
        _, ws = await welcomed(server.url, name="one", token=db.rotate_account("one"))
        await ws.close()  # logins are never counted
    finally:
        await server.stop()
