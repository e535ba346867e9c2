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


def _points(x: float) -> str:
    return f"{100 * x:+.1f}"


def gain_text(entry: dict[str, Any]) -> str:
    """A ``gains`` entry's change: ``+3.1 points [-0.4, +6.6]``."""
    lo, hi = entry["ci95"]
    return f"{_points(entry['gain'])} points [{_points(lo)}, {_points(hi)}]"


def published_gain_text(entry: dict[str, Any]) -> str:
    """The published change (``+6.4``) or ``-``."""
    return "-" if entry["published"] is None else _points(entry["published"])


def header(report: dict[str, Any]) -> list[str]:
    """Title, kind of run, budget, date and machine."""
    merged = report.get("merged_from")
    kind = _run_kind(report)
    lines = [f"{report['title']} ({report['experiment']})",
             f"source: {report['source']}",
             f"{kind}; {'budget' if report['quick'] else 'full set-up'}: {report['budget']}; "
             f"seed {report['seed']}",
             f"{report['date']} on {report['machine']}, {report['workers']} worker(s)"
             if not merged else
             f"merged {report['date']} from {len(merged)} runs: " + "; ".join(
                 f"{m['report']} (seed {m['seed']}, {m['date']}, {m['machine']})"
                 for m in merged)]
    runs = report.get("training_runs") or {}
    if runs:
        first = next(iter(runs.values()))
        size = ("QUICK training" if report["quick"] and report.get("train_games") is None
                else "training")
        changed = [f"--{key.replace('_', '-')}" for key in ("train_games", "eval_games")
                   if report.get(key) is not None]
        if changed:
            size += f" ({', '.join(changed)})"
        cpu = sum(r["cpu_seconds"] for r in runs.values())
        lines.append(f"{size}: {len(runs)} DQN Mister X variant(s), {first['games']} training "
                     f"games each against {', '.join(first['opponents'])} detectives, "
                     f"evaluated every {first['eval_every']} games on {first['eval_games']} "
                     f"games; {cpu:.0f} CPU-s of training")
    return lines


def _run_kind(report: dict[str, Any]) -> str:
    """Whether the run is quick, reduced or full, and which options made it so."""
    iterations = report.get("iterations")
    budgets = ("full budgets" if iterations is None else
               f"every MCTS bot at {iterations} iterations per move (--iterations)")
    # Reports from before "full_games" existed only had --games to make them reduced.
    full_games = report.get("full_games", report.get("full_size", True))
    if report["quick"]:
        kind = "QUICK run (smaller budgets: not the published set-up)"
        if report["games"] is not None:
            kind += f", --games {report['games']}"
        if iterations is not None:
            kind += f", --iterations {iterations}"
    elif report["games"] is not None and not full_games:
        kind = (f"REDUCED run: {report['games']} games per cell (--games) instead of the "
                f"published count, {budgets}" + (" otherwise" if iterations is None else ""))
    elif not full_games:
        kind = f"REDUCED run: fewer games than published in some cells, {budgets}" + (
            " otherwise" if iterations is None else "")
    elif iterations is not None:
        kind = f"REDUCED run: {budgets} instead of the published budget"
        if report["games"] is not None:
            kind += f", {report['games']} games per cell (--games)"
    elif report["games"] is not None:
        kind = f"full run: {report['games']} games per cell (--games), full budgets"
    else:
        kind = "full run"
    return kind


def run_name(experiment: str, quick: bool) -> str:
    """The stem of a run's output files: ``NAME`` or ``NAME-quick``."""
    return experiment + ("-quick" if quick else "")


def _rewards_text(run: dict[str, Any]) -> str:
    from bots.dqn.train import Rewards

    default = Rewards()
    changed = [f"{k}={v:g}" for k, v in run["rewards"].items() if getattr(default, k) != v]
    return ", ".join(changed) or "default"


def run_line(run: dict[str, Any]) -> str:
    """One training run: games, CPU time, last and kept evaluation."""
    last = run["evals"][-1] if run["evals"] else {}
    kept = run.get("kept_eval") or {}

    def scores(e: dict[str, Any]) -> str:
        return ", ".join(f"vs {k} {v:.3f}" for k, v in e.items() if k != "games") or "-"

    return (f"{run['variant']}: {run['arch']} {','.join(map(str, run['hidden']))}, rewards "
            f"{_rewards_text(run)}; {run['games']} games, {run['cpu_seconds']:.0f} CPU-s; "
            f"last evaluation {scores(last)}; kept weights {scores(kept)} "
            f"(at game {kept.get('games', '-')})")


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
    if report.get("gains"):
        lines.append("")
        lines.append("change over the baseline of each series (95% Newcombe interval):")
        for g in report["gains"]:
            lines.append(f"  {g['label']}: {gain_text(g)} over {g['baseline_label']}; "
                         f"{g['significant']}; published {published_gain_text(g)}"
                         + ("" if g["published"] is None else f" ({g['verdict']})"))
    differs = [(r["label"], r["differs"]) for r in report["cells"] if r["differs"]]
    if differs:
        lines.append("")
        lines.append("what differs from the published set-up:")
        for text in dict.fromkeys(part for _, d in differs for part in d.split("; ")):
            lines.append(f"  - {text}")
    for name, record in report.get("training", {}).items():
        lines.append(f"training score: {training_line(name, record)}")
    for run in (report.get("training_runs") or {}).values():
        lines.append(f"trained {run_line(run)}")
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
    if report.get("gains"):
        lines += ["", "| cell | change over | yard [95% CI] | significant | published "
                  "| verdict |", "|---|---|---|---|---|---|"]
        for g in report["gains"]:
            lines.append("| " + " | ".join(_md_cell(str(v)) for v in (
                g["label"], g["baseline_label"], gain_text(g), g["significant"],
                published_gain_text(g), g["verdict"])) + " |")
    runs = report.get("training_runs") or {}
    if runs:
        lines += ["", "| trained variant | network | rewards | training games | last "
                  "evaluation | kept weights (at game) | CPU-s | same run with `yard train "
                  "dqn` |", "|---|---|---|---|---|---|---|---|"]
        for run in runs.values():
            last = run["evals"][-1] if run["evals"] else {}
            kept = run.get("kept_eval") or {}
            lines.append("| " + " | ".join(_md_cell(str(v)) for v in (
                run["variant"], f"{run['arch']} {','.join(map(str, run['hidden']))}",
                _rewards_text(run), run["games"], _evals(last),
                f"{_evals(kept)} ({kept.get('games', '-')})", f"{run['cpu_seconds']:.0f}",
                f"`{run['command']}`")) + " |")
    if report["notes"] or report.get("training"):
        lines.append("")
        lines += [f"- training score: {training_line(name, record)}"
                  for name, record in report.get("training", {}).items()]
        lines += [f"- {note}" for note in report["notes"]]
    return "\n".join(lines) + "\n"


def _evals(e: dict[str, Any]) -> str:
    return ", ".join(f"{k} {_pct(v)}" for k, v in e.items() if k != "games") or "-"


def write_outputs(report: dict[str, Any], out: Path) -> list[Path]:
    """Write ``NAME.md``, ``NAME.json`` and ``NAME.png`` under ``out``, and with trained
    variants one training-curve plot per comparison (``NAME-architecture.png``,
    ``NAME-reward.png``)."""
    out.mkdir(parents=True, exist_ok=True)
    name = run_name(report["experiment"], report["quick"])
    md, js, png = (out / f"{name}.{ext}" for ext in ("md", "json", "png"))
    md.write_text(to_markdown(report), encoding="utf-8")
    js.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    plot(report, png)
    written = [md, js, png]
    for comparison in comparisons(report):
        path = out / f"{name}-{comparison}.png"
        plot_comparison(report, comparison, path)
        written.append(path)
    return written


def comparisons(report: dict[str, Any]) -> list[str]:
    """The comparisons (``architecture``, ``reward``) the report's training runs belong to."""
    runs = (report.get("training_runs") or {}).values()
    return list(dict.fromkeys(c for run in runs for c in run["comparisons"]))


def plot_comparison(report: dict[str, Any], comparison: str, path: Path) -> None:
    """One comparison as the thesis's figures show it: the evaluation win rate of every
    variant against training games (left) and its test games with 95% intervals (right),
    the thesis's best DQN Mister X as a dashed line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [r for r in report["training_runs"].values() if comparison in r["comparisons"]]
    tested = {c["training"]: c for c in report["cells"] if c.get("training")}
    fig, (curves, tests) = plt.subplots(1, 2, figsize=(13, 5),
                                        gridspec_kw={"width_ratios": [3, 2]})
    published = next((c["published"] for c in tested.values()
                      if c["published"] is not None), None)
    for i, run in enumerate(runs):
        pts = [(e["games"], e[opp]) for e in run["evals"] for opp in run["opponents"]
               if opp in e]
        if pts:
            curves.plot(*zip(*pts, strict=True), marker=".", color=f"C{i}",
                        label=run["label"])
        cell = tested.get(run["variant"])
        if cell is not None:
            lo, hi = cell["ci95"]
            tests.errorbar([cell["rate"]], [i], xerr=[[cell["rate"] - lo], [hi - cell["rate"]]],
                           fmt="o", color=f"C{i}", capsize=3)
    for ax in (curves, tests):
        if published is not None:
            (ax.axhline if ax is curves else ax.axvline)(
                published, color="tab:red", linestyle="--", linewidth=1,
                label=f"thesis's best DQN Mister X ({_pct(published)})")
    curves.set_xlabel("training games")
    if runs:
        curves.set_ylabel(f"Mister X's evaluation win rate ({runs[0]['eval_games']} games "
                          f"vs {', '.join(runs[0]['opponents'])} detectives)")
    curves.set_ylim(0, 1.02)
    curves.legend(fontsize=7, loc="lower right")
    n = next((c["n"] for c in tested.values()), 0)
    tests.set_yticks(range(len(runs)))
    tests.set_yticklabels([r["variant"] for r in runs], fontsize=8)
    tests.invert_yaxis()
    tests.set_xlabel(f"test win rate, {n} games, 95% CI")
    tests.set_xlim(min([0.5] + [tested[r["variant"]]["ci95"][0] - 0.02 for r in runs
                                if r["variant"] in tested]), 1.0)
    title = (f"{report['title'].split(':')[0]}: DQN Mister X vs random detectives, "
             f"{comparison} comparison" + (" [QUICK run]" if report["quick"] else ""))
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


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
