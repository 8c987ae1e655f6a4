"""Text safety: which characters make a text read otherwise than it holds, and how it is shown.

Text reaches a terminal, a Markdown page and a reviewer's eyes from the file and from the
service. Three kinds of character make it read otherwise than it is, and this module holds the
rules for all three, for every module that checks or shows text:

- **control characters** (Unicode category Cc: C0, DEL, C1): a terminal acts on them
  (`\\x1b[2J` clears the screen), a Markdown page drops them. `CONTROL` is their class,
  `control_problem` refuses them in a file, `escape_controls` shows them as `\\xXX` (a plan's
  free text, `render.base.clean`).
- **format and invisible characters**: bidi overrides and isolates (U+202E, U+2066) reorder the
  text, zero-width spaces and joiners (U+200B, U+200D) print as nothing. `hidden` is the whole
  rule (categories Cc, Cf, Cn, Co, Unicode's default-ignorable code points, a few blank glyphs),
  `disguised` adds white space other than a space (U+00A0, U+2028), `escape_disguised` shows
  them as `\\uXXXX` (a plan's values and reasons), `hidden_text_problem` refuses them in an
  identifying text. Text from outside (a service's answer, `redaction.shown`) is searched in one
  regex pass, `escape_unsafe`, for the controls and the format characters of `BIDI_AND_ZERO_WIDTH`.
- **look-alikes**: a letter of another script, or a styled form, that reads as another
  (`ENG-А01` with a Cyrillic `А`, `ENG-𝟎𝟎1`). `skeleton` is Unicode TS #39's confusable skeleton
  (ICU's), which `identity` and `payee` compare by; `external_id_problem` and
  `mixed_script_problem` refuse such an externalId.

Unicode data: categories and NFKC come from Python's `unicodedata` (Unicode 14.0.0 in Python
3.11); the Default_Ignorable_Code_Point property and the confusables come from the ICU that
PyICU ships (Unicode 16.0 for ICU 77). A character unassigned in Python's data is refused, so
every character kept is one both know. ICU is imported only for text beyond ASCII. This module
imports nothing of the reconciler: every layer, the redaction at the bottom too, uses it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from typing import Any

#: The control characters (Unicode category Cc), as a regex class: C0, DEL and C1.
CONTROL = "\x00-\x1f\x7f-\x9f"
#: The format characters text from outside is searched for in one regex pass: those that
#: reorder the text (the Arabic letter mark, left-to-right and right-to-left marks, embeddings,
#: overrides and isolates), print as nothing (zero-width space, non-joiner and joiner, word
#: joiner, the invisible operators, the byte order mark) or break a line (the line and
#: paragraph separators). Each is `hidden` or `disguised` too.
BIDI_AND_ZERO_WIDTH = "\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"

#: Unicode categories no identifying text may hold: control and format characters (zero-width
#: spaces and joiners, bidi overrides) that print as nothing or reorder the text, unassigned code
#: points (any renderer shows them as it likes) and private-use ones (their look is anyone's).
_HIDDEN = frozenset({"Cc", "Cf", "Cn", "Co"})

#: Code points no Unicode property marks as default-ignorable that print as nothing or as an
#: empty box all the same: the blank Braille pattern, the object replacement character, the
#: Khitan filler and the musical null notehead. Every default-ignorable code point (ICU's
#: Default_Ignorable_Code_Point, the whole property, reserved code points included) is hidden too.
_BLANK_GLYPHS = frozenset("\u2800\ufffc\U00016fe4\U0001d159")
#: Of the hidden characters, those a renderer draws as a blank as wide as a letter: a space
#: to the eye, so one to `identity.description_key` (`January<U+3164>design` is `January design`).
BLANKS = _BLANK_GLYPHS | frozenset("\u115f\u1160\u3164\uffa0")


def hidden(char: str) -> bool:
    """Whether `char` prints as nothing (or reorders the text, or has no agreed look) in a plan."""
    if unicodedata.category(char) in _HIDDEN or char in _BLANK_GLYPHS:
        return True
    return _default_ignorable(char)


def _default_ignorable(char: str) -> bool:
    import icu  # only for non-ASCII text: ASCII holds no default-ignorable code point

    return bool(icu.Char.hasBinaryProperty(char, icu.UProperty.DEFAULT_IGNORABLE_CODE_POINT))


def _odd_space(char: str) -> bool:
    """White space a plan shows as a plain space, or as a line break, but is another character
    (U+00A0, U+3000, U+2028...): the service compares bytes, so it makes another payment."""
    return char.isspace() and char != " " and unicodedata.category(char) != "Cc"


@lru_cache(maxsize=4096)
def disguised(char: str) -> bool:
    """Whether `char` (beyond ASCII) could be taken for another text in a plan: it is `hidden`,
    or white space other than a space."""
    return char.isspace() or hidden(char)


def unicode_escape(char: str) -> str:
    """`char` as `\\uXXXX` (or `\\UXXXXXXXX` beyond the Basic Multilingual Plane)."""
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def escape_disguised(text: str, escape: Callable[[str], str] = unicode_escape) -> str:
    """`text` with every `disguised` character replaced by `escape(char)` (`\\uXXXX`)."""
    if text.isascii():
        return text
    return "".join(char if char.isascii() or not disguised(char) else escape(char) for char in text)


_CONTROLS_BUT_TAB_AND_NEWLINE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape_controls(text: str) -> str:
    """`text` with its control characters but tab and new line shown as `\\xXX`."""
    return _CONTROLS_BUT_TAB_AND_NEWLINE.sub(lambda found: f"\\x{ord(found[0]):02x}", text)


#: What text from outside may not show as it is: the controls, then the bidi and zero-width
#: format characters (`escape_unsafe`); and two or more of them, or of white space, in a row
#: (`UNSAFE_GAPS`: a secret padded out by them is folded before it is looked at).
_UNSAFE = re.compile(f"[{CONTROL}{BIDI_AND_ZERO_WIDTH}]")
UNSAFE_GAPS = re.compile(rf"[\s{CONTROL}{BIDI_AND_ZERO_WIDTH}]{{2,}}")


def escape_unsafe(text: str) -> str:
    """Text from outside with every control and bidi or zero-width character as `\\uXXXX`."""
    return _UNSAFE.sub(lambda found: f"\\u{ord(found[0]):04x}", text)


#: TS #39's prototype of each ASCII character that has one other than itself, as ICU's
#: confusables data gives it (`tests/foundation/test_text_safety.py` checks it against ICU for
#: all of ASCII): an ASCII text's skeleton is its characters' prototypes, so ICU is not asked.
_ASCII_SKELETON = str.maketrans(
    {'"': "''", "%": "\u00ba/\u2080", "0": "O", "1": "l", "I": "l", "`": "'", "m": "rn", "|": "l"}
)


def skeleton(text: str) -> str:
    """TS #39's confusable skeleton of `text` (NFD, each character to its prototype, NFD):
    ICU's implementation of the Unicode confusables data; for ASCII, ICU's prototypes of its
    eight characters that have one (`_ASCII_SKELETON`)."""
    if text.isascii():
        return text.translate(_ASCII_SKELETON)
    return str(_spoof_checker().getSkeleton(0, text))


@lru_cache(maxsize=1)
def _spoof_checker() -> Any:
    import icu

    return icu.SpoofChecker()


_EDGE_SPACE = "has white space at its start or end, which no one sees in a plan"


def hidden_text_problem(text: str) -> str | None:
    """Why this identifying text (an externalId, a payment's or a payrun's description) could
    be mistaken for another in a plan, or None."""
    if text.isascii() and text.isprintable():  # nearly every one: nothing hidden, no odd space
        if text[:1] == " " or text[-1:] == " ":  # the only white space printable ASCII has
            return _EDGE_SPACE
        return None
    if text != text.strip():
        return _EDGE_SPACE
    found = _hidden_characters(text)
    if found:
        return (
            f"holds {found}, which print as nothing, reorder the text or have no agreed look "
            "(control, format, unassigned, private-use or default-ignorable characters)"
        )
    spaces = _odd_spaces(text)
    if spaces:
        return f"holds {spaces}, white space a plan shows as a plain space: write a plain space"
    return None


def external_id_problem(text: str) -> str | None:
    """Why this externalId could be mistaken for another in a plan, or None: what
    `hidden_text_problem` refuses, compatibility forms (full-width, mathematical or circled
    letters and digits: `ENG-𝟎𝟎1` reads as `ENG-001` and would be another worker), and a mix
    of scripts or of digits Unicode TS #39 finds prone to look-alikes (`mixed_script_problem`)."""
    reason = hidden_text_problem(text)
    if reason is not None or text.isascii():
        return reason
    plain = unicodedata.normalize("NFKC", text)
    if plain == unicodedata.normalize("NFC", text):
        return mixed_script_problem(text)
    styled = sorted({char for char in text if unicodedata.normalize("NFKC", char) != char})
    return (
        f"holds {_codes(styled)}, a styled form (full-width, mathematical, circled...) of "
        f"plain characters, so it reads as {plain!r}: write that instead"
    )


def mixed_script_problem(text: str) -> str | None:
    """Why `text` mixes scripts (or digits) as look-alikes do, or None: ICU's check of Unicode
    TS #39's restriction levels, at the moderately restrictive one, which lets Latin go with
    any script but Cyrillic and Greek (`ENG-田中`, `ENG-Müller`, `ИНЖ-001` are kept, `ENG-А01`
    with a Cyrillic `А` is not), and digits of one numbering system only."""
    import icu

    failed = _script_checker().check(text)
    if failed & icu.USpoofChecks.RESTRICTION_LEVEL:
        scripts: dict[str, list[str]] = {}
        for char in dict.fromkeys(text):
            script = icu.Script.getScript(char).getName()
            if script not in ("Common", "Inherited"):
                scripts.setdefault(script, []).append(char)
        first, *others = sorted(scripts, key=lambda name: -len(scripts[name]))
        odd = [char for name in others for char in scripts[name]]
        return (
            f"mixes the {', '.join([first, *others[:-1]])} and {others[-1]} scripts "
            f"({_named(odd)} among "
            f"{first} letters), which Unicode TS #39 refuses in identifiers: a letter that "
            "looks like one of another script makes it read as another id; write it in one "
            "script"
        )
    if failed & icu.USpoofChecks.MIXED_NUMBERS:
        digits = [char for char in dict.fromkeys(text) if unicodedata.category(char) == "Nd"]
        return (
            f"mixes digits of different numbering systems ({_named(digits)}), which Unicode "
            "TS #39 refuses in identifiers: write its digits in one system"
        )
    return None


@lru_cache(maxsize=1)
def _script_checker() -> Any:
    import icu

    checker = icu.SpoofChecker()
    checker.setChecks(icu.USpoofChecks.RESTRICTION_LEVEL | icu.USpoofChecks.MIXED_NUMBERS)
    checker.setRestrictionLevel(icu.URestrictionLevel.MODERATELY_RESTRICTIVE)
    return checker


def _named(chars: list[str]) -> str:
    return ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, '?')}" for c in chars)


def control_problem(text: str, allowed: str = "") -> str | None:
    """Why this text cannot be shown as it is (a control character but `allowed`), or None."""
    if text.isascii() and text.isprintable():
        return None
    found = sorted({c for c in text if unicodedata.category(c) == "Cc" and c not in allowed})
    if not found:
        return None
    return f"holds the control character{'s' if len(found) > 1 else ''} {_codes(found)}"


def _hidden_characters(text: str) -> str | None:
    if text.isascii() and text.isprintable():
        return None
    found = sorted({char for char in text if hidden(char)})
    return _codes(found) if found else None


def _odd_spaces(text: str) -> str | None:
    if text.isascii():
        return None
    found = sorted({char for char in text if _odd_space(char)})
    return _codes(found) if found else None


def _codes(chars: list[str]) -> str:
    return ", ".join(f"U+{ord(char):04X}" for char in chars)
