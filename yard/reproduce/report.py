"""Render a reproduction report: a console table, Markdown, JSON and a PNG plot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def measured(row: dict[str, Any]) -> str:
    """``53.0% [43.3, 62.5]`` (n = 100 is its own column)."""
    lo, hi = row["ci95"]
    return f"{_pct(row['rate'])} [{100 * lo:.1f}, {100 * hi:.1f}]"


def published(row: dict[str, Any]) -> str:
    """The published value or ``-``."""
    return "-" if row["published"] is None else _pct(row["published"])


def header(report: dict[str, Any]) -> list[str]:
    """Title, kind of run, budget, date and machine."""
    if report["quick"]:
        kind = "QUICK run (smaller budgets: not the published set-up)"
        if report["games"] is not None:
            kind += f", --games {report['games']}"
    elif report["games"] is not None and not report.get("full_size", False):
        kind = (f"REDUCED run: {report['games']} games per cell (--games) instead of the "
                "published count, full budgets otherwise")
    elif report["games"] is not None:
        kind = f"full run: {report['games']} games per cell (--games), full budgets"
    else:
        kind = "full run"
    return [f"{report['title']} ({report['experiment']})",
            f"source: {report['source']}",
            f"{kind}; {'budget' if report['quick'] else 'full set-up'}: {report['budget']}; "
            f"seed {report['seed']}",
            f"{report['date']} on {report['machine']}, {report['workers']} worker(s)"]


def to_text(report: dict[str, Any]) -> str:
    """The console table: one line per cell, then the notes."""
    lines = header(report)
    width = max(len(r["label"]) for r in report["cells"])
    lines.append("")
    lines.append(f"{'cell':{width}}  {'side':10} {'n':>6}  {'yard [95% CI]':24} "
                 f"{'published':>9}  verdict")
    for row in report["cells"]:
        lines.append(f"{row['label']:{width}}  {row['metric']:10} {row['n']:>6}  "
                     f"{measured(row):24} {published(row):>9}  {row['verdict']}")
    differs = [(r["label"], r["differs"]) for r in report["cells"] if r["differs"]]
    if differs:
        lines.append("")
        lines.append("what differs from the published set-up:")
        for text in dict.fromkeys(part for _, d in differs for part in d.split("; ")):
            lines.append(f"  - {text}")
    for name, record in report.get("training", {}).items():
        lines.append(f"training score: {training_line(name, record)}")
    for note in report["notes"]:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def training_line(name: str, record: dict[str, Any]) -> str:
    """One weights file's training record: games, time, and its shipped evaluation."""
    shipped = record.get("shipped_eval") or (record.get("evals") or [{}])[-1]
    scores = ", ".join(f"vs {k} {v:.3f}" for k, v in shipped.items() if k != "games")
    return (f"{name}: {record.get('games')} training games, {record.get('seconds')} s; "
            f"evaluation of the shipped weights {scores}")


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(report: dict[str, Any]) -> str:
    """The Markdown table, each row with the command that reruns it."""
    lines = [f"### {report['title']}", ""]
    lines += [f"- {line}" for line in header(report)[1:]]
    lines += ["", "| cell | win rate of | n | yard [95% CI] | published | verdict | differs "
              "| command |", "|---|---|---|---|---|---|---|---|"]
    for row in report["cells"]:
        lines.append("| " + " | ".join(_md_cell(str(v)) for v in (
            row["label"], row["metric"], row["n"], measured(row), published(row),
            row["verdict"], row["differs"] or "-", f"`{row['command']}`")) + " |")
    if report["notes"] or report.get("training"):
        lines.append("")
        lines += [f"- training score: {training_line(name, record)}"
                  for name, record in report.get("training", {}).items()]
        lines += [f"- {note}" for note in report["notes"]]
    return "\n".join(lines) + "\n"


def write_outputs(report: dict[str, Any], out: Path) -> list[Path]:
    """Write ``NAME.md``, ``NAME.json`` and ``NAME.png`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    name = report["experiment"] + ("-quick" if report["quick"] else "")
    md, js, png = (out / f"{name}.{ext}" for ext in ("md", "json", "png"))
    md.write_text(to_markdown(report), encoding="utf-8")
    js.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    plot(report, png)
    return [md, js, png]


def plot(report: dict[str, Any], path: Path) -> None:
    """The experiment's plot: measured vs published per cell, the r sweep, or the DQN
    training curves beside the test results."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kind = report.get("plot", "cells")
    if kind == "training":
        fig, (ax_train, ax) = plt.subplots(1, 2, figsize=(13, 5))
        _training_curves(ax_train, report.get("training", {}))
    else:
        fig, ax = plt.subplots(figsize=(9, max(3.0, 0.45 * len(report["cells"]) + 1.5)))
    if kind == "sweep":
        _sweep(ax, report)
    else:
        _cells(ax, report)
    title = report["title"] + (" [QUICK run]" if report["quick"] else "")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _cells(ax: Any, report: dict[str, Any]) -> None:
    rows = report["cells"]
    ys = list(range(len(rows)))[::-1]
    for y, row in zip(ys, rows, strict=True):
        lo, hi = row["ci95"]
        ax.errorbar([row["rate"]], [y], xerr=[[row["rate"] - lo], [hi - row["rate"]]],
                    fmt="o", color="tab:blue", capsize=3,
                    label="yard (95% CI)" if y == ys[0] else None)
        if row["published"] is not None:
            ax.plot([row["published"]], [y], "D", color="tab:red",
                    label="published" if not ax.get_legend_handles_labels()[1].count(
                        "published") else None)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{r['label']} ({r['metric']})" for r in rows], fontsize=7)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("win rate")
    ax.legend(loc="best", fontsize=8)


def _sweep(ax: Any, report: dict[str, Any]) -> None:
    series: dict[str, list[dict[str, Any]]] = {}
    for row in report["cells"]:
        series.setdefault(row["series"], []).append(row)
    for i, (name, rows) in enumerate(series.items()):
        color = f"C{i}"
        xs = [r["x"] for r in rows]
        ax.plot(xs, [r["rate"] for r in rows], "o-", color=color, label=f"{name} (yard)")
        ax.fill_between(xs, [r["ci95"][0] for r in rows], [r["ci95"][1] for r in rows],
                        color=color, alpha=0.15)
        pub = [(r["x"], r["published"]) for r in rows if r["published"] is not None]
        if pub:
            ax.plot(*zip(*pub, strict=True), "D", color=color, mfc="none", markersize=9,
                    label=f"{name} (published)")
    ax.set_xlabel("coalition reduction r")
    ax.set_ylabel("seekers' win rate")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)


def _training_curves(ax: Any, training: dict[str, dict[str, Any]]) -> None:
    for name, record in training.items():
        evals = record.get("evals", [])
        role = name
        opponents = sorted({k for e in evals for k in e if k != "games"})
        for opp in opponents:
            pts = [(e["games"], e[opp]) for e in evals if opp in e]
            ax.plot(*zip(*pts, strict=True), marker=".", label=f"{role} vs {opp}")
    ax.set_xlabel("training games")
    ax.set_ylabel("evaluation win rate (training record)")
    ax.set_ylim(0, 1.02)
    ax.set_title("training curves of the shipped dash weights", fontsize=9)
    ax.legend(fontsize=7)
