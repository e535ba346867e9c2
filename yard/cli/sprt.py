"""``yard sprt --tournament ID``: an SPRT tournament's test, recomputed from its stored
games (read-only; ``yard tournament run --sprt`` and ``resume`` record it as they play)."""

from __future__ import annotations

import json

import click

from db.errors import TournamentError
from db.store import Database
from tournament.sprt import sprt_state, stored_sprt_state
from yard.cli.options import db_option, json_option


@click.command()
@click.option("--tournament", "tournament_id", required=True, metavar="ID",
              help="A tournament run with --sprt.")
@json_option("Print one JSON object (llr, lower, upper, elo, elo_ci, decision, "
              "pairs, pentanomial...).")
@db_option
def sprt(tournament_id: str, as_json: bool, db_url: str) -> None:
    """Recompute the SPRT of a tournament from its stored games: LLR, bounds, Elo estimate
    with its 95% interval, and the decision."""
    with Database.connect(db_url, create=False) as db:
        state = sprt_state(db, tournament_id)
        if state is None:
            raise TournamentError(f"tournament {tournament_id} is not an SPRT (start one "
                                  "with yard tournament run --sprt ...)")
        recorded = stored_sprt_state(db, tournament_id)
    if as_json:
        click.echo(json.dumps({"tournament_id": tournament_id, **state.to_dict(),
                               "recorded": recorded}, indent=2))
        return
    click.echo(f"tournament {tournament_id}")
    click.echo(state.summary())
    if recorded is not None and (recorded.get("decision"), recorded.get("pairs")) != (
            state.decision.value, state.pairs):
        click.echo(f"(the runner last recorded {recorded.get('pairs')} pairs, decision "
                   f"{recorded.get('decision')})")
