"""The ladder, the ladder check and people's games in the sans-I/O core (server/core.py):
frames in, messages out, no sockets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from protocol import (
    Error,
    ErrorCode,
    GameOver,
    GameStart,
    Hello,
    MatchStarted,
    MoveMsg,
    Play,
    Queued,
    Resign,
    Role,
    Side,
    TimeControl,
    Welcome,
    YourTurn,
    encode,
)
from server.config import ServerConfig
from server.core import Core
from server.outputs import AccountStatus, AccountVerdict, Authenticate, Close, Output, Send

Policy = Callable[[YourTurn], str | None]  # a bot: the move text it sends, or None


def first_legal(turn: YourTurn) -> str | None:
    return turn.legal[0]


def never(turn: YourTurn) -> str | None:
    return None


class Harness:
    """A core and bots that answer their turns at once, as ``policies`` say, until
    ``games`` games have ended (the ladder never stops matching: after that, bots no
    longer answer and only the clocks move games on). Account checks (people's claimed
    names) are answered from ``claims`` (name -> token), as the shell's checker would."""

    def __init__(self, games: int = 12, **config: object) -> None:
        self.games = games
        self.over = 0
        self.core = Core(ServerConfig(time_control=TimeControl(1.0), **config))  # type: ignore[arg-type]
        self.now = 0.0
        self.policies: dict[int, Policy] = {}
        self.inbox: dict[int, list[object]] = {}
        self.claims: dict[str, str] = {}

    def hello(self, name: str, policy: Policy = first_legal, **fields: object) -> int:
        conn = self.core.connect(self.now)
        self.policies[conn] = policy
        self.inbox[conn] = []
        self.feed(self.core.receive(conn, encode(Hello(1, name, **fields)), self.now))  # type: ignore[arg-type]
        return conn

    def send(self, conn: int, message: object) -> None:
        self.feed(self.core.receive(conn, encode(message), self.now))  # type: ignore[arg-type]

    def feed(self, outputs: list[Output]) -> None:
        queue = list(outputs)
        while queue:
            out = queue.pop(0)
            if isinstance(out, Authenticate):
                queue += self.core.authenticated(out.conn, self.verdict(out), self.now)
                continue
            if not isinstance(out, Send) or out.conn not in self.inbox:
                continue
            self.inbox[out.conn].append(out.message)
            self.over += isinstance(out.message, GameOver)
            if isinstance(out.message, YourTurn) and self.over < self.games:
                move = self.policies[out.conn](out.message)
                if move is not None:
                    queue += self.core.receive(out.conn, encode(MoveMsg(
                        out.message.game, out.message.turn, move)), self.now)

    def verdict(self, request: Authenticate) -> AccountVerdict:
        token = self.claims.get(request.name)
        if request.register:
            if token is not None:
                return AccountVerdict(AccountStatus.TAKEN, like=request.name)
            token = self.claims[request.name] = f"token-{len(self.claims)}"
            return AccountVerdict(AccountStatus.REGISTERED, token)
        if token is None:
            return AccountVerdict(AccountStatus.UNKNOWN)
        return AccountVerdict(AccountStatus.OK if token == request.token
                              else AccountStatus.WRONG_TOKEN)

    def run(self, seconds: float) -> None:
        """Let the clocks run for ``seconds`` (ticks at every deadline)."""
        end = self.now + seconds
        while (deadline := self.core.next_deadline()) is not None and deadline <= end:
            self.now = max(self.now, deadline)
            self.feed(self.core.tick(self.now))
        self.now = end

    def of(self, conn: int, kind: type) -> list[object]:
        return [m for m in self.inbox[conn] if isinstance(m, kind)]


def test_ladder_bots_are_matched_at_once_in_role_swapped_pairs() -> None:
    h = Harness(games=12, ladder=("grid5",))
    a = h.hello("a", ladder=["grid5"], max_games=2)
    b = h.hello("b", ladder=["grid5"], max_games=2)
    assert len(h.of(a, GameOver)) >= 2 and len(h.of(b, GameOver)) >= 2
    sides = [start.seats[0] == "mrx" for start in h.of(a, GameStart)]  # type: ignore[attr-defined]
    # Both legs of the first pair at once (two free slots each); a later pair that finds
    # one slot each starts its first leg and keeps the second waiting for the next slot.
    assert sorted(sides[:2]) == [False, True]
    assert abs(sides.count(True) - sides.count(False)) <= 1
    standings = h.core.ladder_standings(h.now)["grid5"]
    assert {r["name"] for r in standings} == {"a", "b"}
    assert all(int(str(r["games"])) >= 2 for r in standings)


def test_the_ladder_check_lets_a_sound_bot_in_and_keeps_a_faulty_one_out() -> None:
    h = Harness(ladder=("grid5",), ladder_check=True)
    good = h.hello("good", ladder=["grid5"])
    assert len(h.of(good, GameOver)) == 2  # both check games, played at once
    assert not h.core.ladder.needs_check("good")  # type: ignore[union-attr]
    bad = h.hello("bad", never, ladder=["grid5"])
    h.run(5.0)  # its first check game times out
    errors = [e for e in h.of(bad, Error) if e.code is ErrorCode.LADDER_CHECK_FAILED]  # type: ignore[attr-defined]
    assert len(errors) == 1 and "timeout" in errors[0].message  # type: ignore[attr-defined]
    other = h.hello("other", ladder=["grid5"])
    h.run(5.0)
    starts = [m for m in h.of(bad, GameStart)]
    assert len(starts) == 1  # its check game only: never matched
    assert len(h.of(other, GameOver)) >= 4  # checks, then ladder games with good
    row = next(r for r in h.core.ladder_standings(h.now)["grid5"] if r["name"] == "bad")
    assert "ladder check failed" in str(row["paused"])


def test_a_person_plays_a_ladder_bot_from_either_side() -> None:
    h = Harness(ladder=("grid5",))
    h.hello("bot", ladder=["grid5"])
    me = h.hello("alice", role=Role.HUMAN, register=True)  # claims the name
    h.send(me, Play("grid5", Side.DETECTIVES, "bot"))
    started = h.of(me, MatchStarted)
    assert len(started) == 1
    start = h.of(me, GameStart)[0]
    assert start.seats == ["d1", "d2"]  # type: ignore[attr-defined]
    assert len(h.of(me, GameOver)) == 1
    h.send(me, Play("grid5", Side.MRX, "bot"))
    assert h.of(me, GameStart)[-1].seats == ["mrx"]  # type: ignore[attr-defined]
    people = h.core.people_standings()["grid5"]
    assert {r["name"] for r in people} == {"human:alice", "bot"}
    assert all(r["games"] == 0 for r in h.core.ladder_standings(h.now)["grid5"])


def test_play_refusals_say_why() -> None:
    h = Harness(ladder=("grid5",))
    bot = h.hello("bot", never, ladder=["grid5"])
    me = h.hello("bob", role=Role.HUMAN)
    for play, code in [(Play("classic", Side.MRX, "bot"), ErrorCode.BAD_MATCH),
                       (Play("grid5", Side.MRX, "nobody"), ErrorCode.BOT_NOT_CONNECTED)]:
        h.send(me, play)
        assert h.of(me, Error)[-1].code is code  # type: ignore[attr-defined]
    h.send(bot, Play("grid5", Side.MRX, "bot"))
    assert h.of(bot, Error)[-1].code is ErrorCode.FORBIDDEN  # type: ignore[attr-defined]
    h.send(me, Play("grid5", Side.MRX, "bot"))
    h.send(me, Play("grid5", Side.MRX, "bot"))  # one game at a time
    assert h.of(me, Error)[-1].code is ErrorCode.BAD_MATCH  # type: ignore[attr-defined]
    other = h.hello("carol", role=Role.HUMAN)
    h.send(other, Play("grid5", Side.MRX, "bot"))  # max_games 1: busy with bob, so queued
    assert not h.of(other, Error) and h.of(other, Queued)


def test_hellos_the_ladder_cannot_serve_are_refused() -> None:
    plain = Harness()
    cases: list[dict[str, Any]] = [{"ladder": ["grid5"]}, {"role": Role.HUMAN}]
    for fields in cases:
        conn = plain.hello("x", **fields)
        assert isinstance(plain.inbox[conn][0], Error)
    h = Harness(ladder=("grid5",))
    refused: list[tuple[str, dict[str, Any]]] = [
        ("a", {"ladder": ["classic"]}), ("b", {"ladder": ["grid5"], "max_games": 99}),
        ("human:x", {}), ("c", {"role": Role.SPECTATOR, "ladder": ["grid5"]})]
    for name, fields in refused:
        conn = h.hello(name, **fields)
        (error,) = h.of(conn, Error)
        assert error.code is ErrorCode.BAD_VALUE, (name, error)  # type: ignore[attr-defined]
    assert not h.core.ladder.entrants  # type: ignore[union-attr]


def test_a_bot_that_keeps_timing_out_is_told_it_is_paused_and_left_alone() -> None:
    h = Harness(games=100, ladder=("grid5",), ladder_pause_after=3, ladder_pause_s=60.0)
    lazy = h.hello("lazy", never, ladder=["grid5"])
    h.hello("keen", ladder=["grid5"])
    h.run(20.0)
    paused = [e for e in h.of(lazy, Error) if e.code is ErrorCode.LADDER_PAUSED]  # type: ignore[attr-defined]
    assert len(paused) == 1 and "3 forfeits in a row (last: timeout)" in paused[0].message  # type: ignore[attr-defined]
    assert len(h.of(lazy, GameStart)) == 3  # and nothing after the pause
    assert not any(isinstance(m, Close) for m in h.inbox[lazy])  # paused, not thrown out


def test_a_person_resigns_and_resumes_after_a_reload() -> None:
    h = Harness(ladder=("grid5",))
    h.hello("bot", ladder=["grid5"])
    me = h.hello("dora", never, role=Role.HUMAN)
    h.send(me, Play("grid5", Side.MRX, "bot"))
    (started,) = h.of(me, MatchStarted)
    welcome = h.inbox[me][0]
    h.feed(h.core.disconnect(me, h.now))  # the page is reloaded
    again = h.hello("dora", never, role=Role.HUMAN, resume=welcome.resume_token)  # type: ignore[attr-defined]
    assert h.of(again, GameStart) and h.of(again, YourTurn)  # the game and its turn again
    h.send(again, Resign(started.game))  # type: ignore[attr-defined]
    (over,) = h.of(again, GameOver)
    assert over.termination.value == "resigned" and over.winner.value == "detectives"  # type: ignore[attr-defined]
    stranger = h.hello("eve", never, role=Role.HUMAN, resume=welcome.resume_token)  # type: ignore[attr-defined]
    assert h.of(stranger, Error)[0].code is ErrorCode.BAD_RESUME_TOKEN  # type: ignore[attr-defined]


def test_a_person_claims_a_name_and_proves_it_later_guests_are_shown_and_not_rated() -> None:
    h = Harness(ladder=("grid5",))
    h.hello("bot", ladder=["grid5"], max_games=4)
    first = h.hello("alice", never, role=Role.HUMAN, register=True)
    welcome = h.inbox[first][0]
    assert isinstance(welcome, Welcome) and welcome.token == h.claims["human:alice"]
    h.feed(h.core.disconnect(first, h.now))
    # Later: the token proves the claim; without it the name is not the person's.
    back = h.hello("alice", never, role=Role.HUMAN, token=welcome.token)
    assert isinstance(h.inbox[back][0], Welcome)
    for fields in ({"token": "guess"}, {"register": True}):
        thief = h.hello("alice", never, role=Role.HUMAN, **fields)
        (error,) = h.of(thief, Error)
        assert error.code in (ErrorCode.BAD_TOKEN, ErrorCode.NAME_TAKEN), error  # type: ignore[attr-defined]
        assert "'alice' is claimed" in error.message  # type: ignore[attr-defined]
    unclaimed = h.hello("nobody", never, role=Role.HUMAN, token="t")
    assert "nobody has claimed the name 'nobody'" in h.of(unclaimed, Error)[0].message  # type: ignore[attr-defined]
    # A guest (no claim, no token) plays as guest:NAME and is not rated.
    guest = h.hello("carol", role=Role.HUMAN)
    h.send(guest, Play("grid5", Side.DETECTIVES, "bot"))
    start = h.of(guest, GameStart)[0]
    assert set(start.players.values()) == {"guest:carol", "bot"}  # type: ignore[attr-defined]
    assert h.of(guest, GameOver)
    assert h.core.people_standings()["grid5"] == []
    h.send(back, Play("grid5", Side.MRX, "bot"))
    assert h.of(back, GameStart)[0].players["mrx"] == "human:alice"  # type: ignore[attr-defined]


def test_one_person_name_has_at_most_one_live_game() -> None:
    h = Harness(ladder=("grid5",))
    h.hello("bot", never, ladder=["grid5"], max_games=4)
    tab = h.hello("dora", never, role=Role.HUMAN, register=True)
    token = h.inbox[tab][0].token  # type: ignore[attr-defined]
    other_tab = h.hello("dora", never, role=Role.HUMAN, token=token)
    h.send(tab, Play("grid5", Side.MRX, "bot"))
    assert h.of(tab, MatchStarted)
    h.send(other_tab, Play("grid5", Side.MRX, "bot"))
    (error,) = h.of(other_tab, Error)
    assert error.code is ErrorCode.BAD_MATCH and "'human:dora' is playing" in error.message  # type: ignore[attr-defined]
    guest, guest_tab = (h.hello("eve", never, role=Role.HUMAN) for _ in range(2))
    h.send(guest, Play("grid5", Side.MRX, "bot"))
    h.send(guest_tab, Play("grid5", Side.MRX, "bot"))
    assert h.of(guest, MatchStarted) and not h.of(guest_tab, MatchStarted)
    assert h.of(guest_tab, Error)[0].code is ErrorCode.BAD_MATCH  # type: ignore[attr-defined]


def test_a_person_may_not_take_a_name_like_one_playing_now() -> None:
    h = Harness(ladder=("grid5",))
    h.hello("alice", never, role=Role.HUMAN)
    for name in ("аlice", "Alice", "ａｌｉｃｅ", "alice⠀"):
        conn = h.hello(name, never, role=Role.HUMAN)
        (error,) = h.of(conn, Error)
        assert error.code is ErrorCode.NAME_TAKEN, (name, error)  # type: ignore[attr-defined]
        assert "looks like 'guest:alice'" in error.message  # type: ignore[attr-defined]
    bad = h.hello("b ob", never, role=Role.HUMAN)
    assert h.of(bad, Error)[0].code is ErrorCode.BAD_VALUE  # type: ignore[attr-defined]
