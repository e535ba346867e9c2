"""A raw-protocol test bot for ``yard bot-check`` with switchable faults.

    python raw_bot.py --url URL --name NAME [--no-resume] [--strict] [--slow SECONDS]
                      [--slow-turns N]

--no-resume: after a dropped connection it reconnects as a new session (no resume token);
--strict: it decodes every frame strictly and crashes on a field it does not know;
--slow: it waits this long before every move (with --slow-turns N: before its first N
moves of each game only).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from protocol import decode


def session(args: argparse.Namespace, token: str | None) -> tuple[bool, str | None]:
    """One connection: (the server shut down, the resume token to reconnect with)."""
    moves: dict[str, int] = {}  # your_turns seen per game
    with connect(args.url, proxy=None) as ws:
        ws.send(json.dumps({"type": "hello", "protocol": 1, "name": args.name,
                            "resume": token}))
        try:
            for frame in ws:
                if args.strict:
                    decode(frame)  # raises on unknown fields: the bot dies
                msg = json.loads(frame)
                if msg["type"] == "welcome":
                    token = msg["resume_token"]
                    print(f"connected as {args.name}", flush=True)
                elif msg["type"] == "ping":
                    ws.send(json.dumps({"type": "pong", "nonce": msg.get("nonce")}))
                elif msg["type"] == "your_turn":
                    moves[msg["game"]] = moves.get(msg["game"], 0) + 1
                    if not args.slow_turns or moves[msg["game"]] <= args.slow_turns:
                        time.sleep(args.slow)
                    ws.send(json.dumps({"type": "move", "game": msg["game"],
                                        "turn": msg["turn"],
                                        "move": random.choice(msg["legal"])}))
        except ConnectionClosed as exc:
            if exc.rcvd is not None and exc.rcvd.code == 1001:
                return True, token
    return False, token


def main() -> None:
    """Connect, play, reconnect after a dropped connection (with or without the token)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--no-resume", action="store_true")
    parser.add_argument("--strict", action="store_true")
    parser.add_argument("--slow", type=float, default=0.0)
    parser.add_argument("--slow-turns", type=int, default=0)
    args = parser.parse_args()
    token: str | None = None
    while True:
        try:
            stop, token = session(args, None if args.no_resume else token)
        except OSError:
            sys.exit(1)
        if stop:
            return
        time.sleep(0.1)


if __name__ == "__main__":
    main()
