"""`reconciler.text_safety`, the one module of the rules for control, format and look-alike
characters: the class text from outside is searched with is part of the whole rule, and each
kind is named as the file's checks and the plans' escapes name it."""

from __future__ import annotations

import re
import sys
import unicodedata

import pytest

from reconciler import text_safety


def _members(regex_class: str) -> list[str]:
    pattern = re.compile(f"[{regex_class}]")
    return [chr(code) for code in range(sys.maxunicode + 1) if pattern.match(chr(code))]


def test_every_character_text_from_outside_escapes_is_disguised_to_a_plan() -> None:
    """`escape_unsafe` (a service's answer) looks for a part of what `disguised` (a plan's
    values and reasons) escapes, never for another rule."""
    fast = _members(text_safety.CONTROL + text_safety.BIDI_AND_ZERO_WIDTH)
    assert len(fast) == 65 + 30
    assert [char for char in fast if not text_safety.disguised(char)] == []


def test_the_control_characters_are_category_cc() -> None:
    every = (chr(code) for code in range(sys.maxunicode + 1))
    assert _members(text_safety.CONTROL) == [c for c in every if unicodedata.category(c) == "Cc"]


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("a\x1b[2Jb\tc\n", "a\\x1b[2Jb\tc\n"),
        ("\x7f\x85", "\\x7f\\x85"),
    ],
)
def test_controls_but_tab_and_new_line_show_as_hex_escapes(text: str, escaped: str) -> None:
    assert text_safety.escape_controls(text) == escaped


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("name \u202eevil", "name \\u202eevil"),
        ("Jan\u200buary\u00a0x", "Jan\\u200buary\\u00a0x"),
        ("tag\U000e0041", "tag\\U000e0041"),
        ("René ↔ 田中", "René ↔ 田中"),
    ],
)
def test_disguised_characters_show_as_unicode_escapes(text: str, escaped: str) -> None:
    assert text_safety.escape_disguised(text) == escaped


def test_text_from_outside_shows_controls_and_bidi_as_escapes() -> None:
    assert text_safety.escape_unsafe("\x1b[31m\u202eok\u2066") == "\\u001b[31m\\u202eok\\u2066"


def test_the_skeleton_joins_look_alikes() -> None:
    assert text_safety.skeleton("АВС-1") == text_safety.skeleton("ABC-1")
    assert text_safety.mixed_script_problem("ENG-\u041001") is not None
    assert text_safety.external_id_problem("ENG-\U0001d7ce\U0001d7ce1") is not None
