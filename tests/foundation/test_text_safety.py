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


def test_the_ascii_skeleton_table_is_icus_for_every_ascii_character() -> None:
    """ASCII text skips ICU (`_ASCII_SKELETON`): each of the 128 characters, alone and in one
    text, has the skeleton ICU's confusables data gives it."""
    import icu

    checker = icu.SpoofChecker()
    every = [chr(code) for code in range(128)]
    table = {char: char.translate(text_safety._ASCII_SKELETON) for char in every}
    assert table == {char: str(checker.getSkeleton(0, char)) for char in every}
    whole = "".join(every) + ' 2025-01 pay 10 | Iml1`"%'
    assert text_safety.skeleton(whole) == str(checker.getSkeleton(0, whole))


def test_an_ascii_skeleton_loads_no_icu() -> None:
    """A file of ASCII descriptions compares them without loading ICU (about 20 ms to load,
    and a call a description)."""
    import subprocess

    code = (
        "import sys; from reconciler import text_safety; "
        "print(text_safety.skeleton('2025-01 pay m1'), 'icu' in sys.modules)"
    )
    command = [sys.executable, "-c", code]
    answer = subprocess.run(command, capture_output=True, text=True, check=True)
    assert answer.stdout.split() == ["2O25-Ol", "pay", "rnl", "False"]
