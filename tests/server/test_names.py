"""Names nobody can fake (issue 40.2): every look-alike of a taken name, and every name
that looks like a person's, is refused with an error that names what it looks like,
wherever a name enters: a bot's ``hello`` (house bots, connected bots, accounts), an
account made by registration or by ``yard accounts add``. A real server on loopback with
real SQLite, and the sans-I/O core."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy.orm import Session

from db.errors import AccountError
from db.models import AccountRow
from db.store import Database
from db.store.accounts import hash_token
from host.house import House, HouseBot
from protocol import Error, ErrorCode, Hello, Welcome, encode
from server.config import ServerConfig
from server.core import Core
from server.outputs import Send
from tests.protocol.test_names import LOOK_ALIKES
from tests.server.test_access import refused, running, welcomed


def first_reply(core: Core, **hello: Any) -> object:
    conn = core.connect(0.0)
    out = core.receive(conn, encode(Hello(1, **hello)), 0.0)
    return next(o.message for o in out if isinstance(o, Send))


def assert_refused_like(error: dict[str, Any] | Error, like: str) -> None:
    code, message = ((error["code"], error["message"]) if isinstance(error, dict)
                     else (error.code.value, error.message))
    assert code == ("bad_value" if like.endswith(":") else "name_taken"), error
    assert repr(like) in message, error


def test_look_alikes_of_the_house_bots_and_people_are_refused() -> None:
    config = ServerConfig(ladder=("grid5",))
    House([HouseBot("random", "random"), HouseBot("greedy", "greedy")], config).prepare()
    core = Core(config)
    assert isinstance(first_reply(core, name="random"), Welcome)  # the house bot itself
    for name, like in LOOK_ALIKES:
        reply = first_reply(core, name=name)
        assert isinstance(reply, Error), name
        assert_refused_like(reply, like)


async def test_look_alikes_of_connected_bots_are_refused() -> None:
    async with running(ServerConfig()) as server:
        _, random = await welcomed(server.url, name="random")
        _, greedy = await welcomed(server.url, name="greedy")
        for name, like in LOOK_ALIKES:
            assert_refused_like(await refused(server.url, name=name), like)
        _, again = await welcomed(server.url, name="random")  # the same bot, once more
        for ws in (random, greedy, again):
            await ws.close()


async def test_look_alikes_of_accounts_cannot_register(db: Database) -> None:
    db.add_account("random")
    db.add_account("greedy")
    config = ServerConfig(accounts=True, open_registration=True,
                          registrations_per_address=100)
    async with running(config, db) as server:
        for name, like in LOOK_ALIKES:
            error = await refused(server.url, name=name, register=True)
            assert_refused_like(error, like)
        _, ws = await welcomed(server.url, name="random2", register=True)
        await ws.close()
    assert {a.name for a in db.accounts()} == {"random", "greedy", "random2"}


@pytest.mark.parametrize(("name", "like"), LOOK_ALIKES)
def test_accounts_added_by_the_operator_are_checked_too(db: Database, name: str,
                                                         like: str) -> None:
    db.add_account("random")
    db.add_account("greedy")
    with pytest.raises(AccountError, match=f"{like!r}"):
        db.add_account(name)


async def test_an_account_made_before_the_name_rules_keeps_its_name(db: Database) -> None:
    token = "old-token"
    with Session(db._writer) as session, session.begin():
        session.add(AccountRow(name="old bot", token_hash=hash_token(token), source="cli",
                               created_at=datetime.now(UTC)))
    async with running(ServerConfig(accounts=True), db) as server:
        _, ws = await welcomed(server.url, name="old bot", token=token)
        await ws.close()
        assert (await refused(server.url, name="old bot", token="x"))["code"] == "bad_token"


def test_names_not_in_precis_form_are_refused_saying_why() -> None:
    core = Core(ServerConfig())
    for name, why in [("a b", "a space"), ("a⠀", "a symbol"), ("ｘ", "write it 'x'")]:
        reply = first_reply(core, name=name)
        assert isinstance(reply, Error) and reply.code is ErrorCode.BAD_VALUE, reply
        assert why in reply.message
