"""Names by a standard (protocol/names.py): PRECIS forms, TS #39 look-alikes, reserved
prefixes. The look-alikes of issue 40 are listed once here; the server's and the
database's tests refuse each of them too."""

from __future__ import annotations

import pytest

from protocol import ErrorCode
from protocol.names import (
    BadName,
    check_bot_name,
    enforce,
    enforce_person,
    look_alike,
    name_keys,
    reserved_prefix,
    skeleton,
)

LOOK_ALIKES = [
    ("rаndom", "random"),        # Cyrillic а
    ("grеedy", "greedy"),        # Cyrillic е
    ("random ", "random"),       # a trailing space
    (" random", "random"),       # a leading space
    ("random⠀", "random"),       # U+2800 BRAILLE PATTERN BLANK
    ("randomㅤ", "random"),      # U+3164 HANGUL FILLER
    ("ｒａｎｄｏｍ", "random"),  # fullwidth letters
    ("Random", "random"),        # case
    ("Human:alice", "human:"),
    ("HUMAN:alice", "human:"),
    ("human：alice", "human:"),  # U+FF1A FULLWIDTH COLON
    ("human :alice", "human:"),
]
"""Names refused as bot names while ``random`` and ``greedy`` are taken (house bots,
accounts, connected bots), and the reserved prefix of people's names they look like."""

TAKEN = ("random", "greedy")


@pytest.mark.parametrize(("name", "like"), LOOK_ALIKES)
def test_every_look_alike_is_refused_saying_what_it_looks_like(name: str, like: str) -> None:
    with pytest.raises(BadName) as caught:
        check_bot_name(name, TAKEN)
    error = caught.value
    assert error.like == like
    assert f"looks like {like!r}" in str(error) or f"starts with {like!r}" in str(error)
    expected = ErrorCode.BAD_VALUE if like.endswith(":") else ErrorCode.NAME_TAKEN
    assert error.code is expected


def test_names_that_only_share_letters_are_free() -> None:
    for name in ("random2", "randomer", "greedy-bot", "mcts:iterations=200", "humane",
                 "human", "guesthouse", "Ünïcode", "探偵"):
        assert check_bot_name(name, TAKEN) == name
    assert look_alike("random", ["random"]) is None  # the same name is no look-alike


def test_the_keys_fold_case_width_blanks_and_confusable_letters() -> None:
    for name, like in LOOK_ALIKES:
        if like == "random":
            assert look_alike(name, ["random"]) == "random"
    for a, b in [("b0t", "bot"), ("BOT", "bot"), ("bοt", "bot"),  # Greek ο
                 ("l1", "Il"), ("Il", "il"), ("rn", "m")]:
        assert look_alike(a, [b]) == b, (a, b)
    assert name_keys("random") == ("randorn", "randorn")
    assert skeleton("m") == "rn"  # the standard's own prototype


def test_reserved_prefixes_of_people_and_guests() -> None:
    assert reserved_prefix("guest:x") == "guest:" and reserved_prefix("GUEST：x") == "guest:"
    assert reserved_prefix("humans") is None


@pytest.mark.parametrize(("name", "why"), [
    ("", "must not be empty"), ("x" * 65, "longer than 64"),
    ("a b", "a space"), ("a\u200bb", "invisible"), ("a⠀", "a symbol"),
    ("ǅ", "compatibility character"), ("ｘ", "write it 'x'"),
])
def test_a_name_that_is_not_in_precis_form_says_why(name: str, why: str) -> None:
    with pytest.raises(BadName) as caught:
        enforce(name)
    assert caught.value.code is ErrorCode.BAD_VALUE and why in str(caught.value)


def test_a_persons_name_fits_its_prefix_in_64_characters() -> None:
    assert enforce_person("a" * 58) == "a" * 58
    with pytest.raises(BadName, match="at most 58"):
        enforce_person("a" * 59)
