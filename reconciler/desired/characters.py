"""What a desired-state file may not hold because its readers would not read it the same way.

A file is read by two YAML parsers (yaml-rs for values, PyYAML's events for where they were
written and for an amount's text) and by people, in an editor or a pull request's diff. Each
character below is read one way by one of them and another way by another, so the file is
refused, at the character's line and column, before either parser reads it:

- U+0085, U+2028, U+2029: line breaks in YAML 1.1 (PyYAML), not in YAML 1.2 (yaml-rs), so a
  comment holding one hides a line from one reader (`maxPayout: 100` read by one, not the other);
- a carriage return not followed by a line feed: a line break to both parsers, but a terminal
  draws the next line over the previous one, so a diff shows other text than the parsers read;
- U+FEFF (a byte order mark) after the start: part of a key to yaml-rs, an error to libyaml;
- control characters and non-characters, which YAML forbids (and yaml-rs accepts);
- any YAML directive other than `%YAML 1.2` (yaml-rs ignores `%YAML 1.1`, under which `NO` is
  false, and `%YAML 2.0`; PyYAML refuses the latter).

The usual file is ASCII without a carriage return or a `%` at a line's start, and costs one
pass in C over its bytes.
"""

from __future__ import annotations

import re

from reconciler.desired.model import Location
from reconciler.desired.problems import Problem
from reconciler.desired.source import SourceText

_ALLOWED_ASCII = bytes(range(0x20, 0x7F)) + b"\t\n\r"
#: Characters outside YAML's printable set (control characters, non-characters); U+0085 is
#: among the line breaks below.
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")
_BREAKS = {"\x85": "NEXT LINE", "\u2028": "LINE SEPARATOR", "\u2029": "PARAGRAPH SEPARATOR"}
_LONE_CR = re.compile("\r(?!\n)")
_DIRECTIVE = re.compile(r"%([^\s#]*)[ \t]*([^\n#]*?)[ \t]*(?:#[^\n]*)?(?:\n|$)")


def character_problem(source: SourceText) -> Problem | None:
    """The first character of the file its readers could read differently, or None."""
    text = source.text
    found: list[int] = []
    # The usual file is ASCII: deleting its allowed bytes in C is ten times faster than a
    # regex; a single character is found as fast, where a class of them or an alternation
    # would slow the regex down five times.
    if not text.isascii() or text.encode("ascii").translate(None, _ALLOWED_ASCII):
        if forbidden := _FORBIDDEN.search(text):
            found.append(forbidden.start())
        found += [offset for c in (*_BREAKS, "\ufeff") if (offset := text.find(c)) >= 0]
    if "\r" in text and (lone := _LONE_CR.search(text)):
        found.append(lone.start())
    if found:
        offset = min(found)
        return Problem(_location(source, offset), _message(text[offset]))
    return _directive_problem(source) if "%" in text else None


def _message(character: str) -> str:
    code = f"U+{ord(character):04X}"
    if character in _BREAKS:
        return (
            f"the character {code} ({_BREAKS[character]}) is a line break to some YAML "
            "readers (YAML 1.1) and not to others (YAML 1.2), so the file would read two "
            "ways: remove it"
        )
    if character == "\r":
        return (
            "a carriage return (\\r) not followed by a line feed: a diff shows the next line "
            "written over this one; end lines with \\n (or \\r\\n)"
        )
    if character == "\ufeff":
        return (
            "the character U+FEFF (a byte order mark) is allowed only as the file's first "
            "character: remove it"
        )
    return f"invalid YAML: the character {code} is not allowed in a YAML file"


def _location(source: SourceText, offset: int) -> Location:
    """Line and column of `offset`, lines ended by \\n (the only breaks left before it)."""
    text = source.text
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return Location(source.name, line, column)


def _directive_problem(source: SourceText) -> Problem | None:
    """The first line that starts with `%` and is not `%YAML 1.2` (a directive, or a line
    YAML would refuse anyway: a document's text cannot start a line with `%`)."""
    text = source.text
    offset = text.find("%")
    while offset >= 0:
        if offset == 0 or text[offset - 1] == "\n":
            line = _DIRECTIVE.match(text, offset)
            name, value = (line[1], line[2]) if line else ("", "")
            if name != "YAML" or value != "1.2":
                written = text[offset : text.find("\n", offset) % (len(text) + 1)].strip()
                return Problem(_location(source, offset), _directive_message(name, written))
        offset = text.find("%", offset + 1)
    return None


def _directive_message(name: str, written: str) -> str:
    shown = written if len(written) <= 40 else written[:37] + "..."
    if name == "YAML":
        return (
            f"the directive {shown!r} is not supported: a desired-state file is read as "
            "YAML 1.2; remove the line (or write %YAML 1.2)"
        )
    return (
        f"the directive {shown!r} is not supported: a desired-state file holds no directive "
        "other than %YAML 1.2; remove the line"
    )
