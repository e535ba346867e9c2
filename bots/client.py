"""Run any :class:`~bots.base.Bot` over the network: the websocket client adapter.

One :class:`BotClient` holds one session and plays every game the server gives it
concurrently (a tournament runner starts one client process per bot and game slot, each
announcing its slot as ``instance``, so concurrent games never share a process). Each game
side (Mister X, or the detective seats it holds) gets its own bot instance from
``factory``, seeded from ``game_start.seed``; ``choose`` runs in a worker thread so slow
bots never stall the connection (bots marked :attr:`~bots.base.Bot.fast` are called on
the event loop instead, saving the thread hop); the effort the bot reports goes with its
move. A bot that fails says so at once instead of letting its clock run out: an exception
in ``choose`` (or in starting a game) is sent as ``bot_error`` (the game ends ``bot_error``,
its reason the exception's type and first line, directories cut from any path), and a
``choose`` that returns no legal move (``None``, a move not in ``legal``, anything but a
:class:`~game.Move` or a legal move's text) as ``bot_error`` with reason ``illegal_move``
(the game ends ``illegal_move``; nothing is retried: the same view gives the same
answer). Frames the client ignores (``update``, ``move_ok``...) are not validated, and
``your_turn`` is read without the generic validator. Whole text frames come straight from
the socket's callback and moves go straight to the transport (:mod:`bots.fastws`;
websockets handles pings, closes and anything unusual); no task per message. A dropped
connection is resumed with the session's resume token, so running games carry on. A client
that stops (``max_games`` given, Ctrl-C: :meth:`BotClient.leave`) first asks the server for
no new games (``leave``) and plays out the ones it has, so stopping costs no forfeit.

>>> client = BotClient(lambda: make_bot("random"), "ws://127.0.0.1:1", name="random")
>>> client.name
'random'
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import signal
import sys
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from bots.base import Bot
from bots.fastws import DirectClientConnection
from bots.registry import make_bot
from game import Move, Outcome, Ruleset, View, parse_seat
from game.errors import YardError
from game.views import lazy_view_from_dict, rules_from_definition
from protocol import (
    BOT_ERROR_TEXT,
    MESSAGE_TYPES,
    PROTOCOL_VERSION,
    BotErrorMsg,
    BotErrorReason,
    Clock,
    Effort,
    Error,
    ErrorCode,
    GameOver,
    GameStart,
    Hello,
    Leave,
    Leaving,
    Message,
    MoveMsg,
    Ping,
    Pong,
    ProtocolError,
    Side,
    Standing,
    Welcome,
    YourTurn,
    decode,
    encode,
)
from protocol.codec import loads
from protocol.tokens import TokenFileError, read_token_file, write_token_file

log = logging.getLogger(__name__)

__all__ = ["BotClient", "ClientError", "account_token", "describe_error", "make_bot",
           "one_line", "run_client", "run_on_loop"]

GOING_AWAY = 1001
"""Close code the server uses when it shuts down: the client stops instead of resuming."""

RESUME_DELAYS = (0.2, 0.5, 1.0, 2.0, 4.0, 8.0)
"""Seconds to wait before each reconnect attempt."""


class ClientError(YardError):
    """The server refused this client (bad token, protocol version) or is unreachable."""


@dataclass
class _Game:
    rules: Ruleset
    bots: dict[str, Bot] = field(default_factory=dict)  # side ("mrx"/"detectives") -> bot


MAX_FRAME = 2**22
"""Largest frame the client accepts (a classic-board ``game_start`` or view is far below)."""

_HANDLED = frozenset({"welcome", "game_start", "your_turn", "game_over", "ping", "error",
                      "leaving", "standing"})
"""Message types the client acts on; the other known types are skipped unread."""

_MOVES: dict[str, Move] = {}
"""Parsed legal moves by text (a board has few distinct move texts; moves are immutable)."""
_TEXTS: dict[Move, str] = {}
"""The same, the other way: a chosen move's text without formatting it."""


def _move(text: str) -> Move:
    move = _MOVES.get(text)
    if move is None:
        if len(_MOVES) >= 100_000:
            _MOVES.clear()
            _TEXTS.clear()
        move = _MOVES[text] = Move.parse(text)
        _TEXTS[move] = text
    return move


_SKIPPED_PREFIXES = tuple(f'{{"type":"{kind}",' for kind in ("update", "move_ok"))
"""How the server's frames of the commonest types the client ignores begin (the codec
writes ``type`` first): such frames are dropped unparsed (two of every three a bot gets)."""


def _your_turn(data: dict[str, Any]) -> YourTurn | None:
    """A plain ``your_turn`` read without the generic validator, or ``None`` for anything
    unusual (the generic decoder then decides, with its error texts)."""
    game, turn, seat = data.get("game"), data.get("turn"), data.get("seat")
    view, legal, clock = data.get("view"), data.get("legal"), data.get("clock")
    if type(game) is not str or type(turn) is not int or type(seat) is not str or \
            type(view) is not dict or type(legal) is not list or type(clock) is not dict or \
            not all(type(t) is str for t in legal):
        return None
    move_s, bank_s = clock.get("move_s"), clock.get("bank_s")
    if not isinstance(move_s, int | float) or not isinstance(bank_s, int | float) or \
            isinstance(move_s, bool) or isinstance(bank_s, bool):
        return None
    return YourTurn(game, turn, seat, view, legal, Clock(float(move_s), float(bank_s)))


def read_frame(frame: str | bytes) -> Message | None:
    """The message in ``frame`` as the client needs it: ``None`` for a known type the
    client ignores (not validated), a fast read of ``your_turn``, else :func:`decode`
    (lenient about unknown fields). Raises :class:`ProtocolError` as :func:`decode`."""
    head = frame[:20] if isinstance(frame, str) else frame[:20].decode("utf-8", "replace")
    if head.startswith(_SKIPPED_PREFIXES):
        return None
    if len(frame) <= MAX_FRAME:
        try:
            data = loads(frame)
        except ValueError:  # orjson.JSONDecodeError is one
            data = None  # decode() reports it
        if type(data) is dict:
            kind = data.get("type")
            if kind == "your_turn":
                turn = _your_turn(data)
                if turn is not None:
                    return turn
            elif kind in MESSAGE_TYPES and kind not in _HANDLED:
                return None
    return decode(frame, max_size=MAX_FRAME, strict=False)


class _ResumeRejected(Exception):
    """The server no longer knows our session; reconnect as a new one."""


def _side(seat: str) -> str:
    return "mrx" if seat == "mrx" else "detectives"


class BotClient:
    """Plays games for ``name`` on the server at ``url`` until stopped, or until it has
    left (:meth:`leave`: after ``max_games`` games, or when asked) and its games are over."""

    def __init__(self, factory: Callable[[], Bot], url: str, name: str, version: str = "",
                 token: str | None = None, max_games: int | None = None,
                 retries: int = len(RESUME_DELAYS), instance: str | None = None,
                 direct: bool = True, register: bool = False,
                 on_token: Callable[[str], None] | None = None,
                 ladder: Sequence[str] | None = None, concurrent: int | None = None,
                 roles: Iterable[str] | None = None) -> None:
        """A client not yet connected: :meth:`run` connects it and plays."""
        self.factory = factory
        self.url = url
        self.name = name
        self.instance = instance
        self.version = version
        self.token = token
        #: Ask the server for an account under ``name`` (``hello.register``); once its
        #: token arrives it is kept in :attr:`token` (later connections send it) and
        #: handed to ``on_token``.
        self.register = register
        self.on_token = on_token
        self.max_games = max_games
        #: The server's ladder rulesets to be matched on (``hello.ladder``), and the most
        #: games the server may give it at once there (``hello.max_games``).
        self.ladder = list(ladder) if ladder else None
        self.concurrent = concurrent
        #: The sides the bot plays there (``hello.roles``; sent only on the ladder, and
        #: only when it plays one side: both is the server's default).
        self.roles = None if roles is None else [Side(r) for r in sorted(roles)]
        self.retries = retries
        self.games_played = 0
        self.stopped = False
        #: Games the server gave this client (``max_games`` counts them).
        self._given: set[str] = set()
        #: It asked for no new games (:meth:`leave`); the server said so (``leaving``); the
        #: server does not know ``leave`` (an older one).
        self.leaving = False
        self._left = False
        self._no_leave = False
        #: Where the bot stands on each ladder ruleset, after its last game there.
        self.standings: dict[str, Standing] = {}
        self.session: str | None = None
        self._resume: str | None = None
        self._games: dict[str, _Game] = {}
        self._rules: dict[str, Ruleset] = {}
        self._ws: DirectClientConnection | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.connected = asyncio.Event()
        #: Whole text frames are read and moves written without websockets' queues
        #: (:mod:`bots.fastws`); False: websockets' own path for everything.
        self.direct = direct
        self._failure: Exception | None = None
        self._closing: asyncio.Task[None] | None = None
        self._slow_sends = 0  # messages of this connection waiting in ``await send``

    async def run(self) -> int:
        """Play until the server goes away for good, or until the client has left
        (``max_games`` given, or :meth:`leave`) and its last game is over."""
        failures = 0
        while not self._done():
            try:
                await self._session()
                failures = 0
            except (OSError, ConnectionClosed, InvalidHandshake, TimeoutError,
                    _ResumeRejected) as exc:
                if failures >= self.retries:
                    raise ClientError(f"cannot reach {self.url}: {exc}") from None
                delay = RESUME_DELAYS[min(failures, len(RESUME_DELAYS) - 1)]
                failures += 1
                log.warning("%s: connection lost (%s); retrying in %.1fs", self.name, exc, delay)
                await asyncio.sleep(delay)
        return self.games_played

    def _roles(self) -> list[Side] | None:
        """``hello.roles``: the bot's sides on a ladder when it does not play both."""
        if self.ladder is None or self.roles is None or set(self.roles) == set(Side):
            return None
        return self.roles

    def leave(self) -> None:
        """Ask the server for no new games (``leave``) and stop once the games in progress
        are over: no game is lost to a dropped connection. A client that is not connected
        now asks as soon as it is (and again after a reconnect)."""
        if self.leaving:
            return
        self.leaving = True
        if self.connected.is_set():
            self._send(Leave())

    def _done(self) -> bool:
        if self.stopped:
            return True
        if self._no_leave:  # an older server: stop between games, as before
            return not self._games or (self.max_games is not None
                                       and self.games_played >= self.max_games)
        return self._left and not self._games

    async def _session(self) -> None:
        try:
            ws = await connect(self.url, proxy=None, compression=None, max_size=MAX_FRAME,
                               create_connection=DirectClientConnection)
        except InvalidURI as exc:
            raise ClientError(f"bad server URL {self.url!r}: {exc}") from None
        assert isinstance(ws, DirectClientConnection)
        self._failure = None
        async with ws:
            self._ws = ws
            # Whole text frames come straight to _frame from the socket's callback; the
            # loop below reads what websockets handles (after an unusual frame, or all of
            # them if the direct path is off) and ends when the connection closes.
            if self.direct:
                ws.attach(self._frame, MAX_FRAME)
            await ws.send(encode(Hello(PROTOCOL_VERSION, self.name, self.version, self.token,
                                       self._resume, instance=self.instance,
                                       register=self.register, ladder=self.ladder,
                                       max_games=self.concurrent, roles=self._roles())))
            async for frame in ws:
                self._frame(frame)
                if self._failure is not None or self._done():
                    break
        self._ws = None
        self._slow_sends = 0
        self.connected.clear()
        if self._failure is not None:
            raise self._failure
        if ws.close_code == GOING_AWAY:
            log.info("%s: server shut down", self.name)
            self.stopped = True

    def _frame(self, frame: str | bytes) -> None:
        """Act on one frame. Never raises: a failure (refused resume, refused hello) is
        kept for :meth:`_session` to raise, and the connection closes, as does reaching
        ``max_games``."""
        if self._failure is not None:
            return  # the session is ending: later frames are not acted on
        done = self._done()
        try:
            msg = read_frame(frame)
        except ProtocolError as exc:  # e.g. a message type newer than this client
            if not done:
                log.warning("%s: ignoring a message: %s", self.name, exc)
            return
        if msg is None or (done and not isinstance(msg, Standing)):
            return  # only the standing after its last game is still of interest
        try:
            self._on_message(msg)
        except (ClientError, _ResumeRejected) as exc:
            self._failure = exc
        except Exception as exc:  # a bug here must end the session, not kill the loop
            log.exception("%s: failed on a %s message", self.name, type(msg).__name__)
            self._failure = exc
        if self._failure is not None or self._done():
            self._close_soon()

    def _close_soon(self) -> None:
        ws = self._ws
        if ws is not None and self._closing is None:
            self._closing = asyncio.create_task(ws.close())
            self._closing.add_done_callback(self._closed)

    def _closed(self, task: asyncio.Task[None]) -> None:
        self._closing = None
        if not task.cancelled():
            task.exception()  # retrieved: closing a dead socket is not news

    # ------------------------------------------------------------------ messages

    def _on_message(self, msg: Message) -> None:
        if isinstance(msg, Welcome):
            self._welcome(msg)
        elif isinstance(msg, Standing):
            self._standing(msg)
        elif isinstance(msg, Leaving):
            self._left = True
            log.info("%s: leaving; %d games to finish", self.name, len(msg.games))
        elif isinstance(msg, GameStart):
            self._start(msg)
        elif isinstance(msg, YourTurn):
            self._turn(msg)
        elif isinstance(msg, GameOver):
            self._over(msg)
        elif isinstance(msg, Ping):
            self._send(Pong(msg.nonce))
        elif isinstance(msg, Error):
            self._error(msg)

    def _welcome(self, msg: Welcome) -> None:
        self.session, self._resume = msg.session, msg.resume_token
        if msg.token is not None and self.register:
            self.token, self.register = msg.token, False
            if self.on_token is not None:
                self.on_token(msg.token)
        self.connected.set()
        self._left = False
        if self.leaving:  # a new session, or a resumed one: ask (again)
            self._send(Leave())

    def _standing(self, msg: Standing) -> None:
        self.standings[msg.rules] = msg
        rating = msg.rating
        log.info("%s: %s ladder rank %d of %d (rating %.1f ± %.1f after %d games)",
                 self.name, msg.rules, msg.rank, msg.of, rating.mu, 2 * rating.sigma,
                 rating.games)

    def _error(self, msg: Error) -> None:
        if msg.code is ErrorCode.UNKNOWN_TYPE and self.leaving and "'leave'" in msg.message:
            log.warning("%s: the server does not know leave: stopping between games",
                        self.name)
            self._no_leave = True
            return
        if msg.code is ErrorCode.BAD_RESUME_TOKEN:
            self._resume = None  # start a fresh session next time
            raise _ResumeRejected(msg.message)
        if msg.ref == "hello":
            raise ClientError(f"server refused {self.name!r}: {msg.message}")
        log.warning("%s: server error %s: %s", self.name, msg.code.value, msg.message)

    def _start(self, msg: GameStart) -> None:
        self._given.add(msg.game)
        if self.max_games is not None and len(self._given) >= self.max_games:
            self.leave()  # this game and any already on their way are played out
        key = json.dumps(msg.rules, sort_keys=True)
        rules = self._rules.get(key)
        if rules is None:
            rules = self._rules[key] = rules_from_definition(msg.rules)
        game = self._games.setdefault(msg.game, _Game(rules))
        side = _side(msg.seats[0])
        if side not in game.bots:
            try:
                bot = self.factory()
                bot.begin(rules, [parse_seat(s) for s in msg.seats], msg.seed)
            except Exception as exc:
                # One game this bot cannot play (wrong role, no weights for the ruleset, a
                # failing new_game) must not take down the process and its other games;
                # it gives that game up at once (bot_error) instead of timing out.
                if isinstance(exc, YardError):
                    log.error("%s: cannot play game %s: %s", self.name, msg.game, exc)
                else:
                    log.exception("%s: cannot play game %s", self.name, msg.game)
                self._give_up(msg.game, None, msg.seats[0], BotErrorReason.ERROR,
                              f"starting the game raised {describe_error(exc)}")
                return
            game.bots[side] = bot

    def _turn(self, msg: YourTurn) -> None:
        game = self._games.get(msg.game)
        bot = None if game is None else game.bots.get(_side(msg.seat))
        if game is None or bot is None:
            log.warning("%s: your_turn for unknown game %s", self.name, msg.game)
            return
        if not _runs_on_loop(bot):
            task = asyncio.create_task(self._play(msg, game, bot))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return
        # A fast bot answers on the loop: no task, no thread.
        inputs = self._inputs(msg, game, bot)
        if inputs is None:
            return
        try:
            move = bot.choose(*inputs)
        except Exception as exc:
            self._choose_failed(msg, exc)
            return
        self._reply(msg, bot, move)

    async def _play(self, msg: YourTurn, game: _Game, bot: Bot) -> None:
        inputs = self._inputs(msg, game, bot)
        if inputs is None:
            return
        try:
            move = await asyncio.to_thread(bot.choose, *inputs)
        except Exception as exc:
            self._choose_failed(msg, exc)
            return
        self._reply(msg, bot, move)

    def _inputs(self, msg: YourTurn, game: _Game, bot: Bot
                ) -> tuple[View, Sequence[Move]] | None:
        """What ``choose`` gets for ``msg``, or ``None`` (the game given up) if the turn
        cannot be read."""
        try:
            return _inputs(msg, game, bot)
        except Exception as exc:
            self._choose_failed(msg, exc, "reading the turn raised")
            return None

    def _choose_failed(self, msg: YourTurn, exc: Exception, what: str = "choose raised"
                       ) -> None:
        """``choose`` raised: logged in full here, its first line to the server at once."""
        log.error("%s: %s in game %s turn %d", self.name, what, msg.game, msg.turn,
                  exc_info=exc)
        self._give_up(msg.game, msg.turn, msg.seat, BotErrorReason.ERROR,
                      f"{what} {describe_error(exc)}")

    def _reply(self, msg: YourTurn, bot: Bot, move: object) -> None:
        # A Move or the text of one (plain strings that are legal moves are accepted);
        # anything else is reported as what it is, never sent for the server to refuse.
        text = _TEXTS.get(move) if type(move) is Move else None
        if text is None:
            text = _text_of(move)
        if text is None or text not in msg.legal:
            bot.take_effort()
            self._give_up(msg.game, msg.turn, msg.seat, BotErrorReason.ILLEGAL_MOVE,
                          f"choose returned {_returned(move, text)}")
            return
        self._send(MoveMsg(msg.game, msg.turn, text, msg.seat,
                           self._effort(bot.take_effort())))

    def _give_up(self, game: str, turn: int | None, seat: str, reason: BotErrorReason,
                 text: str) -> None:
        """Tell the server this bot gives ``game`` up (``bot_error``): it forfeits at once."""
        log.warning("%s: gave up game %s: %s", self.name, game, text)
        self._send(BotErrorMsg(game, one_line(text), turn, seat, reason))

    def _effort(self, reported: dict[str, int] | None) -> Effort | None:
        if not reported:
            return None
        try:
            return Effort(**reported)
        except (TypeError, ProtocolError) as exc:  # a bad report must not cost the move
            log.warning("%s: effort %s not sent: %s", self.name, reported, exc)
            return None

    def _over(self, msg: GameOver) -> None:
        game = self._games.pop(msg.game, None)
        if game is None:
            return
        seat = None if msg.seat is None else parse_seat(msg.seat)
        outcome = Outcome(msg.winner, msg.termination, seat)
        for bot in game.bots.values():
            bot.game_over(outcome)
        self.games_played += 1

    def _send(self, msg: Message) -> None:
        ws = self._ws
        if ws is None:
            return
        text = encode(msg)
        # Straight to the socket unless an earlier message still waits for the buffer to
        # drain (order is kept) or the connection cannot take it now.
        if not self._slow_sends and self.direct and ws.send_text_now(text):
            return
        self._slow_sends += 1
        task = asyncio.create_task(self._send_now(ws, text))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send_now(self, ws: ClientConnection, text: str) -> None:
        # A move lost to a dropped connection is harmless: the server re-sends the turn
        # after we resume.
        try:
            with contextlib.suppress(ConnectionClosed):
                await ws.send(text)
        finally:
            if ws is self._ws:
                self._slow_sends -= 1


LOOPS = ("auto", "asyncio", "uvloop")
"""Event loops a bot process may run on (``yard bot --loop``)."""


def account_token(name: str, token: str | None, token_file: str | None, register: bool
                  ) -> tuple[str | None, bool, Callable[[str], None] | None]:
    """``(token, register, on_token)`` for a :class:`BotClient` from a bot's ``--token``,
    ``--token-file`` and ``--register`` options. A token file that exists gives the token
    (and makes ``--register`` a no-op: the bot registered before); with ``--register`` the
    new token is written to the token file (mode 0600) or, without one, printed once to
    stderr."""
    if token is not None and (token_file is not None or register):
        raise ClientError("--token is the token itself: leave out --token-file and "
                          "--register")
    path = None if token_file is None else Path(token_file)
    if path is not None and (path.exists() or not register):
        try:
            return read_token_file(path), False, None
        except TokenFileError as exc:
            raise ClientError(str(exc)) from None
    if not register:
        return token, False, None

    def keep(new: str) -> None:
        if path is not None:
            try:
                write_token_file(path, new)
                print(f"registered {name!r}: its token is in {path} (next time: "
                      f"--token-file {path})", file=sys.stderr, flush=True)
                return
            except TokenFileError as exc:
                print(f"error: {exc}", file=sys.stderr)
        print(f"registered {name!r}; its token, shown only now (next time: --token TOKEN, "
              f"or keep it in a file for --token-file):\n{new}", file=sys.stderr, flush=True)

    return None, True, keep


def run_on_loop(main: Coroutine[Any, Any, int], loop: str = "auto") -> int:
    """Run ``main`` on uvloop (``uvloop``, or ``auto`` when it is installed: yard installs it
    except on Windows) or the standard asyncio loop; :class:`ClientError` for ``uvloop`` when
    it is not installed, or an unknown loop name."""
    if loop not in LOOPS:
        main.close()
        raise ClientError(f"unknown event loop {loop!r} (one of {', '.join(LOOPS)})")
    if loop != "asyncio":
        try:
            import uvloop
        except ImportError:
            if loop == "uvloop":
                main.close()
                raise ClientError("--loop uvloop: uvloop is not installed (yard "
                                  "installs it except on Windows: pip install uvloop)") from None
        else:
            played: int = uvloop.run(main)
            return played
    return asyncio.run(main)


async def run_client(client: BotClient) -> int:
    """Run ``client`` until done or interrupted; prints one ``connected as NAME`` line to
    stdout once the server has welcomed it (launchers wait for that line).

    The first SIGINT (Ctrl-C) of a connected client leaves (:meth:`BotClient.leave`): no
    new games, the ones in progress played out, then it exits. A second SIGINT, or
    SIGTERM, stops it at once (its games in progress are then lost when the server's grace
    period ends)."""
    task = asyncio.create_task(client.run())
    loop = asyncio.get_running_loop()
    interrupts = 0

    def interrupted() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts > 1 or not client.connected.is_set():
            task.cancel()
            return
        print(f"{client.name}: leaving: no new games, finishing the games in progress "
              "(Ctrl-C again to quit now)", file=sys.stderr, flush=True)
        client.leave()

    loop.add_signal_handler(signal.SIGINT, interrupted)
    loop.add_signal_handler(signal.SIGTERM, task.cancel)
    announce = asyncio.create_task(_announce(client))
    try:
        return await task
    except asyncio.CancelledError:
        return client.games_played
    finally:
        announce.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await announce


async def _announce(client: BotClient) -> None:
    await client.connected.wait()
    which = "" if client.instance is None else f", instance {client.instance}"
    print(f"connected as {client.name} (session {client.session}{which})", flush=True)
    sys.stdout.flush()


def _runs_on_loop(bot: Bot) -> bool:
    """Whether ``bot``'s own class (not a base class) declares it :attr:`~bots.base.Bot.fast`."""
    return vars(type(bot)).get("fast") is True


def _inputs(msg: YourTurn, game: _Game, bot: Bot) -> tuple[View, Sequence[Move]]:
    """What ``choose`` gets for ``msg``; clears effort left over from an earlier turn."""
    # Built when choose first reads it (a random bot never does).
    view = lazy_view_from_dict(msg.view, game.rules)
    legal = [_move(t) for t in msg.legal]
    bot.take_effort()
    return view, legal


def _text_of(move: object) -> str | None:
    """The move text of what ``choose`` returned: a :class:`~game.Move`'s text, a string
    as it is, else ``None``."""
    if isinstance(move, str):
        return move
    if isinstance(move, Move):
        try:
            return str(move)
        except Exception:  # a Move built with values that are no ticket
            return None
    return None


def _returned(move: object, text: str | None) -> str:
    """What ``choose`` returned, for the ``illegal_move`` reason."""
    if move is None:
        return "None instead of a move"
    if isinstance(move, str):
        return f"an illegal move {move!r:.60} (not one of the legal moves' texts)"
    if text is not None:
        return f"an illegal move {text} (not one of the legal moves)"
    return f"a {type(move).__name__} instead of a move: {_safe_repr(move)}"


def _safe_repr(value: object) -> str:
    try:
        return repr(value)[:60]
    except Exception:
        return "(no repr)"


_PATH = re.compile(r"(?<![\w.])(?:[A-Za-z]:)?(?:[\\/][^\s\\/'\"]+)+[\\/]")
"""The directories of an absolute path (``/home/me/bot/`` of ``/home/me/bot/w.pt``)."""


def describe_error(exc: BaseException) -> str:
    r"""``Type: first line of the message`` of ``exc``, for a ``bot_error`` the opponent may
    read in the replay: never the traceback, and directories cut from absolute paths
    (``FileNotFoundError: [Errno 2] No such file or directory: '…/w.pt'``).

    >>> describe_error(ValueError("no route\nfrom 4"))
    'ValueError: no route'
    """
    try:
        text = str(exc)
    except Exception:
        text = ""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    described = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return _PATH.sub("…/", described)


def one_line(text: str, limit: int = BOT_ERROR_TEXT) -> str:
    """``text`` as a ``bot_error`` message: its first line, unprintable characters as
    ``?``, at most ``limit`` characters (cut ones end in ``…``)."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    line = "".join(c if c.isprintable() else "?" for c in line)
    return line if len(line) <= limit else line[:limit - 1] + "…"
