"""The server's policy knobs (:class:`ServerConfig`): tokens and accounts, clocks, limits,
the ladder. Made once by whoever starts the server (:mod:`server.run`, :mod:`server.hosted`)
and read by the core and its shell."""

from __future__ import annotations

from dataclasses import dataclass, field

from game import Ruleset
from game.errors import RulesetError
from game.rules import BUILTIN, load_ruleset
from protocol import DEFAULT_MAX_SIZE, TimeControl
from protocol.tokens import new_token


@dataclass
class ServerConfig:
    """Server policy knobs.

    ``admin_token``: the secret an admin ``hello`` must carry (a fresh random one unless
    given; ``None``: no admin connections at all). ``bot_tokens``: bot names that need a
    fixed token. ``accounts``: every other bot name needs its account's token (checked by
    the shell, :class:`Authenticate`); ``open_registration``: a ``hello`` with
    ``register`` makes an account for an unused name. Registrations (bots' and people
    claiming a name) are bounded per remote address and in all within
    ``registration_window_s`` (:mod:`server.registration`), and at most
    ``registration_queue`` are made at once. ``reserved_names`` (the house bots): no other
    bot may take a name that looks like one (:mod:`protocol.names`). Per account, at most
    ``max_account_connections`` live connections and ``max_account_games`` games at once.
    The shell enforces ``allowed_origins`` (web pages other than the server's own that may
    connect, :func:`server.auth.origin_allowed`) and the last four: seconds a connection
    has to send ``hello``, bytes queued for a client that does not read before it is
    disconnected, open sockets in all and per remote address."""

    bot_tokens: dict[str, str] = field(default_factory=dict)
    admin_token: str | None = field(default_factory=new_token, repr=False)
    accounts: bool = False
    open_registration: bool = False
    max_account_connections: int = 16
    max_account_games: int = 64
    registrations_per_address: int = 10
    registrations_total: int = 100
    registration_window_s: float = 3600.0
    registration_queue: int = 8
    reserved_names: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    #: Where ``admin_token`` was read from or created (shown at start-up; ``None``: the
    #: token was given as such).
    admin_token_file: str | None = None
    time_control: TimeControl = field(default_factory=TimeControl)
    grace_s: float = 10.0
    max_size: int = DEFAULT_MAX_SIZE
    rate_per_s: float = 200.0
    burst: float = 400.0
    max_violations: int = 25
    hello_timeout_s: float = 5.0
    max_send_bytes: int = 1 << 20
    max_connections: int = 1024
    max_per_address: int = 256
    #: Names of the standing ladder's rulesets (empty: no ladder, no Play page games):
    #: bots ask for them, games are stored under them (:meth:`ladder_ruleset`).
    ladder: tuple[str, ...] = ()
    #: The ladder's rulesets that are not built in (read from TOML files by whoever starts
    #: the server, :func:`host.run.server_config`), by name.
    ladder_rulesets: dict[str, Ruleset] = field(default_factory=dict, repr=False)
    #: A ladder bot's rated games before matchmaking goes by rating
    #: (:class:`server.ladder.Ladder`), its forfeits in a row that pause it, and for how
    #: long (doubled for each pause in a row).
    ladder_placement: int = 6
    ladder_pause_after: int = 3
    ladder_pause_s: float = 600.0
    #: A bot new to the ladder first plays two check games (as Mister X, then as the
    #: detectives) against the server's own random player, and is matched only if it
    #: plays both to the end without a fault.
    ladder_check: bool = False
    #: Most games at once a ladder bot may ask for (``hello.max_games``).
    ladder_max_games: int = 16
    #: The server's own house bots (``yard serve --house``), and the most games a minute
    #: they play against each other on average (:mod:`server.house_pace`; 0: none).
    house_names: frozenset[str] = frozenset()
    house_rate: float = 1.0
    #: The clock of a person's game (``play``): per move, and a bank.
    play_time_control: TimeControl = field(
        default_factory=lambda: TimeControl(move_s=60.0, bank_s=600.0))

    def ladder_ruleset(self, name: str) -> Ruleset:
        """The ruleset of the ladder's ruleset ``name``: one of :attr:`ladder_rulesets`,
        else the built-in one; :class:`~game.errors.RulesetError` for any other name."""
        rules = self.ladder_rulesets.get(name)
        if rules is not None:
            return rules
        if name not in BUILTIN:
            raise RulesetError(f"no ladder ruleset {name!r:.80} on this server")
        return load_ruleset(name)
