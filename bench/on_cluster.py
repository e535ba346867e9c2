"""``--cluster`` for the benchmarks: run seed chunks as Ray tasks.

A thin wrapper of :func:`tournament.ray_setup.map_on_cluster` for the scripts in bench/
(``from bench.on_cluster import ...``; each script puts its checkout, not bench/, on the
import path first). Needs the cluster extra (``pip install -e '.[cluster]'``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

Part = TypeVar("Part")
Result = TypeVar("Result")


def local_cpus(address: str) -> int | None:
    """The CPUs of a ``local[:N]`` address, ``None`` for a cluster; a bad address raises
    ``ClusterError`` (a ``YardError``) saying what is accepted."""
    from tournament.ray_setup import parse_cluster

    return parse_cluster(address).local_cpus


def map_on_cluster(address: str, fn: Callable[[Part], Result], parts: Sequence[Part]
                   ) -> list[Result]:
    """``[fn(part) for part in parts]`` as one-CPU Ray tasks on the cluster at ``address``
    (``auto``, ``ray://HOST:PORT`` or ``local[:N]``), in the order of ``parts``; inside
    :func:`session` they reuse its Ray connection."""
    from tournament.ray_setup import map_on_cluster as run

    return run(address, fn, parts)


@contextmanager
def session(address: str | None) -> Iterator[None]:
    """Ray started (or joined) once for a whole benchmark run; ``None``: nothing to do."""
    if address is None:
        yield
        return
    from tournament.ray_setup import import_ray, init_ray, parse_cluster

    ray = import_ray()
    init_ray(ray, parse_cluster(address))
    try:
        yield
    finally:
        ray.shutdown()


def seed_chunks(seed: int, count: int, chunks: int) -> list[tuple[int, int]]:
    """``count`` consecutive seeds from ``seed`` as at most ``chunks`` contiguous ranges
    ``(first seed, how many)``, sizes differing by at most one.

    >>> seed_chunks(10, 7, 3)
    [(10, 3), (13, 2), (15, 2)]
    """
    chunks = max(1, min(chunks, count))
    size, extra = divmod(count, chunks)
    out, start = [], seed
    for i in range(chunks):
        n = size + (i < extra)
        out.append((start, n))
        start += n
    return out
