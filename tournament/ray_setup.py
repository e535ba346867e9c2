"""Reaching Ray for ``--cluster``: addresses, starting or joining Ray, and what the
database must be for workers on other machines.

Used by ``yard tournament run --cluster`` (:mod:`tournament.cluster`), by DQN training on a
cluster and by benchmarks that spread seed ranges over Ray tasks (:func:`map_on_cluster`).
Ray is an optional extra (``pip install -e '.[cluster]'``); it is imported only when a
cluster run starts (:func:`import_ray`).
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from db.engine import parse_url
from tournament.spec import TournamentRunError

Part = TypeVar("Part")
Result = TypeVar("Result")


class ClusterError(TournamentRunError):
    """A cluster run cannot start (no Ray, a bad address, SQLite across machines...)."""


@dataclass(frozen=True)
class ClusterAddress:
    """Where to run: ``auto`` (the running cluster), ``ray://HOST:PORT`` (Ray client), or
    ``local[:N]`` (a local Ray instance with N CPUs, so N workers for games whose bots need
    one core a move; default: this machine's cores)."""

    text: str
    #: The ``address`` for ``ray.init`` (None: start a local instance).
    address: str | None
    #: CPUs of a local instance (None: not local).
    local_cpus: int | None

    @property
    def local(self) -> bool:
        """A Ray instance on this machine only."""
        return self.address is None


def parse_cluster(text: str) -> ClusterAddress:
    """Parse a ``--cluster`` value; :class:`ClusterError` says what is accepted."""
    value = text.strip()
    if value == "auto" or (value.startswith("ray://") and len(value) > len("ray://")):
        return ClusterAddress(value, value, None)
    if value == "local" or value.startswith("local:"):
        count = value.partition(":")[2]
        if not count:
            return ClusterAddress(value, None, os.cpu_count() or 1)
        if count.isdigit() and int(count) >= 1:
            return ClusterAddress(value, None, int(count))
    raise ClusterError(f"--cluster {text!r}: expected auto, ray://HOST:PORT, local or "
                       f"local:N (N >= 1 workers' CPUs)")


def import_ray() -> Any:
    """The ``ray`` module, or :class:`ClusterError` telling how to install it."""
    try:
        import ray
    except ImportError:
        raise ClusterError("--cluster needs Ray: pip install -e '.[cluster]'") from None
    return ray


def init_ray(ray: Any, cluster: ClusterAddress) -> None:
    """``ray.init`` for ``cluster``: a local instance with its CPUs, or the cluster at its
    address; :class:`ClusterError` with Ray's first line when that fails."""
    options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                               "configure_logging": False}
    if cluster.local:
        options["num_cpus"] = cluster.local_cpus
    else:
        options["address"] = cluster.address
    try:
        with warnings.catch_warnings():  # Ray's client warns, then raises: one line is enough
            warnings.simplefilter("ignore")
            ray.init(**options)
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError...
        raise ClusterError(f"--cluster {cluster.text}: cannot start or reach Ray: "
                           f"{str(exc).splitlines()[0] if str(exc) else exc!r}") from None


@contextlib.contextmanager
def cluster_session(cluster: ClusterAddress | None, db_url: str) -> Iterator[None]:
    """Ray started or joined for ``cluster`` (nothing for ``None``), with the database
    checked against the nodes that are up (:func:`check_database`), before anything is
    stored; Ray stops at the end. :class:`ClusterError` when Ray is missing or cannot be
    reached, or the database cannot serve those nodes."""
    if cluster is None:
        yield
        return
    ray = import_ray()
    init_ray(ray, cluster)
    try:
        check_database(db_url, cluster, len([n for n in ray.nodes() if n.get("Alive")]))
        yield
    finally:
        ray.shutdown()


def map_on_cluster(address: str, fn: Callable[[Part], Result], parts: Sequence[Part], *,
                   cpus: int = 1) -> list[Result]:
    """``[fn(part) for part in parts]``, each call a Ray task that needs ``cpus`` CPUs, on
    the cluster at ``address`` (a ``--cluster`` value); results in the order of ``parts``.
    Starts Ray for the call (and stops it after) unless it is already initialised.
    Long benchmarks split their seed ranges into ``parts`` with this."""
    ray = import_ray()
    own = not ray.is_initialized()
    if own:
        init_ray(ray, parse_cluster(address))
    try:
        task = ray.remote(num_cpus=cpus)(fn)
        results: list[Result] = ray.get([task.remote(part) for part in parts])
        return results
    finally:
        if own:
            ray.shutdown()


def check_database(db_url: str, cluster: ClusterAddress, nodes: int) -> None:
    """Refuse SQLite when workers may run on another machine (a Ray client, or a cluster
    with more than one node): they need one shared server database (PostgreSQL)."""
    if parse_url(db_url).get_backend_name() != "sqlite":
        return
    if not cluster.local and (cluster.address != "auto" or nodes > 1):
        where = "a Ray client" if cluster.address != "auto" else f"{nodes} nodes"
        raise ClusterError(f"--cluster {cluster.text} ({where}): workers on other machines "
                           f"cannot share a SQLite file; use PostgreSQL, e.g. --db "
                           f"postgresql+psycopg://USER@HOST/DB")
