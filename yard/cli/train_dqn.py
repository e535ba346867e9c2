r"""``yard train dqn``: train a DQN model for one role of one ruleset.

Example (about a minute on one core)::

    yard train dqn --rules grid5 --role detective --opponents random --games 3000 \
        --seed 1 --out grid5-detective.npz

Every learning hyperparameter of :class:`~bots.dqn.agent.DqnConfig` and every reward of
:class:`~bots.dqn.train.Rewards` is an option (``--lr``, ``--reward-mrx-caught``, ...);
``yard train dqn --help`` lists them with their defaults.
"""

from __future__ import annotations

import dataclasses
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from bots.dqn.agent import DqnConfig
from bots.dqn.features import Role
from bots.dqn.model import Arch
from bots.dqn.train import Rewards, Trainer, TrainingError, TrainSpec, TrainStats
from bots.spec import split_spec_list
from game import load_ruleset

_HELP = {
    "hidden": "hidden layer sizes, comma-separated", "lr": "Adam learning rate",
    "gamma": "discount per own move", "batch_size": "transitions per gradient step",
    "buffer_size": "replay buffer capacity", "learn_start": "transitions before learning",
    "train_every": "own moves per gradient step",
    "target_sync": "gradient steps between target-network copies",
    "double_dqn": "Double DQN targets", "eps_start": "initial exploration ε",
    "eps_end": "final exploration ε", "eps_decay_games": "games over which ε decays",
    "grad_clip": "gradient-norm clip", "n_step": "own moves per return (n-step Q-learning)",
    "lr_end": "learning rate after --lr-decay-games (linear decay; 0: constant --lr)",
    "lr_decay_games": "games over which the learning rate decays to --lr-end",
    "mrx_round": "Mister X: per survived round", "mrx_caught": "Mister X: caught/cornered",
    "det_possible": "detective: stepping on a possible location",
    "det_capture": "detective: making the capture", "det_lose": "detectives: losing",
    "det_team": "detective: a teammate made the capture",
    "det_closer": "detective shaping: potential -c * mean distance to possible set",
    "mrx_far": "Mister X shaping: potential c * distance to nearest detective",
}

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def _dataclass_options(cls: type[Any], prefix: str = "") -> list[Decorator]:
    """One click option per dataclass field, with the field's default."""
    out: list[Decorator] = []
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[operator]
        flag = "--" + prefix + f.name.replace("_", "-")
        help_text = _HELP.get(f.name, f.name)
        if isinstance(default, bool):
            flags = f"{flag}/--no-{prefix}{f.name.replace('_', '-')}"
            out.append(click.option(flags, f"{prefix}{f.name}".replace("-", "_"),
                                    default=default, show_default=True, help=help_text))
        elif isinstance(default, tuple):
            out.append(click.option(flag, f"{prefix}{f.name}".replace("-", "_"),
                                    default=",".join(map(str, default)), show_default=True,
                                    help=help_text))
        else:
            out.append(click.option(flag, f"{prefix}{f.name}".replace("-", "_"),
                                    type=type(default), default=default, show_default=True,
                                    help=help_text))
    return out


def _apply(options: list[Decorator]) -> Decorator:
    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            fn = option(fn)
        return fn
    return wrap


def _config(kwargs: dict[str, Any]) -> tuple[DqnConfig, Rewards]:
    values = {f.name: kwargs.pop(f.name) for f in dataclasses.fields(DqnConfig)}
    try:
        values["hidden"] = tuple(int(h) for h in str(values["hidden"]).split(","))
    except ValueError:
        raise TrainingError(f"--hidden {values['hidden']!r}: give sizes like 128,64") from None
    rewards = {f.name: kwargs.pop(f"reward_{f.name}") for f in dataclasses.fields(Rewards)}
    return DqnConfig(**values), Rewards(**rewards)


@click.command("dqn")
@click.option("--rules", "rules_name", required=True, help="ruleset name or .toml path")
@click.option("--role", type=click.Choice([r.value for r in Role]), required=True)
@click.option("--opponents", default="random", show_default=True,
              help="comma-separated bot specs for the other side (one drawn per game), "
              "e.g. alphabeta:depth=2,time=0")
@click.option("--partner", default=None, help="scripted bot for the other detective seats "
              "(the learner then plays detective 1 only)")
@click.option("--games", type=click.IntRange(1), default=2000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--device", default="cpu", show_default=True, help="cpu or cuda")
@click.option("--arch", type=click.Choice([a.value for a in Arch]), default=None,
              help="network: mlp or cnn (grids), scorer (graphs); default by board")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="weights file to write (.npz)")
@click.option("--checkpoint", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="checkpoint path (default: OUT with .ckpt.pt), saved at each evaluation")
@click.option("--resume", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="checkpoint to continue from (the replay buffer starts empty)")
@click.option("--eval-every", type=click.IntRange(0), default=500, show_default=True,
              help="games between greedy evaluations (0: none)")
@click.option("--eval-games", type=click.IntRange(1), default=100, show_default=True,
              help="games per opponent in each evaluation")
@click.option("--keep-best/--keep-last", default=True, show_default=True,
              help="ship the best evaluated weights, or the last")
@click.option("--quiet", is_flag=True, help="no progress bar")
@click.option("--features", type=click.Choice(["grid-v1", "grid-v2"]), default=None,
              help="grid encoder version (default: the newest, grid-v2); grid-v1 "
              "reproduces older weights files")
@click.option("--time-limit", type=click.FloatRange(0), default=0.0, show_default=True,
              help="stop after this many seconds (then evaluate and save as at the end); "
              "0: play all --games")
@click.option("--cluster", "cluster_text", metavar="ADDRESS", default=None,
              help="generate games on Ray actors: auto, ray://HOST:PORT or local[:N] (the "
              "learner stays in this process; needs the cluster extra)")
@click.option("--actors", type=click.IntRange(1), default=None,
              help="with --cluster: game-playing actors (default: the cluster's CPUs - 1)")
@click.option("--refresh-steps", type=click.IntRange(1), default=100, show_default=True,
              help="with --cluster: learner steps between weight refreshes to the actors")
@_apply(_dataclass_options(DqnConfig))
@_apply(_dataclass_options(Rewards, "reward-"))
def dqn(rules_name: str, role: str, opponents: str, partner: str | None, games: int,
        seed: int, device: str, arch: str | None, out: Path, checkpoint: Path | None,
        resume: Path | None, eval_every: int, eval_games: int, keep_best: bool, quiet: bool,
        features: str | None, time_limit: float, cluster_text: str | None,
        actors: int | None, refresh_steps: int, **kwargs: Any) -> None:
    """Train a DQN model in-process against registered bots and write its weights (with
    --cluster the games are played by Ray actors, the learner stays here)."""
    config, rewards = _config(kwargs)
    names = split_spec_list(opponents)
    if not names:
        raise TrainingError("--opponents needs at least one bot name")
    spec = TrainSpec(load_ruleset(rules_name), Role(role), names, games, seed, device, partner,
                     Arch(arch) if arch else None, config, rewards, eval_every, eval_games,
                     keep_best, features, time_limit)
    trainer = Trainer(spec)
    ckpt = checkpoint or out.with_suffix(".ckpt.pt")
    if resume is not None:
        trainer.resume(resume)
    if cluster_text is None:
        stats = _run(trainer, ckpt, quiet)
    else:
        stats = _run_cluster(trainer, ckpt, quiet, cluster_text, actors, refresh_steps)
    command = "yard train dqn " + shlex.join(sys.argv[3:] if len(sys.argv) > 3 else [])
    trainer.save_weights(out, {"command": command})
    trainer.save_checkpoint(ckpt)
    best = stats.evals[-1] if stats.evals else {}
    click.echo(f"wrote {out} after {stats.games} games in {stats.seconds:.0f}s; "
               f"last evaluation {best}; best mean win rate {stats.best_score:.3f}")


def _run_cluster(trainer: Trainer, ckpt: Path, quiet: bool, cluster_text: str,
                 actors: int | None, refresh_steps: int) -> TrainStats:
    from bots.dqn.cluster import train_on_cluster
    from tournament.ray_setup import ClusterError, import_ray, init_ray, parse_cluster

    try:
        cluster = parse_cluster(cluster_text)
    except ClusterError as exc:
        raise click.BadParameter(str(exc), param_hint="--cluster") from None
    ray = import_ray()
    try:
        init_ray(ray, cluster)
    except ClusterError as exc:
        raise TrainingError(str(exc)) from None
    try:
        count = actors or max(1, int(ray.cluster_resources().get("CPU", 2)) - 1)

        def train(on_game: Callable[[TrainStats], None] | None,
                  checkpoint: Path) -> TrainStats:
            stats, _ = train_on_cluster(trainer, ray, count, refresh_steps,
                                        on_game=on_game, checkpoint=checkpoint)
            return stats

        return _run(trainer, ckpt, quiet, train)
    finally:
        ray.shutdown()


def _run(trainer: Trainer, ckpt: Path, quiet: bool,
         train: Callable[[Callable[[TrainStats], None] | None, Path], TrainStats] | None = None
         ) -> TrainStats:
    train = train or trainer.train
    if quiet:
        return train(None, ckpt)
    columns = (TextColumn("dqn {task.fields[role]}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("win {task.fields[win]:.2f} loss {task.fields[loss]:.3f} "
                          "eval {task.fields[eval]}"), TimeElapsedColumn())
    with Progress(*columns) as bar:
        task = bar.add_task("train", total=trainer.spec.games, completed=trainer.stats.games,
                            role=trainer.spec.role.value, win=0.0, loss=0.0, eval="-")

        def update(stats: TrainStats) -> None:
            last = stats.evals[-1] if stats.evals else {}
            shown = " ".join(f"{k}={v:.2f}" for k, v in last.items() if k != "games") or "-"
            bar.update(task, completed=stats.games, win=stats.win_rate, loss=stats.loss,
                       eval=shown)

        return train(update, ckpt)
