"""Keys that are not text (`? [a, b]`, `1:`, `true:`), each reported at its own line.

The fast parser reads such a key as a tuple, a number or a boolean; the schema cannot name it
and its path leads nowhere, so it was reported at the start of the item or the file. One pass
over PyYAML's events finds each key where it is written. It runs only when the schema met a
key that is not text, so a valid file never pays for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import yaml_rs

from reconciler.desired.model import Location
from reconciler.desired.problems import KEPT, Problem, more_problems
from reconciler.desired.source import SourceText

if TYPE_CHECKING:
    import yaml


class NonTextKey(Exception):
    """A mapping of the file has a key that is not text (raised by the schema check)."""


def events_of(source: SourceText) -> Iterator[yaml.Event]:
    """PyYAML's events of a file the fast parser read, to locate what it found; they stop
    quietly where PyYAML refuses the syntax (that was said elsewhere)."""
    import yaml  # here: a valid file never needs PyYAML

    parser = yaml.CSafeLoader(source.text)
    try:
        while (event := parser.get_event()) is not None:
            yield event
    except yaml.YAMLError:
        return
    finally:
        parser.dispose()


def key_problems(source: SourceText) -> list[Problem]:
    """Every key of the file that is not text, at its own line and column."""
    import yaml  # here: a valid file never needs PyYAML

    collections: dict[type[yaml.Event], str] = {
        yaml.SequenceStartEvent: "a sequence",
        yaml.MappingStartEvent: "a mapping",
    }
    problems: list[Problem] = []
    # One frame per open collection: [is a mapping, its next node is a key].
    frames: list[list[bool]] = []

    def node_ended() -> None:
        if frames and frames[-1][0]:
            frames[-1][1] = not frames[-1][1]

    for event in events_of(source):
        if len(problems) > KEPT:  # a hostile file: the rest is not read
            problems[KEPT:] = [more_problems(problems[KEPT].location)]
            break
        at_key = bool(frames) and frames[-1][0] and frames[-1][1]
        kind = collections.get(type(event))
        if kind is not None:
            if at_key:
                what = f"{kind} as a key (a complex key `? ...`)"
                problems.append(_problem(source, event, what, "write a field name"))
            frames.append([isinstance(event, yaml.MappingStartEvent), True])
        elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
            frames.pop()
            node_ended()
        elif isinstance(event, yaml.ScalarEvent):
            plain = not event.style  # None or "" (the C parser's plain style)
            if at_key and plain and isinstance(_read(event.value), _NOT_TEXT):
                shown = event.value or "an empty key"
                what = f"the key {shown} is not text"
                problems.append(_problem(source, event, what, "quote it"))
            node_ended()
        elif isinstance(event, yaml.AliasEvent):
            node_ended()
    return problems


#: What a plain scalar reads as when it is not text (`version:` alone reads as a mapping: it is
#: the text of a key that ends with a colon, not a mapping).
_NOT_TEXT = (bool, int, float, type(None))


def _read(text: str) -> object:
    """The value of a plain scalar as the fast parser reads it (YAML 1.2: `NO` stays text)."""
    try:
        return yaml_rs.loads(text) if text else None
    except yaml_rs.YAMLDecodeError:
        return text


def _problem(source: SourceText, event: yaml.Event, what: str, advice: str) -> Problem:
    mark = event.start_mark
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    message = f"{what}: every key of a desired-state file is a field name (text); {advice}"
    return Problem(Location(source.name, line, column), message)
