"""``yard bot-check``: a compliance battery for bot authors.

The bot under test is launched like in a tournament (a bot spec or an ``--engine``) and
connects to a local match server through a proxy; a reference bot plays the other side.
Checks, one line each (``PASS``/``FAIL``/``SKIP``):

- ``connects``: the bot starts and connects under its name;
- ``ping``: it answers a protocol ``ping`` with a ``pong`` carrying the same nonce;
- ``RULES as ROLE``: a legal game on each ruleset it claims, in each role it plays;
- ``double and secret moves``: as Mister X it is offered only double moves, then only
  secret moves, and must pick one of those offered; as detectives it must follow a Mister X
  who plays a double and a secret move (rulesets that have them);
- ``resume``: the proxy drops its connection mid-game; it must reconnect with the
  ``resume_token`` from its ``welcome`` within the grace period and finish the game
  (skipped when the bot forfeits that game by its own fault before the drop: a bot error,
  an illegal move or a timeout, which the game checks already name);
- ``deadline``: a game with a short move time (``--deadline``) and no bank, without timeout;
- ``unknown fields``: every message of one game carries extra fields it must ignore.

Modules: :mod:`~tournament.botcheck.run` (:func:`check_bot`: pick the engine, run, report),
:mod:`~tournament.botcheck.battery` (the checks), :mod:`~tournament.botcheck.proxy` (the
proxy and its sans-I/O :class:`Observer`), :mod:`~tournament.botcheck.reference` (the
reference bot), :mod:`~tournament.botcheck.claims` (the roles and rulesets to check).
"""

from tournament.botcheck.battery import Battery, Check
from tournament.botcheck.claims import Claims, claims_of
from tournament.botcheck.proxy import EXTRA_KEY, Mode, Observer, Proxy
from tournament.botcheck.reference import REFERENCE, ReferenceBot
from tournament.botcheck.run import BotCheckError, BotCheckRun, check_bot

__all__ = ["EXTRA_KEY", "REFERENCE", "Battery", "BotCheckError", "BotCheckRun", "Check",
           "Claims", "Mode", "Observer", "Proxy", "ReferenceBot", "check_bot", "claims_of"]
