"""Per-bot compute of a tournament: how long each bot took per move (the server's clock) and
the search effort it reported (playouts, nodes, depth), so unequal compute is visible.

>>> from db.records import ComputeRow
>>> rows = [ComputeRow("mcts", "1", 10, 2.0, 5000, 10), ComputeRow("mcts", "2", 10, 2.2, 4000, 10)]
>>> summary = compute_summary(rows)
>>> summary["mcts"].mean_playouts, summary["mcts"].instances["2"].mean_time_s
(450.0, 0.22)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.table import Table

from db.records import ComputeRow


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


def compute_table(summary: dict[str, BotCompute]) -> Table:
    """The per-bot compute as a rich table."""
    table = Table(title="Compute per move", caption="time: the server's clock, your_turn to "
                  "move; effort: as the bot reported it (— none reported)")
    for name in ("bot", "moves", "time/move", "playouts/move", "nodes/move", "depth"):
        table.add_column(name, justify="left" if name == "bot" else "right")
    for bot, row in summary.items():
        seconds = "—" if row.mean_time_s is None else f"{row.mean_time_s:.3f} s"
        table.add_row(bot, str(row.moves), seconds, _fmt(row.mean_playouts, ",.0f"),
                      _fmt(row.mean_nodes, ",.0f"), _fmt(row.mean_depth, ".1f"))
    return table
