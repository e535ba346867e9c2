"""The ladder's JSON: live standings per ruleset (from the running server when there is
one, else rebuilt from the stored games, as ``yard web`` shows them) and one bot's page
(its rating after each game, forfeits by cause, record by role)."""

from __future__ import annotations

import random
from typing import Any

from db.store import Database
from host.web.errors import NotFound
from server.ladder import Ladder, ladder_rules, play_id, play_rules, rating_history
from server.ladder import ladder_id as group_of

#: What the pages say about the two kinds of rating.
RATINGS_NOTE = ("Ranked by the maximum likelihood Elo of every stored game (95% interval "
                "from the fit), refitted every 2 s while games come in: the order the "
                "stored games say. Live ratings (OpenSkill, Weng-Lin) are updated after "
                "every game, shown as mu ± 2 sigma and used for matchmaking. Bootstrap "
                "intervals and likelihood of superiority: Leaderboard page, yard "
                "leaderboard --tournament ladder-RULES.")


def stored_ladders(store: Database) -> dict[str, Any]:
    """``{"live": false, "ladders": {rules: rows}, "people": {rules: rows}}`` rebuilt
    from the stored ladder and Play games (no bot is connected: nobody is serving)."""
    rules = sorted({r for info in store.list_tournaments()
                    if (r := ladder_rules(info.tournament_id) or play_rules(info.tournament_id))})
    ladder = Ladder(rules, rng=random.Random(0))
    for name in rules:
        ladder.replay(name, store.group_games(group_of(name)))
        ladder.replay(name, store.group_games(play_id(name)), people=True)
    return {"live": False, "note": RATINGS_NOTE,
            "ladders": {r: ladder.standings(r) for r in rules},
            "people": {r: ladder.people(r) for r in rules}}


def bot_page(store: Database, rules: str, name: str) -> dict[str, Any]:
    """Bot ``name``'s ladder page on ``rules`` (:func:`server.ladder.rating_history`: an
    empty history for a bot with no ladder game there yet); :class:`NotFound` for a
    ruleset with no ladder here."""
    group = group_of(rules)
    known = {info.tournament_id for info in store.list_tournaments()}
    if group not in known:
        raise NotFound(f"no {rules!r:.40} ladder on this server")
    page = rating_history(rules, store.group_games(group), name)
    return {**page, "group": group, "note": RATINGS_NOTE}
