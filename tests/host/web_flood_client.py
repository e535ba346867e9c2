"""A flood of HTTP requests on a yard server's pages, run as its own process by the web
tests (so its work takes none of the server process's time):
``python web_flood_client.py BASE THREADS PATH... [-- THREADS PATH...]...``.

For each group, THREADS threads ask the group's PATHs in turn (each thread from its own
offset), one request at a time on a new connection, until standard input is closed. It
prints ``flooding`` once every thread has had an answer, and at the end one JSON line:
requests answered per HTTP status (0: no answer). Standard library only (starts fast).
"""

from __future__ import annotations

import http.client
import json
import sys
import threading
from collections import Counter
from urllib.parse import urlsplit


def groups(args: list[str]) -> list[tuple[int, list[str]]]:
    """``THREADS PATH... [-- THREADS PATH...]`` as (threads, paths) pairs."""
    out, current = [], []
    for arg in [*args, "--"]:
        if arg != "--":
            current.append(arg)
        elif current:
            out.append((int(current[0]), current[1:]))
            current = []
    return out


def main() -> None:
    address = urlsplit(sys.argv[1])
    host = address.hostname or "127.0.0.1"
    work = [(paths, n * len(paths) // threads)
            for threads, paths in groups(sys.argv[2:]) for n in range(threads)]
    stop = threading.Event()
    counts: Counter[int] = Counter()
    lock = threading.Lock()
    answered = threading.Barrier(len(work) + 1)

    def flood(paths: list[str], offset: int) -> None:
        first = True
        i = offset
        while not stop.is_set():
            path = paths[i % len(paths)]
            i += 1
            conn = http.client.HTTPConnection(host, address.port, timeout=60)
            try:
                conn.request("GET", path)
                response = conn.getresponse()
                response.read()
                status = response.status
            except OSError:
                status = 0
            finally:
                conn.close()
            with lock:
                counts[status] += 1
            if first:
                first = False
                answered.wait()

    workers = [threading.Thread(target=flood, args=item, daemon=True) for item in work]
    for worker in workers:
        worker.start()
    answered.wait()
    print("flooding", flush=True)
    sys.stdin.read()  # until the test closes it
    stop.set()
    for worker in workers:
        worker.join()
    print(json.dumps({str(k): v for k, v in sorted(counts.items())}), flush=True)


if __name__ == "__main__":
    main()
