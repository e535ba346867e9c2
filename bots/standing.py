"""A bot's standing on a remote ladder server, from its read-only HTTP API
(``yard standing``, ``yard-bot standing``): rating with its uncertainty, rank, games by
role, forfeits by cause, pause state and recent games with their replay links.

Only the standard library (``urllib``): the slim client ``yard-client`` has it too. It reads
``/api/ladder`` (the bot's row on each ladder) and ``/api/ladder/RULES/bots/NAME`` (its
games); both are in docs/protocol.md's HTTP table, with JSON Schemas in
``protocol/schema/http/``.

>>> web_base("ws://127.0.0.1:8765")
'http://127.0.0.1:8765'
>>> web_base("wss://yard.example.org/")
'https://yard.example.org'
>>> web_base("yard.example.org:8765")
'http://yard.example.org:8765'
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

from game.errors import YardError

RECENT = 10
"""Recent games shown by default."""

_SCHEMES = {"ws": "http", "wss": "https", "http": "http", "https": "https"}


class StandingError(YardError):
    """The server cannot be reached, answers with an error, or has no such bot or ladder."""


def web_base(url: str) -> str:
    """The HTTP address of the server at ``url`` (its ``ws://`` or ``http://`` address, or
    ``HOST:PORT``), without a trailing slash."""
    text = url.strip().rstrip("/")
    scheme, sep, rest = text.partition("://")
    if not sep:
        return f"http://{text}"
    web = _SCHEMES.get(scheme.lower())
    if web is None:
        raise StandingError(f"bad server URL {url!r}: use ws://, wss://, http:// or https://")
    return f"{web}://{rest}"


def get_json(url: str, timeout: float = 10.0) -> Any:
    """The JSON that ``GET url`` answers; :class:`StandingError` with the server's own
    message for an error answer, or the reason it cannot be reached."""
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return json.load(reply)
    except urllib.error.HTTPError as exc:
        raise StandingError(f"{url}: HTTP {exc.code}: {_error_text(exc)}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise StandingError(f"cannot reach {url}: {reason}") from None
    except ValueError as exc:
        raise StandingError(f"{url} did not answer JSON: {exc}") from None


def _error_text(exc: urllib.error.HTTPError) -> str:
    """The message of a yard error answer (``{"error": {"code", "message"}}``), else the
    HTTP reason."""
    try:
        body = json.loads(exc.read())
        return str(body["error"]["message"])
    except Exception:
        return str(exc.reason)


def fetch_standing(url: str, name: str, rules: Sequence[str] = (), recent: int = RECENT,
                   timeout: float = 10.0) -> dict[str, Any]:
    """Bot ``name``'s standing on the server at ``url``: on each ladder of ``rules`` (all
    the ladders it is on when empty), its row of ``/api/ladder`` plus its ``recent`` latest
    games (newest first) from ``/api/ladder/RULES/bots/NAME``, each with its replay
    address. Raises :class:`StandingError` when the bot is on none of them."""
    base = web_base(url)
    ladder = get_json(f"{base}/api/ladder", timeout)
    ladders: dict[str, list[dict[str, Any]]] = ladder.get("ladders") or {}
    wanted = list(rules) or [r for r, rows in sorted(ladders.items())
                             if any(row["name"] == name for row in rows)]
    if not wanted:
        on = ", ".join(sorted(ladders)) or "none"
        raise StandingError(f"bot {name!r} is on no ladder of {base} (ladders: {on})")
    found = []
    for rulesets in wanted:
        rows = ladders.get(rulesets)
        if rows is None:
            on = ", ".join(sorted(ladders)) or "none"
            raise StandingError(f"{base} has no {rulesets!r} ladder (ladders: {on})")
        row = next((r for r in rows if r["name"] == name), None)
        if row is None:
            raise StandingError(f"bot {name!r} is not on the {rulesets} ladder of {base} "
                                "(it has never connected with --ladder there)")
        page = get_json(f"{base}/api/ladder/{_quote(rulesets)}/bots/{_quote(name)}", timeout)
        games = [_game(base, game) for game in reversed(page["history"][-recent:])] \
            if recent > 0 else []
        found.append({"rules": rulesets, "of": len(rows), **row, "recent": games})
    return {"server": base, "name": name, "live": ladder.get("live"), "ladders": found}


def _quote(part: str) -> str:
    return urllib.parse.quote(part, safe="")


def _game(base: str, game: dict[str, Any]) -> dict[str, Any]:
    """One game of a bot page's history, with its result for the bot and its replay."""
    winner, role = game["winner"], game["role"]
    result = "-" if winner is None else "won" if winner == role else "lost"
    return {"game_id": game["game_id"], "at": game["at"], "role": role, "result": result,
            "termination": game["termination"],
            "replay": f"{base}/#/games/{_quote(game['game_id'])}"}


def standing_lines(standing: dict[str, Any]) -> list[str]:
    """:func:`fetch_standing`'s answer as text, a few lines per ladder."""
    live = "live ratings" if standing["live"] else "rebuilt from the stored games"
    lines = [f"{standing['name']} on {standing['server']} ({live})"]
    for row in standing["ladders"]:
        lines.append("")
        lines.append(f"{row['rules']}: rank {row['rank']} of {row['of']}, "
                     f"{_elo(row)}; live rating {row['mu']:.2f} ± {2 * row['sigma']:.2f} "
                     f"(mu ± 2 sigma, {row['games']} games)")
        lines.append(f"  as Mister X: {_record(row['mrx'])}; as the detectives: "
                     f"{_record(row['detectives'])}")
        forfeits = row["forfeits"]
        lines.append("  forfeits: " + (", ".join(f"{cause} {n}" for cause, n
                                                  in sorted(forfeits.items())) or "none"))
        lines.append(f"  status: {_status(row)}")
        if row["recent"]:
            lines.append("  recent games (newest first):")
            lines += [f"    {g['at'][:19].replace('T', ' ')}  {g['role']:<10} "
                      f"{g['result']:<4} {g['termination']:<16} {g['replay']}"
                      for g in row["recent"]]
        else:
            lines.append("  no games yet")
    return lines


def _elo(row: dict[str, Any]) -> str:
    if row["elo"] is None:
        return "Elo not fitted yet (no decided game)"
    ci = row["elo_ci"]
    interval = "" if ci is None else f" (95%: {ci[0]:g} to {ci[1]:g})"
    return f"Elo {row['elo']:g}{interval}"


def _record(record: dict[str, Any]) -> str:
    games, wins = record["games"], record["wins"]
    if not games:
        return "no games"
    return (f"{games} game{'s' * (games != 1)}, {wins} win{'s' * (wins != 1)} "
            f"({100 * wins / games:.0f}%)")


def _status(row: dict[str, Any]) -> str:
    if row["paused"]:
        return str(row["paused"])
    if row["connected"]:
        return "connected, in matchmaking"
    seen = row["last_seen"]
    return "not connected" + ("" if seen is None else f" (last seen {seen[:19]})")


__all__ = ["RECENT", "StandingError", "fetch_standing", "get_json", "standing_lines",
           "web_base"]
