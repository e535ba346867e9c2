"""A starter bot (``yard new-bot NAME``, ``yard-bot new-bot NAME``): one folder with a
one-file bot that plays both sides sensibly, its test, and a README with the commands that
check it and put it on a ladder.

>>> names("my-bot")
('my_bot', 'MyBot')
>>> names("2fast")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
bots.starter.StarterError: bot name '2fast': start with a letter, then letters, ...
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

from game.errors import YardError

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,39}")


class StarterError(YardError):
    """A bad bot name, or files that are there already."""


def names(name: str) -> tuple[str, str]:
    """``(module, class)`` names of bot ``name``: ``my-bot`` gives ``my_bot``, ``MyBot``."""
    if not _NAME.fullmatch(name):
        raise StarterError(f"bot name {name!r}: start with a letter, then letters, digits, "
                           "- or _ (at most 40)")
    module = name.replace("-", "_").lower()
    cls = "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_]", name) if part)
    return module, cls


def write_starter(name: str, folder: Path | None = None, force: bool = False) -> list[Path]:
    """Write bot ``name``'s starter files into ``folder`` (default ``./NAME``): ``MODULE.py``
    (the bot), ``test_MODULE.py`` (its test) and ``README.md``; returns their paths.
    Existing files are kept unless ``force``."""
    module, cls = names(name)
    folder = Path(name) if folder is None else folder
    files = {folder / f"{module}.py": BOT, folder / f"test_{module}.py": TEST,
             folder / "README.md": README}
    there = [str(p) for p in files if p.exists()]
    if there and not force:
        raise StarterError(f"{', '.join(there)}: there already (--force overwrites)")
    folder.mkdir(parents=True, exist_ok=True)
    for path, template in files.items():
        path.write_text(template.substitute(name=name, module=module, cls=cls))
    return list(files)


def new_bot(name: str, folder: Path | None, force: bool) -> list[str]:
    """Write bot ``name``'s starter (:func:`write_starter`); what to print: the files,
    then the commands that test, check and run it."""
    written = write_starter(name, folder, force)
    module, cls = names(name)
    return [*(f"wrote {path}" for path in written), "", "next:",
            f"  cd {written[0].parent}",
            f"  pytest test_{module}.py  # whole games in-process, both roles",
            f"  yard-bot check {module}.py:{cls}  # games against random on each ruleset",
            f"  python {module}.py --url ws://HOST:PORT --ladder grid5 --register "
            f"--token-file ~/.{module}.token",
            f"  yard-bot standing {name} --url ws://HOST:PORT"]


BOT = Template('''"""$name: a yard bot (made by `yard new-bot $name`; see README.md).

The detectives close in on the stations where Mister X may be; Mister X keeps as far as he
can from the nearest detective, saving his secret and double-move tickets. Change
`choose` to make it yours.
"""

from __future__ import annotations

from collections.abc import Sequence

from bots.sdk import MRX, Bot, Move, Ticket, View, run


class $cls(Bot):
    """Closes in as the detectives, keeps away as Mister X."""

    name = "$name"

    def choose(self, view: View, legal: Sequence[Move]) -> Move:
        board = view.rules.board
        if view.seat == MRX:
            def score(move: Move) -> tuple[int, int]:
                gap = min(board.distance(move.destination, d) for d in view.detectives)
                return gap, -scarce_tickets(move)
        else:
            where = view.possible or frozenset(board.stations)

            def score(move: Move) -> tuple[int, int]:
                return -min(board.distance(move.to, p) for p in where), 0
        best = max(score(m) for m in legal)
        return self.rng.choice([m for m in legal if score(m) == best])


def scarce_tickets(move: Move) -> int:
    """Secret tickets count 1, a double move 2: what Mister X should not waste."""
    double = 2 if move.to2 is not None else 0
    return double + (move.ticket == Ticket.SECRET) + (move.ticket2 == Ticket.SECRET)


if __name__ == "__main__":
    run($cls)  # python $module.py --url ws://HOST:PORT [--ladder grid5 ...]; --help
''')

TEST = Template('''"""$name plays whole games against the rules engine, in-process, both roles."""

from __future__ import annotations

import pytest
from bots.arena import play_game
from bots.simple import RandomBot
from game import Termination, Winner

from $module import $cls


@pytest.mark.parametrize("rules", ["grid5", "classic"])
def test_it_plays_legal_moves_to_the_end_in_both_roles(rules: str) -> None:
    for seed in range(3):
        as_mrx = play_game(rules, $cls(seed=seed), [RandomBot(seed=seed)], seed=seed)
        as_detectives = play_game(rules, RandomBot(seed=seed), [$cls(seed=seed)], seed=seed)
        for result in (as_mrx, as_detectives):
            assert result.outcome.termination is not Termination.ILLEGAL_MOVE


def test_it_beats_a_random_opponent_more_often_than_not() -> None:
    wins = 0
    for seed in range(10):
        if play_game("grid5", $cls(seed=seed), [RandomBot(seed=seed)],
                     seed=seed).outcome.winner is Winner.MRX:
            wins += 1
        if play_game("grid5", RandomBot(seed=seed), [$cls(seed=seed)],
                     seed=seed).outcome.winner is Winner.DETECTIVES:
            wins += 1
    assert wins > 10
''')

README = Template('''# $name

A bot for yard, the Scotland Yard match server: `$module.py` is the
whole bot (a `bots.sdk.Bot` subclass; its `choose(view, legal)` returns one of the legal
moves), `test_$module.py` its test. The full guide: yard's docs/bots.md.

## Check it

```bash
pip install pytest && pytest test_$module.py     # whole games in-process, both roles
yard-bot check $module.py:$cls                    # games against random on each ruleset
yard bot-check $module.py:$cls                    # with the full yard install: the protocol
                                                  # battery (dropped connection, deadline...)
```

## Put it on a ladder

```bash
python $module.py --url wss://HOST --ladder grid5 --register --token-file ~/.$module.token
```

`--register` claims the name `$name` on a server with open registration and keeps its
token in the file (later runs use it; without open registration ask the operator for a
token: `--token-file FILE` holding it). The bot plays until you stop it: Ctrl-C (or
`--games N`) leaves without forfeiting the games in progress. Its rating, rank and
recent games:

```bash
yard-bot standing $name --url https://HOST
```
''')


__all__ = ["BOT", "README", "TEST", "StarterError", "names", "new_bot", "write_starter"]
