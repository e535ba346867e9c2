"""``yard leaderboard``, ``yard matrix`` and ``yard export``: ratings views over the games
stored in the database.

Every command reads ``--db`` (any SQLAlchemy URL; else ``$YARD_DB``; else
``sqlite:///yard.db``). Without ``--rules`` each ruleset gets its own section, because
ratings never mix rulesets. A missing database or unknown tournament is one
``error: ...`` line and exit status 2; a selection without decided games prints a note
(and an empty JSON structure with ``--json``) and exits 0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from db.store import Database
from ratings.bootstrap import DEFAULT_SAMPLES
from ratings.elo import fit_elo
from ratings.export import Export, Format, game_record, rating_records, render, turn_records
from ratings.leaderboard import Leaderboard, Role
from ratings.leaderboard import leaderboard as build_leaderboard
from ratings.matrix import Matrix, win_rate_matrix
from ratings.outcomes import Conversion, GameOutcome, from_results, split_by_ruleset
from yard.cli.options import json_option, selection_options

if TYPE_CHECKING:
    from rich.console import Console


def load_games(db_url: str, ruleset: str | None, tournament_id: str | None) -> Conversion:
    """Decided games of the selection (aborted ones counted in ``excluded``)."""
    with Database.connect(db_url, create=False) as store:
        if tournament_id is not None:
            store.get_tournament(tournament_id)  # unknown id: TournamentError
        return from_results(store.results(ruleset, tournament_id))


def _empty_note(db_url: str, ruleset: str | None, tournament_id: str | None,
                excluded: int) -> str:
    where = "".join([f" ruleset {ruleset}" if ruleset else "",
                     f" tournament {tournament_id}" if tournament_id else ""])
    aborted = f" ({excluded} aborted games excluded)" if excluded else ""
    return (f"no decided games in {db_url}{' for' + where if where else ''}{aborted}; "
            "play some with 'yard tournament run'")


def _sections(data: Conversion, ruleset: str | None) -> dict[str, list[GameOutcome]]:
    groups = split_by_ruleset(data.games)
    return {ruleset: groups.get(ruleset, [])} if ruleset else groups


def _console() -> Console:
    """A console at the terminal's width, or 80 columns for a pipe or file (``COLUMNS``
    overrides): tables fit it (``ratings.render``)."""
    from ratings.render import output_console

    return output_console()


def _emit_json(sections: list[dict[str, Any]], ruleset: str | None) -> None:
    payload = sections[0] if ruleset else {"rulesets": sections}
    click.echo(json.dumps(payload, indent=1))


@click.command()
@selection_options
@click.option("--role", type=click.Choice([r.value for r in Role]), default=None,
              help="Sort by (and show only players with) the rating in this role.")
@click.option("--samples", type=click.IntRange(min=1), default=DEFAULT_SAMPLES,
              show_default=True, help="Bootstrap replicates for the 95% intervals.")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option("--anchor", default=None, metavar="PLAYER",
              help="Player rated 0, or 'mean' (default: random if it played, else mean).")
@json_option("Print one JSON object.")
def leaderboard(db_url: str, ruleset: str | None, tournament_id: str | None,
                role: str | None, samples: int, seed: int, anchor: str | None,
                as_json: bool) -> None:
    """Elo ratings (maximum likelihood, Mister X advantage, per-role Elo) with 95% CIs."""
    data = load_games(db_url, ruleset, tournament_id)
    chosen = Role(role) if role else None
    boards = [build_leaderboard(games, role=chosen, anchor=anchor, samples=samples, seed=seed,
                                excluded=data.excluded_by_ruleset.get(name, 0))
              for name, games in _sections(data, ruleset).items() if games]
    if not boards:
        click.echo(_empty_note(db_url, ruleset, tournament_id, data.excluded), err=True)
    if as_json:
        sections = [b.to_dict() for b in boards]
        _emit_json(sections or _empty_sections(ruleset, _EMPTY_BOARD), ruleset)
        return
    from ratings.render import leaderboard_view

    console = _console()
    for board in boards:
        console.print(leaderboard_view(board, console.width))


_EMPTY_BOARD: dict[str, Any] = {"anchor": None, "mrx_advantage": None, "games": 0,
                                "rows": []}
_EMPTY_MATRIX: dict[str, Any] = {"rows": [], "columns": [], "cells": []}


def _empty_sections(ruleset: str | None, empty: dict[str, Any]) -> list[dict[str, Any]]:
    """With ``--rules`` an empty section of that ruleset; without, no sections."""
    return [{"ruleset": ruleset, **empty}] if ruleset else []


@click.command()
@selection_options
@json_option("Print one JSON object.")
@click.option("--png", "png", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write a heatmap image (one file per ruleset: FILE-<ruleset>.png "
                   "when several).")
def matrix(db_url: str, ruleset: str | None, tournament_id: str | None,
           as_json: bool, png: Path | None) -> None:
    """Detectives' win rate by detective player (rows) and Mister X player (columns)."""
    data = load_games(db_url, ruleset, tournament_id)
    matrices = [_ordered_matrix(games) for games in _sections(data, ruleset).values() if games]
    if not matrices:
        click.echo(_empty_note(db_url, ruleset, tournament_id, data.excluded), err=True)
    if png is not None:
        _save_images(matrices, png)
    if as_json:
        sections = [m.to_dict() for m in matrices]
        _emit_json(sections or _empty_sections(ruleset, _EMPTY_MATRIX), ruleset)
        return
    from ratings.render import matrix_view

    console = _console()
    for matrix in matrices:
        console.print(matrix_view(matrix, console.width))


def _ordered_matrix(games: list[GameOutcome]) -> Matrix:
    """Players ordered by overall Elo, strongest first."""
    fit = fit_elo(games)
    order = sorted(fit.players, key=lambda p: (-fit.ratings[p], p))
    return win_rate_matrix(games, order)


def _save_images(matrices: list[Matrix], png: Path) -> None:
    from ratings.render import save_heatmap

    for matrix in matrices:
        path = png
        if len(matrices) > 1:
            path = png.with_name(f"{png.stem}-{matrix.ruleset}{png.suffix or '.png'}")
        save_heatmap(matrix, path)
        click.echo(f"wrote {path}", err=True)


@click.command()
@selection_options
@click.option("--what", type=click.Choice([e.value for e in Export]), required=True,
              help="games: one row per game; turns: one row per turn; ratings: leaderboards; "
                   "records: one self-contained game record per line (JSON Lines, for "
                   "yard import / yard replay --file).")
@click.option("--format", "fmt", type=click.Choice([f.value for f in Format]), default=None,
              help="csv (default) or json; records are always JSON Lines.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write here instead of standard output ('-': standard output).")
@click.option("--samples", type=click.IntRange(min=1), default=DEFAULT_SAMPLES,
              show_default=True, help="Bootstrap replicates (ratings).")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
def export(db_url: str, ruleset: str | None, tournament_id: str | None, what: str,
           fmt: str | None, out: Path | None, samples: int, seed: int) -> None:
    """Export games, turns or ratings as CSV or JSON, or self-contained game records."""
    kind = Export(what)
    if out is not None and str(out) == "-":
        out = None
    if kind is Export.RECORDS:
        if fmt == Format.CSV.value:
            raise click.UsageError("--what records is JSON Lines; --format csv does not apply")
        _export_game_records(db_url, ruleset, tournament_id, out)
        return
    records = _export_records(kind, db_url, ruleset, tournament_id, samples, seed)
    text = render(records, kind, Format(fmt or Format.CSV.value))
    if out is None:
        click.echo(text, nl=False)
    else:
        out.write_text(text, encoding="utf-8")
        click.echo(f"wrote {len(records)} {kind.value} records to {out}", err=True)


def _export_game_records(db_url: str, ruleset: str | None, tournament_id: str | None,
                         out: Path | None) -> None:
    """Stream one JSON line per game, then one per tournament (its schedule and state), to
    ``out`` (written only when every line is)."""
    from db.exchange import export_lines

    with Database.connect(db_url, create=False) as store:
        if tournament_id is not None:
            store.get_tournament(tournament_id)
        if out is None:
            for _, line in export_lines(store, ruleset, tournament_id):
                click.echo(line)
            return
        partial = out.with_name(out.name + ".partial")
        counts = {"game": 0, "tournament": 0}
        try:
            with partial.open("w", encoding="utf-8") as handle:
                for kind, line in export_lines(store, ruleset, tournament_id):
                    handle.write(line + "\n")
                    counts[kind] += 1
            partial.replace(out)
        finally:
            partial.unlink(missing_ok=True)
    tournaments = counts["tournament"]
    click.echo(f"wrote {counts['game']} game records and {tournaments} tournament"
               f"{'s' if tournaments != 1 else ''} to {out}", err=True)


def _export_records(kind: Export, db_url: str, ruleset: str | None,
                    tournament_id: str | None, samples: int, seed: int
                    ) -> list[dict[str, Any]]:
    if kind is Export.RATINGS:
        data = load_games(db_url, ruleset, tournament_id)
        boards: list[Leaderboard] = [build_leaderboard(g, samples=samples, seed=seed)
                                     for g in _sections(data, ruleset).values() if g]
        return [record for board in boards for record in rating_records(board)]
    with Database.connect(db_url, create=False) as store:
        if tournament_id is not None:
            store.get_tournament(tournament_id)
        rows = store.results(ruleset, tournament_id)
        if kind is Export.GAMES:
            return [game_record(row) for row in rows]
        return [t for row in rows
                for t in turn_records(row.game_id, store.load_game(row.game_id).turns)]

