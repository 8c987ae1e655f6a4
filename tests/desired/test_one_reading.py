"""One file, one reading: every path that reads a value, its text or its location agrees.

The loader reads values with yaml-rs (YAML 1.2) and texts and places with PyYAML's events
(YAML 1.1's line breaks). A generated file, with characters the two could read differently
sprinkled in, goes through each path; whenever the file is accepted, each value, the text it
was read from and the place it is reported at must be one and the same reading.
"""

from __future__ import annotations

from collections.abc import Iterator

import yaml_rs
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from reconciler.desired.characters import character_problem
from reconciler.desired.keys import events_of, key_problems
from reconciler.desired.load import _read_number_texts
from reconciler.desired.parse import UNPARSED, parse, scan
from reconciler.desired.problems import YamlPath
from reconciler.desired.source import SourceText

#: Characters some reader of a YAML file takes for something other readers do not.
TRICKY = [
    "\u2028",
    "\u2029",
    "\x85",
    "\r",
    "\r\n",
    "\t",
    "\ufeff",
    "\x00",
    "\x0b",
    "\x0c",
    "\x1b",
    "\x7f",
    "\x9f",
    "\u00a0",
    "\u200b",
    "\u3000",
    "\ufffe",
    "\U0001f600",
    "\U00010000",
    "\u0301",
    "\n",
    " ",
    "#",
    ":",
    "-",
    "'",
    '"',
    "\\",
    "%",
]
PLAIN = st.sampled_from(
    [
        *("100", "0x10", "1e3", "-5", "+7", ".5", "0o17", "1_000", "true", "NO", "~", "null"),
        *("", "a b", "ENG-1", "ada@example.com", "2026-01-01", "12.30", ".inf", "1:2", "x #y"),
        "é",
    ]
)
DOUBLE_ESCAPES = st.sampled_from(["", "\\L", "\\N", "\\P", "\\x41", "\\u2028", "\\t", "\\\\"])


@st.composite
def scalars(draw: st.DrawFn, indent: int) -> str:
    """One scalar, in any of YAML's styles, as written after `key: ` at `indent`."""
    style = draw(st.sampled_from(["plain", "single", "double", "literal", "folded"]))
    word = draw(PLAIN)
    if style == "plain":
        text = word
    elif style == "single":
        text = "'" + word.replace("'", "''") + "'"
    elif style == "double":
        text = '"' + word.replace("\\", "\\\\").replace('"', '\\"') + draw(DOUBLE_ESCAPES) + '"'
    else:
        marker = "|" if style == "literal" else ">"
        lines = draw(st.lists(PLAIN, min_size=1, max_size=3))
        pad = " " * (indent + 2)
        text = marker + "".join(f"\n{pad}{line}" for line in lines)
    if draw(st.booleans()):
        text += " # " + draw(PLAIN)
    return text


@st.composite
def mappings(draw: st.DrawFn, indent: int = 0, depth: int = 0) -> list[str]:
    """The lines of a block mapping at `indent`, keys unique, values nested up to depth 2."""
    names = draw(
        st.lists(
            st.sampled_from(
                ["version", "policy", "maxPayout", "payruns", "payments", "amount", "a", "b"]
            ),
            min_size=1,
            max_size=4,
            unique=True,
        )
    )
    pad = " " * indent
    lines: list[str] = []
    for name in names:
        kind = draw(st.sampled_from(["scalar", "scalar", "mapping", "list"]))
        if depth >= 2 or kind == "scalar":
            lines.append(f"{pad}{name}: {draw(scalars(indent))}")
        elif kind == "mapping":
            lines.append(f"{pad}{name}:")
            lines += draw(mappings(indent + 2, depth + 1))
        else:
            lines.append(f"{pad}{name}:")
            for _ in range(draw(st.integers(1, 2))):
                item = draw(mappings(indent + 4, depth + 1))
                lines.append(f"{pad}  - {item[0].lstrip()}")
                lines += item[1:]
        if draw(st.booleans()):
            lines.append(f"{pad}# {draw(PLAIN)}")
    return lines


@st.composite
def files(draw: st.DrawFn) -> str:
    """A generated file with a few tricky characters put anywhere in it."""
    text = "\n".join(draw(mappings())) + "\n"
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(TRICKY)) + text[at:]
    return text


def scalar_paths(value: object, path: YamlPath = ()) -> Iterator[tuple[YamlPath, object]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from scalar_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from scalar_paths(item, (*path, index))
    else:
        yield path, value


def same(read: object, value: object) -> bool:
    if read.__class__ is not value.__class__:
        return False
    return read == value or (read != read and value != value)


def written_at(text: str, line: int, column: int) -> str:
    """The file's text from a line and column, lines split the one way the tool counts them."""
    return text.split("\n")[line - 1][column - 1 :]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files())
@example("policy:\n  maxPayout: 1000000 # \u2028  maxPayout: 100\n")
@example("payruns:\n  - amount: 9999 # \x85  amount: 100\n")
@example("a: 1 #\r  a: 2\n")
@example("a: 1\n\ufeffb: 2\n")
@example("%YAML 1.1\n---\na: NO\n")
@example("version: 100\npolicy: |\n  \n")
def test_every_reader_reads_one_file_one_way(text: str) -> None:
    source = SourceText("f.yaml", text)
    refused = character_problem(source)
    if refused is not None:
        # Refused at the very character: the line and column name it.
        place = written_at(text, refused.location.line, refused.location.column)
        first = place[:1]
        assert first in {"\u2028", "\u2029", "\x85", "\r", "\ufeff", "\ufffe", "%"} or (
            first != "" and (ord(first) < 0x20 or 0x7F <= ord(first) <= 0x9F)
        ), (refused, place[:5])
        return
    data, problems = parse(source)
    if data is UNPARSED:
        assert problems
        return
    if not isinstance(data, dict):
        return
    scalars_read = dict(scalar_paths(data))
    wanted = {path[:length] for path in scalars_read for length in range(len(path) + 1)}
    scanned = scan(source, wanted)
    assert scanned.documents <= 1
    for path, value in scalars_read.items():
        marks = scanned.marks.get(path)
        if marks is None:
            # Only past a place PyYAML refuses (yaml-rs takes a lone `:` for a null key):
            # a value it cannot place is never located, nor is an amount read from its text.
            assert scanned.problems, path
            continue
        assert marks.text is not None
        if isinstance(value, str):
            # One known difference: a block scalar of blank lines only (`key: |` then a line of
            # spaces) is "" to PyYAML and "\n" to yaml-rs; blank either way, and every text
            # field refuses a blank value, so no reading of it is ever used.
            blank = not marks.text.strip() and not value.strip()
            assert marks.text == value or blank, (path, marks.text, value)
        else:  # a number, a boolean or null: its text reads, as YAML 1.2, as that value
            assert same(yaml_rs.loads(marks.text) if marks.text else None, value), (
                path,
                marks.text,
                value,
            )
        line, column = marks.value
        place = written_at(text, line, column)
        if marks.text and not marks.escaped and isinstance(value, str) is False:
            assert place.startswith(marks.text), (path, place[:20], marks.text)
        elif marks.text:
            assert place[:1] in {"'", '"', "|", ">", marks.text[0]}, (path, place[:20], marks.text)
    # An amount's text, read from the events, is the value the values' parser read.
    assert _read_number_texts(source, data) == []
    if scanned.problems:
        return
    # Every key as written is text, and the keys pass sees the same keys as the values parser.
    assert not key_problems(source)
    keys_seen = sum(1 for event in events_of(source) if type(event).__name__ == "MappingStartEvent")
    assert keys_seen == sum(1 for value in _collections(data) if isinstance(value, dict))


def _collections(value: object) -> Iterator[object]:
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from _collections(item)
    elif isinstance(value, list):
        for item in value:
            yield from _collections(item)
