"""A CPU hog: keeps cores busy so that the test suite can be run on a loaded machine.

A test that passes only on an idle machine is a defect (it races a clock or another
process instead of waiting on the condition it needs). Run the suite beside this hog to
find such tests::

    python tests/stress.py -- .venv/bin/pytest              # the README's test command
    python tests/stress.py -- .venv/bin/pytest -n 0 tests/server/test_server.py
    python tests/stress.py --cores 1 --seconds 60           # only the hog, for a minute

With a command after ``--`` the hog starts, the command runs beside it, the hog stops
when the command ends, and the command's wall time and exit status are printed on
stderr; the hog's exit status is the command's. Without a command the hog runs for
``--seconds`` (default: until interrupted with Ctrl-C or SIGTERM).

Each busy process spins in pure Python at the normal priority, as another job on the
machine would. ``--cores`` (default: every core, ``os.cpu_count()``) says how many.
Plain standard library: it runs with any Python 3.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from types import FrameType


def spin() -> None:
    """Burn one core until killed."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops it (SIGTERM)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    x = 0
    while True:
        x = (x * 1_103_515_245 + 12_345) & 0x7FFF_FFFF


def start_hog(cores: int) -> list[multiprocessing.Process]:
    """``cores`` busy processes (daemons: they die with this one)."""
    hogs = [multiprocessing.Process(target=spin, name=f"hog-{i}", daemon=True)
            for i in range(cores)]
    for hog in hogs:
        hog.start()
    return hogs


def stop_hog(hogs: list[multiprocessing.Process]) -> None:
    for hog in hogs:
        hog.terminate()
    for hog in hogs:
        hog.join(5)


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """The hog's options, and the command after ``--`` (empty without one)."""
    command: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, command = argv[:at], argv[at + 1:]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1,
                        help="busy processes to run (default: one per core, %(default)s)")
    parser.add_argument("--seconds", type=float, default=None,
                        help="stop after this long (default: when the command ends, "
                             "else when interrupted)")
    args = parser.parse_args(argv)
    if args.cores < 1:
        parser.error("--cores must be at least 1")
    return args, command


def main(argv: list[str] | None = None) -> int:
    args, command = parse(sys.argv[1:] if argv is None else argv)
    stopping = False

    def on_term(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once is enough
        raise KeyboardInterrupt

    hogs = start_hog(args.cores)
    signal.signal(signal.SIGTERM, on_term)
    print(f"stress: {args.cores} busy process(es) on {os.cpu_count()} core(s)",
          file=sys.stderr, flush=True)
    started = time.monotonic()
    code = 0
    proc: subprocess.Popen[bytes] | None = None
    try:
        if command:
            proc = subprocess.Popen(command)
            try:
                code = proc.wait(timeout=args.seconds)
            except subprocess.TimeoutExpired:
                print(f"stress: {args.seconds:g} s are up; stopping the command",
                      file=sys.stderr)
                proc.terminate()
                code = proc.wait()
        elif args.seconds is not None:
            time.sleep(args.seconds)  # the hog's lifetime: nothing to wait on
        else:
            signal.pause()
    except KeyboardInterrupt:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM if stopping else signal.SIGINT)
            code = proc.wait()
        else:
            code = 130
    finally:
        stop_hog(hogs)
    took = time.monotonic() - started
    if code < 0:  # killed by a signal: the shell's convention
        code = 128 - code
    if command:
        print(f"stress: {' '.join(command)}: exit {code}, {took:.1f} s wall "
              f"({int(took // 60)} min {int(took % 60):02d} s) beside {args.cores} busy "
              "process(es)", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
