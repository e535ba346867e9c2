"""Per-bot compute of a tournament: how long each bot took per move (the server's clock) and
the search effort it reported (playouts, nodes, depth), so unequal compute is visible.

>>> from records import ComputeRow
>>> rows = [ComputeRow("mcts", "1", 10, 2.0, 5000, 10), ComputeRow("mcts", "2", 10, 2.2, 4000, 10)]
>>> summary = compute_summary(rows)
>>> summary["mcts"].mean_playouts, summary["mcts"].instances["2"].mean_time_s
(450.0, 0.22)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from rich.console import Group
from rich.markup import escape
from rich.table import Table

from ratings.render import first_fitting, table_view
from records import ComputeRow


@dataclass(frozen=True)
class BotCompute:
    """Means per move of one bot (all its processes), and per process ``instance``.

    ``moves`` counts the moves the bot chose itself; ``mean_time_s`` is the server-measured
    time from ``your_turn`` to the accepted ``move``; each ``mean_<effort>`` is over the
    moves that reported it (``None`` if none did; forced moves report nothing).
    """

    bot: str
    moves: int
    mean_time_s: float | None
    mean_playouts: float | None
    mean_nodes: float | None
    mean_depth: float | None
    instances: dict[str, BotCompute] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The ``compute`` entry of ``yard tournament run --json`` for this bot."""
        out: dict[str, Any] = {"moves": self.moves, "mean_time_s": self.mean_time_s,
                               "mean_playouts": self.mean_playouts,
                               "mean_nodes": self.mean_nodes, "mean_depth": self.mean_depth}
        if self.instances:
            out["instances"] = {k: v.to_dict() for k, v in self.instances.items()}
        return out


def _mean(total: float, count: int, digits: int) -> float | None:
    return round(total / count, digits) if count else None


def _combine(bot: str, rows: list[ComputeRow]) -> BotCompute:
    moves = sum(r.moves for r in rows)
    return BotCompute(
        bot, moves, _mean(sum(r.time_s for r in rows), moves, 4),
        _mean(sum(r.playouts for r in rows), sum(r.playout_moves for r in rows), 1),
        _mean(sum(r.nodes for r in rows), sum(r.node_moves for r in rows), 1),
        _mean(sum(r.depth for r in rows), sum(r.depth_moves for r in rows), 2))


def compute_summary(rows: list[ComputeRow]) -> dict[str, BotCompute]:
    """Rows of :meth:`db.store.Database.compute` -> bot name -> its means (with one entry
    per announced instance when its processes announced one)."""
    by_bot: dict[str, list[ComputeRow]] = {}
    for row in rows:
        by_bot.setdefault(row.bot, []).append(row)
    out: dict[str, BotCompute] = {}
    for bot in sorted(by_bot):
        group = by_bot[bot]
        instances = {r.instance: _combine(bot, [r]) for r in
                     sorted(group, key=lambda r: _instance_key(r.instance))
                     if r.instance is not None}
        total = _combine(bot, group)
        out[bot] = BotCompute(total.bot, total.moves, total.mean_time_s, total.mean_playouts,
                              total.mean_nodes, total.mean_depth, instances)
    return out


def _instance_key(instance: str | None) -> tuple[int, str]:
    text = instance or ""
    return (int(text), "") if text.isdigit() else (1 << 30, text)


def _fmt(value: float | None, spec: str) -> str:
    return "—" if value is None else format(value, spec)


#: Compute columns: header, cell; the effort columns (last three) are left out at narrow
#: widths when no bot reported that effort.
_COLUMNS: dict[str, tuple[str, Callable[[BotCompute], str]]] = {
    "bot": ("bot", lambda row: escape(row.bot)),
    "moves": ("moves", lambda row: str(row.moves)),
    "time": ("time/move", lambda row: "—" if row.mean_time_s is None
             else f"{row.mean_time_s:.3f} s"),
    "playouts": ("playouts/move", lambda row: _fmt(row.mean_playouts, ",.0f")),
    "nodes": ("nodes/move", lambda row: _fmt(row.mean_nodes, ",.0f")),
    "depth": ("depth", lambda row: _fmt(row.mean_depth, ".1f")),
}
_SHORT_HEADERS = {"playouts": "playouts", "nodes": "nodes"}


def compute_table(summary: dict[str, BotCompute], width: int | None = None) -> Table:
    """The per-bot compute as a rich table that fits ``width`` columns (all columns when
    ``None``): at narrow widths effort nobody reported is left out, then headers shorten
    and the move count goes; bot names are never cut."""
    reported = [key for key in ("playouts", "nodes", "depth")
                if any(_COLUMNS[key][1](row) != "—" for row in summary.values())]
    layouts = [(list(_COLUMNS), {}), (["bot", "moves", "time", *reported], {}),
               (["bot", "moves", "time", *reported], _SHORT_HEADERS),
               (["bot", "time", *reported], _SHORT_HEADERS)]
    return first_fitting([partial(_compute_layout, summary, keys, headers)
                          for keys, headers in layouts], width)


def _compute_layout(summary: dict[str, BotCompute], keys: list[str],
                    headers: dict[str, str]) -> Table:
    table = Table(title="Compute per move", caption="time: the server's clock, your_turn to "
                  "move; effort: as the bot reported it (—: none)", caption_justify="left")
    for key in keys:
        table.add_column(headers.get(key, _COLUMNS[key][0]), no_wrap=True,
                         justify="left" if key == "bot" else "right")
    for row in summary.values():
        table.add_row(*(_COLUMNS[key][1](row) for key in keys))
    return table


def compute_view(summary: dict[str, BotCompute], width: int | None = None) -> Group:
    """:func:`compute_table` with its caption below as lines wrapped at the console."""
    return table_view(compute_table(summary, width))
