"""A fake-clock driver for the sans-I/O server core, shared by the core and hidden-info
tests (no tests of its own)."""

from __future__ import annotations

import itertools
import json
import random
from collections import defaultdict
from typing import Any, TypeVar

from protocol import (
    GameStart,
    Hello,
    Message,
    MoveMsg,
    Policy,
    Role,
    StartMatch,
    TimeControl,
    Welcome,
    YourTurn,
    encode,
)
from server.config import ServerConfig
from server.core import Core
from server.outputs import Close, Finished, Output, Send

M = TypeVar("M", bound=Message)


class Harness:
    """Feeds frames to a :class:`Core` at a controlled time and files what comes out."""

    def __init__(self, config: ServerConfig | None = None) -> None:
        counter = itertools.count(1)
        self.core = Core(config or ServerConfig(), new_id=lambda p: f"{p}{next(counter)}")
        self.now = 1000.0
        self.inbox: dict[int, list[Message]] = defaultdict(list)
        self.frames: dict[int, list[str]] = defaultdict(list)
        self.closed: dict[int, str] = {}
        self.finished: list[Finished] = []

    def apply(self, outputs: list[Output]) -> None:
        for out in outputs:
            if isinstance(out, Send):
                self.inbox[out.conn].append(out.message)
                self.frames[out.conn].append(encode(out.message))
            elif isinstance(out, Close):
                self.closed[out.conn] = out.reason
            elif isinstance(out, Finished):
                self.finished.append(out)
            else:  # an account check: the harness's core has no accounts
                raise AssertionError(f"the harness does not answer {out!r}")

    def connect(self, name: str, role: Role = Role.BOT, token: str | None = None,
                resume: str | None = None) -> int:
        conn = self.core.connect(self.now)
        self.send(conn, Hello(1, name, "v1", token, resume, role))
        return conn

    def admin(self, name: str = "admin") -> int:
        """An admin connection that knows the server's admin token."""
        return self.connect(name, Role.ADMIN, token=self.core.config.admin_token)

    def send(self, conn: int, msg: Message | str) -> None:
        text = msg if isinstance(msg, str) else encode(msg)
        self.apply(self.core.receive(conn, text, self.now))

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.apply(self.core.tick(self.now))

    def drop(self, conn: int) -> None:
        self.apply(self.core.disconnect(conn, self.now))

    def of(self, conn: int, kind: type[M]) -> list[M]:
        return [m for m in self.inbox[conn] if isinstance(m, kind)]

    def last(self, conn: int, kind: type[M]) -> M:
        found = self.of(conn, kind)
        assert found, f"connection {conn} got no {kind.TYPE}: {self.inbox[conn]}"
        return found[-1]

    def game_messages(self, conn: int, game: str) -> list[dict[str, Any]]:
        """What ``conn`` received about ``game`` (errors naming it included), as JSON."""
        return [json.loads(frame) for msg, frame in zip(self.inbox[conn], self.frames[conn],
                                                        strict=True)
                if getattr(msg, "game", None) == game or getattr(msg, "ref", None) == game]

    def welcome(self, conn: int) -> Welcome:
        return self.last(conn, Welcome)

    def start(self, admin: int, mrx: str, detectives: list[str], rules: str = "grid5",
              seed: int = 1, move_s: float = 5.0, bank_s: float = 0.0,
              policy: Policy | None = None, **extra: Any) -> str:
        self.send(admin, StartMatch(rules, mrx, detectives, seed,
                                    time_control=TimeControl(move_s, bank_s), policy=policy,
                                    **extra))
        started = [m for m in self.inbox[admin] if m.TYPE == "match_started"]
        assert started, self.inbox[admin]
        game: str = started[-1].game  # type: ignore[attr-defined]
        return game

    def pending_turn(self, conns: list[int], game: str) -> tuple[int, YourTurn] | None:
        """The newest unanswered ``your_turn`` of ``game`` among ``conns``."""
        best: tuple[int, YourTurn] | None = None
        for conn in conns:
            for msg in self.of(conn, YourTurn):
                if msg.game == game and (best is None or msg.turn > best[1].turn):
                    best = (conn, msg)
        return best

    def play_out(self, conns: list[int], game: str, rng: random.Random,
                 think: float = 0.01, max_turns: int = 2000) -> Finished:
        """Answer every turn with a random legal move until the game is finished."""
        answered: set[int] = set()
        for _ in range(max_turns):
            done = [f for f in self.finished if f.record.game_id == game]
            if done:
                return done[0]
            pending = self.pending_turn(conns, game)
            assert pending is not None and pending[1].turn not in answered, "game stalled"
            conn, turn = pending
            answered.add(turn.turn)
            self.now += think
            self.send(conn, MoveMsg(game, turn.turn, rng.choice(turn.legal)))
        raise AssertionError("game did not finish")

    def game_starts(self, conn: int) -> list[GameStart]:
        return self.of(conn, GameStart)
