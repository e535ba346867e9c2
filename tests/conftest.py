"""Shared test settings and fixtures: a Hypothesis profile without deadlines (the machine is
shared); a throwaway PostgreSQL schema (on the server named by YARD_TEST_POSTGRES_URL,
``.ci/postgres start``); a local Ray instance with 2 CPUs (the ``cluster`` extra); the
compiled MCTS kernel, compiled once per run (:mod:`numba_warmup`).

The suite runs on pytest-xdist workers (``-n auto --dist loadgroup`` in pyproject.toml;
``auto`` is one worker per core, :func:`pytest_xdist_auto_num_workers`): tests that
must share one process say so with ``pytest.mark.xdist_group`` (the Ray tests, the browser
tests); everything else is spread over the workers one test at a time.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# The tests start a few hundred Python processes (yard commands, servers, bots, Ray
# workers): with PYTHONDONTWRITEBYTECODE set (as in many CI images) each one would compile
# yard's own modules from source again, about 0.15 s of CPU a process. Cache them as Python
# does by default (__pycache__ is ignored by git).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

if os.environ.get("PYTEST_XDIST_WORKER"):
    # One worker per core: numeric libraries (OpenBLAS, OpenMP, torch) in a worker and in
    # the processes it starts compute on one thread instead of spinning on the other core.
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, settings

from tests import BACKENDS

ROOT = Path(__file__).resolve().parent.parent

# Tests never read or write the user's own yard state (the admin token file `yard serve`
# creates, server.auth.default_admin_token_file): each test process, and the processes
# it starts, keep it in a folder of their own.
if not os.environ.get("YARD_TESTS_STATE_HOME"):
    os.environ["YARD_TESTS_STATE_HOME"] = tempfile.mkdtemp(prefix="yard-tests-state-")
    atexit.register(shutil.rmtree, os.environ["YARD_TESTS_STATE_HOME"], True)
os.environ["XDG_STATE_HOME"] = os.environ["YARD_TESTS_STATE_HOME"]

settings.register_profile("yard", deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("yard")


def postgres_url_with_schema(base_url: str, schema: str) -> str:
    """``base_url`` with every connection's search_path set to ``schema``."""
    url = sa.make_url(base_url).update_query_dict({"options": f"-csearch_path={schema}"})
    return url.render_as_string(hide_password=False)


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A URL on the YARD_TEST_POSTGRES_URL server whose connections use a new, empty
    schema (dropped afterwards). Only for tests collected when that variable is set."""
    base = os.environ.get("YARD_TEST_POSTGRES_URL")
    assert base, "pg_url needs YARD_TEST_POSTGRES_URL (.ci/postgres start)"
    schema = f"t_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(base)
    with admin.begin() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
    try:
        yield postgres_url_with_schema(base, schema)
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty database: a SQLite file, or a throwaway PostgreSQL schema
    (:func:`pg_url`) when YARD_TEST_POSTGRES_URL names a server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'yard.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker per core. The suite is bound by CPU (its processes keep both
    cores busy over nine tenths of the run), so a third worker on 2 cores only adds
    contention: measured from a fresh clone on 2 idle cores (1,075 tests, PostgreSQL
    included), 3 workers took 5 min 10 s and 620 CPU-s, 2 workers 4 min 58 s and 554 CPU-s.
    (At 985 tests, with fewer processes per test, 3 had been the faster.)"""
    return os.cpu_count() or 1


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--dist loadgroup``: pytest-xdist sends the tests of one ``xdist_group`` to one
    worker by appending ``@GROUP`` to their node ids in the workers. From pytest 9.2 on its
    write (``item._nodeid``) no longer takes, node ids being structured, and the groups are
    silently spread over all workers (pytest-xdist issue 1386). Until its fix (pull request
    1388, which does the same) is released: append the suffix here, and refuse to run
    rather than run a group's tests on several workers at once."""
    items.sort(key=_run_order)  # stable: the file order otherwise
    if not getattr(config.option, "loadgroup", False):  # set in xdist workers only
        return
    for item in items:
        names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                        for mark in item.iter_markers("xdist_group")})
        if not names:
            continue
        suffix = "@" + "_".join(names)
        if not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(item.nodeid + suffix)
        if not item.nodeid.endswith(suffix):
            raise pytest.UsageError(f"cannot put {item.nodeid} in its xdist group {suffix}: "
                                    "run with -n 0, or --dist load (tests/conftest.py)")


#: Groups whose tests run one after another on one worker, longest first: started first,
#: so that the last of them does not end after every other test.
LONG_GROUPS = ("ray", "browser", "deal_secrecy")


def _run_order(item: pytest.Item) -> int:
    """Where ``item`` goes in the run (the same order in every worker, as xdist needs):
    the long serial groups first, the tests that wait for the compiled kernels
    (:data:`KERNEL_USERS`, compiled in the background from the start) last, the rest in
    between."""
    for mark in item.iter_markers("xdist_group"):
        for name in mark.args:
            if name in LONG_GROUPS:
                return LONG_GROUPS.index(name)
    return len(LONG_GROUPS) + (item.path.name in KERNEL_USERS)


#: The xdist group of the tests that start Ray (tests/tournament/test_cluster.py and
#: tests/bots/test_dqn_cluster.py): one worker runs them one after another, sharing one local
#: Ray instance (starting one costs about 5 CPU-s). A test that runs ``--cluster auto``
#: names the instance with RAY_ADDRESS (``auto`` alone would connect to whichever Ray
#: instance the machine started last).
RAY_GROUPS = ("ray",)
_ray: Any = None


def _in_ray_group(item: pytest.Item | None) -> bool:
    return item is not None and any(
        name in RAY_GROUPS for mark in item.iter_markers("xdist_group") for name in mark.args)


@pytest.fixture
def ray_local() -> Any:
    """A local Ray instance with 2 CPUs; yields the ``ray`` module. Started by the first test
    that asks for it and shared with the next tests of the Ray group; stopped after the last
    of them (:func:`pytest_runtest_teardown`). Only for tests collected when Ray is
    installed (or under CI, where it must be)."""
    global _ray
    if _ray is None:
        import ray

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
        _ray = ray
    return _ray


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    global _ray
    if _ray is not None and not _in_ray_group(nextitem):
        _ray.shutdown()
        _ray = None


#: Test modules that run the compiled MCTS kernel or Alpha-Beta's compiled search (the
#: ``alphabeta`` bot's default profile), in the test process or in the ``yard`` processes
#: they start.
KERNEL_USERS = frozenset({"test_kernel.py", "test_mcts.py", "test_db_store.py",
                          "test_fairness.py", "test_reproduce.py", "test_mcts_train.py",
                          "test_alphabeta.py", "test_alphabeta_kernel.py", "test_hider.py",
                          "test_dqn_bot.py", "test_client.py", "test_rule_endings.py",
                          "test_bot_options.py"})
_kernel_ready = False
_warmup: subprocess.Popen[bytes] | None = None


def _kernel_lock() -> Path:
    """The lock of the numba cache the kernel compiles into (NUMBA_CACHE_DIR, else
    bots/mcts/__pycache__): who holds it is compiling into that cache."""
    cache = os.environ.get("NUMBA_CACHE_DIR") or str(ROOT / "bots" / "mcts")
    key = hashlib.sha1(cache.encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"yard-tests-numba-{key}.lock"


def pytest_configure(config: pytest.Config) -> None:
    """Compile the MCTS kernel (:mod:`numba_warmup`) in the background from the start of
    the session, holding the cache's lock until it is done: tests that use the kernel
    wait for it (:func:`pytest_runtest_protocol`) and run last, the others run meanwhile.
    On a fresh clone this is over a minute of CPU, once; with the cache filled, a second.
    Started by the session's main process (the xdist controller, or the only process with
    -n 0)."""
    global _warmup
    if os.environ.get("PYTEST_XDIST_WORKER") or config.option.collectonly:
        return
    handle = _kernel_lock().open("a")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another session compiles into this cache: wait for it
            return
        # The child inherits the locked file and holds the lock until it exits. It runs at
        # the tests' priority: at a lower one a loaded machine starved it until the tests
        # that wait for it (run last) sat idle at the end.
        _warmup = subprocess.Popen([sys.executable, "-m", "tests.numba_warmup"],
                                   cwd=ROOT, pass_fds=(handle.fileno(),),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        handle.close()


def pytest_unconfigure(config: pytest.Config) -> None:
    if _warmup is not None and _warmup.poll() is None:  # a short session: not needed
        _warmup.kill()
        _warmup.wait()


def _wait_for_kernel() -> None:
    """Until nobody compiles the kernel into its cache (the tests then load it from there;
    should the warm-up have failed, they compile it themselves)."""
    global _kernel_ready
    if _kernel_ready:
        return
    with _kernel_lock().open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_SH)
        fcntl.flock(handle, fcntl.LOCK_UN)
    _kernel_ready = True


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """A test of :data:`KERNEL_USERS` waits for the compiled kernels before pytest-timeout's
    clock starts (its wrapper is inside this one): on a fresh clone beside another job the
    warm-up alone took over the 300 s the first such test is allowed."""
    if item.path.name in KERNEL_USERS:
        _wait_for_kernel()
    yield
