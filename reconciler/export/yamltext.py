"""Strings as YAML scalars that every parser reads back as the same string.

A desired-state file is read by a YAML 1.2 parser (yaml-rs) and located by a YAML 1.1 one
(PyYAML), so a value is written plain only when both can only see it as that string: it starts
with a letter, uses a small set of characters that mean nothing to YAML inside a scalar, and is
not a word that either version resolves to a boolean or null (`no`, `On`, `NULL`, ...).
Everything else is double-quoted, with every character that is not plainly printable escaped,
so a value can never break out of its line, into a comment or into the next key.
"""

from __future__ import annotations

import re

# Letters first (no number, sign, `.inf`, indicator or timestamp can start so), then characters
# that are inert inside a plain scalar; `:` and `#` are left out because `: ` and ` #` are not.
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9 ._@+/()'-]*")
# Words YAML 1.1 (PyYAML) or 1.2 (core schema) resolve to a boolean or null, compared in lower
# case (a superset of what either accepts, which only costs a pair of quotes).
_RESERVED = frozenset({"y", "yes", "n", "no", "true", "false", "on", "off", "null"})
_SHORT_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\0": "\\0",
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
    "\x1b": "\\e",
}


def scalar(value: str) -> str:
    """`value` as a YAML scalar: plain when that is unambiguous, else double-quoted."""
    if _PLAIN.fullmatch(value) and not value.endswith(" ") and value.lower() not in _RESERVED:
        return value
    return quoted(value)


def quoted(value: str) -> str:
    """`value` as a double-quoted YAML scalar, escaping every non-printable character."""
    return '"' + "".join(_escape(char) for char in value) + '"'


def _escape(char: str) -> str:
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    if _printable(char):
        return char
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


#: The bidirectional controls: printed raw they reorder what an editor, a terminal or a diff
#: shows around them ("Trojan Source"), so they are written as escapes.
_BIDI_CONTROLS = frozenset({0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)})


def _printable(char: str) -> bool:
    """YAML's printable set, minus the characters a parser may take as a line break or a BOM,
    and the bidirectional controls."""
    code = ord(char)
    return (
        (
            0x20 <= code <= 0x7E
            or 0xA0 <= code <= 0xD7FF
            or (0xE000 <= code <= 0xFFFD and code != 0xFEFF)
            or 0x10000 <= code <= 0x10FFFF
        )
        and code not in (0x2028, 0x2029)
        and code not in _BIDI_CONTROLS
    )
