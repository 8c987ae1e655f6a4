"""YAML to values, and values back to the line and column where they were written.

Two parsers, each for what it does best. yaml-rs (Rust) turns a file into Python values about
fifteen times faster than PyYAML and refuses duplicate keys; it follows YAML 1.2, so `NO` stays
the string Norway's code is. PyYAML's C event parser is only run when something is wrong: its
events carry marks, so one pass over them locates syntax errors, duplicate keys, aliases and
any value a later check refused.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import yaml_rs

if TYPE_CHECKING:
    import yaml

from reconciler.desired.characters import character_problem
from reconciler.desired.keys import events_of, key_problems
from reconciler.desired.model import Location
from reconciler.desired.nodes import (
    MAX_DEPTH,
    NodeBudget,
    depth,
    may_be_deep,
    node_past,
    nodes_at_most,
    too_many_message,
)
from reconciler.desired.problems import KEPT, Problem, YamlPath, more_problems
from reconciler.desired.source import SourceText
from reconciler.words import plural

#: Aliases are refused (no replay at all), so an alias bomb costs nothing.
_NO_ALIASES = yaml_rs.AliasLimits(
    max_total_replayed_events=0, max_replay_stack_depth=0, max_alias_expansions_per_anchor=0
)
_LINE_COLUMN = re.compile(r"line (\d+), column (\d+)")
_NODE_EVENTS: frozenset[type] = frozenset()  # PyYAML's, once `_load_pyyaml` ran
_END_EVENTS: frozenset[type] = frozenset()


def _load_pyyaml() -> None:
    """Import PyYAML, as the module-level `yaml`, before the first pass over its events.

    A valid file never needs it, and its import is a tenth of `validate`'s start-up.
    """
    global _NODE_EVENTS, _END_EVENTS
    if _NODE_EVENTS:
        return
    module = importlib.import_module("yaml")
    globals()["yaml"] = module
    _END_EVENTS = frozenset({module.MappingEndEvent, module.SequenceEndEvent})
    _NODE_EVENTS = frozenset(
        {module.ScalarEvent, module.AliasEvent, module.MappingStartEvent, module.SequenceStartEvent}
    )


class Unparsed:
    """Marks a file that could not be read as YAML (its problems say why)."""


UNPARSED = Unparsed()


def parse(source: SourceText, budget: NodeBudget | None = None) -> tuple[object, list[Problem]]:
    """The values of a file, or `UNPARSED` and the located problems that prevented them.

    `budget` is what the files of one run may still hold (YAML nodes); a file alone has
    `nodes.MAX_NODES`. A file that would pass it is refused before its values are built.
    """
    refused = character_problem(source)
    if refused is not None:  # the readers disagree on these: refuse them before either reads
        return UNPARSED, [refused]
    budget = NodeBudget() if budget is None else budget
    bound = source.nodes_at_most
    if bound is None:
        bound = nodes_at_most(source.text.encode())
    exact = not budget.fits(bound)
    if exact:  # rare: a file of more nodes than the bound of a usual one
        _load_pyyaml()
        try:
            bound, past = node_past(source.text, budget.left)
        except yaml.MarkedYAMLError as error:
            return UNPARSED, [_syntax_problem(source, error)]
        except yaml.reader.ReaderError as error:
            return UNPARSED, [_reader_problem(source, error)]
        if past is not None:
            return UNPARSED, [_problem(source, past, too_many_message(budget.limit))]
    try:
        data = yaml_rs.loads(
            source.text,
            parse_datetime=False,  # dates stay text: the schema has no date fields
            alias_limits=_NO_ALIASES,
            duplicate_key_policy=yaml_rs.DuplicateKeyPolicy.Error,
        )
    except yaml_rs.YAMLDecodeError as error:
        if "recursion limit" in str(error):  # PyYAML would take minutes over such a file
            return UNPARSED, [_too_deep(source, error)]
        problems = _tab_problems(source) or scan(source).problems
        if not problems and "duplicate mapping key" in str(error):
            # Keys PyYAML keeps apart and yaml-rs finds equal (`1:` and `true:`): each is
            # not text, and is said as written, at its line.
            problems = key_problems(source)
        return UNPARSED, problems or [_fast_parser_problem(source, error)]
    if data is None:
        message = "the file is empty: expected a mapping with keys such as version and workers"
        return UNPARSED, [Problem(Location(source.name, 1, 1), message)]
    if isinstance(data, list):
        # yaml-rs answers a list for several documents too: only the marks tell them apart.
        scanned = scan(source)
        if scanned.documents > 1:
            return UNPARSED, scanned.problems
    if may_be_deep(source.text) and depth(data) > MAX_DEPTH:
        message = (
            f"values are nested more than {MAX_DEPTH} levels deep; a desired-state file needs 4"
        )
        return UNPARSED, [Problem(Location(source.name, 1, 1), message)]
    if "!" in source.text and (tags := _tag_problems(source)):
        return UNPARSED, tags
    budget.charge(data, bound, exact=exact)
    return data, []


def _too_deep(source: SourceText, error: yaml_rs.YAMLDecodeError) -> Problem:
    found = _LINE_COLUMN.search(str(error))
    where = (int(found[1]), int(found[2])) if found else (1, 1)
    return _problem(
        source,
        where,
        "invalid YAML: values are nested too deeply (a desired-state file needs 4 levels)",
    )


def _tag_problems(source: SourceText) -> list[Problem]:
    """Explicit YAML tags (`!!binary`, `!!int "1"`, `!custom`): refused, each at its place.

    A desired-state file holds text, numbers and booleans as written; a tag turns them into
    something else (bytes, a number from a string), which the two parsers read differently.
    """
    _load_pyyaml()
    problems: list[Problem] = []
    for event in events_of(source):
        tag = getattr(event, "tag", None)
        implicit = isinstance(event, yaml.ScalarEvent) and event.implicit[0]
        if isinstance(tag, str) and not implicit and isinstance(event, tuple(_NODE_EVENTS)):
            message = (
                f"the YAML tag {_shown_tag(tag)} is not allowed: write the value itself "
                "(text, a number or true/false)"
            )
            problems.append(_problem(source, _mark(event), message))
            if len(problems) > KEPT:  # a hostile file: the rest is not read
                return [*problems[:KEPT], more_problems(problems[KEPT].location)]
    return problems


def _shown_tag(tag: str) -> str:
    return (
        "!!" + tag.removeprefix("tag:yaml.org,2002:")
        if tag.startswith("tag:yaml.org,2002:")
        else tag
    )


@dataclass(frozen=True, slots=True)
class Marks:
    """Where a node was written: its key (for a mapping value) and the value itself, and for
    a scalar the text it was written with (a number's digits, base and exponent as typed)."""

    key: tuple[int, int] | None
    value: tuple[int, int]
    text: str | None = None
    escaped: bool = False  # a double-quoted scalar written with `\` escapes: not its own text


@dataclass(slots=True)
class Scan:
    """What one pass over a file's events found."""

    problems: list[Problem] = field(default_factory=list)
    marks: dict[YamlPath, Marks] = field(default_factory=dict)
    aliases: list[tuple[int, int]] = field(default_factory=list)
    documents: int = 0


@dataclass(slots=True)
class _Frame:
    path: YamlPath | None  # None inside a complex key, whose contents are never located
    is_mapping: bool
    expecting_key: bool = True
    key: str | None = None
    key_mark: tuple[int, int] | None = None
    index: int = 0
    keys: dict[str, tuple[int, int]] = field(default_factory=dict)


def scan(source: SourceText, wanted: Collection[YamlPath] = (), *, everything: bool = True) -> Scan:
    """One pass over the marked events: syntax errors, duplicate keys, aliases, and the
    marks of the `wanted` paths (pass every prefix too, so a missing key falls back).

    With `everything` false (for a file the fast parser read, so free of duplicates and
    aliases), the contents of any node that is no ancestor of a wanted path are skipped.
    """
    _load_pyyaml()
    result = Scan()
    # Only the contents of a wanted path's ancestors are followed: the rest is never located.
    parents = {path[:-1] for path in wanted if path}
    stack: list[_Frame] = []
    skipped_depth = 0  # > 0 while inside a node whose contents are of no interest
    parser = yaml.CSafeLoader(source.text)
    try:
        while (event := parser.get_event()) is not None:
            kind = type(event)
            if skipped_depth:
                if kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                    skipped_depth += 1
                elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                    skipped_depth -= 1
                continue
            if kind in _NODE_EVENTS:
                _node(source, event, stack, wanted, parents, result)
                if len(result.problems) > KEPT:  # duplicate keys: the rest is not read
                    result.problems[KEPT:] = [more_problems(result.problems[KEPT].location)]
                    break
                if not everything and len(result.marks) == len(wanted):
                    break  # every wanted path is located: the rest of the file can wait
                if not everything and stack and stack[-1].path is None:
                    stack.pop()
                    skipped_depth = 1
            elif kind in _END_EVENTS:
                stack.pop()
            elif kind is yaml.DocumentStartEvent:
                result.documents += 1
                if result.documents == 2:
                    message = "a desired-state file holds one YAML document; this is a second"
                    result.problems.append(_problem(source, _mark(event), message))
            elif kind is yaml.StreamEndEvent:
                break
    except yaml.MarkedYAMLError as error:
        result.problems.append(_syntax_problem(source, error))
    except yaml.reader.ReaderError as error:
        result.problems.append(_reader_problem(source, error))
    finally:
        parser.dispose()
    if result.aliases:
        # One problem, not one per alias: an alias bomb would otherwise print thousands.
        count = len(result.aliases)
        message = (
            f"YAML aliases (*name) are not supported ({plural(count, 'alias', 'aliases')} in "
            "this file): write the value out"
        )
        result.problems.append(_problem(source, result.aliases[0], message))
    return result


def _node(
    source: SourceText,
    event: yaml.Event,
    stack: list[_Frame],
    wanted: Collection[YamlPath],
    parents: Collection[YamlPath],
    result: Scan,
) -> None:
    mark = _mark(event)
    key_mark = None
    path: YamlPath | None = ()
    if stack:
        frame = stack[-1]
        if frame.is_mapping and frame.expecting_key:
            frame.expecting_key = False
            frame.key_mark = mark
            if isinstance(event, yaml.ScalarEvent):
                frame.key = event.value
                first = frame.keys.setdefault(event.value, mark)
                if first != mark:
                    message = (
                        f"duplicate key {event.value!r}: "
                        f"first at line {first[0]}, column {first[1]}"
                    )
                    result.problems.append(_problem(source, mark, message))
            elif isinstance(event, yaml.AliasEvent):
                frame.key = None
                result.aliases.append(mark)
            else:  # a complex key: its contents are followed only to keep the stack right
                frame.key = None
                stack.append(_Frame(None, isinstance(event, yaml.MappingStartEvent)))
            return
        if frame.is_mapping:
            frame.expecting_key = True
            key_mark = frame.key_mark
            path = None if frame.path is None or frame.key is None else (*frame.path, frame.key)
        else:
            path = None if frame.path is None else (*frame.path, frame.index)
            frame.index += 1
    if path is not None and path in wanted:
        if key_mark is not None and isinstance(event, yaml.ScalarEvent) and _absent(event):
            mark = key_mark  # `key:` with nothing after it: the key is what a person sees
        text = event.value if isinstance(event, yaml.ScalarEvent) else None
        result.marks[path] = Marks(key_mark, mark, text, _escaped(source, event))
    if isinstance(event, yaml.AliasEvent):
        result.aliases.append(mark)
    elif isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
        followed = path if path in parents else None
        stack.append(_Frame(followed, isinstance(event, yaml.MappingStartEvent)))


def _escaped(source: SourceText, event: yaml.Event) -> bool:
    if not isinstance(event, yaml.ScalarEvent) or event.style != '"':
        return False
    start, end = event.start_mark, event.end_mark
    return start is None or end is None or "\\" in source.text[start.index : end.index]


def _absent(event: yaml.ScalarEvent) -> bool:
    return not event.value and not event.style  # plain style: None, or "" from the C parser


def _mark(event: yaml.Event) -> tuple[int, int]:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


def _problem(source: SourceText, mark: tuple[int, int], message: str) -> Problem:
    return Problem(Location(source.name, mark[0], mark[1]), message)


def _syntax_problem(source: SourceText, error: yaml.MarkedYAMLError) -> Problem:
    mark = error.problem_mark or error.context_mark
    where = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    message = f"invalid YAML: {error.problem or error.context}"
    if error.context and error.problem and error.context_mark is not None:
        context_line = error.context_mark.line + 1
        message += f" ({error.context} that starts at line {context_line})"
    return _problem(source, where, message)


def _reader_problem(source: SourceText, error: yaml.reader.ReaderError) -> Problem:
    return _forbidden_problem(source, error.position)


def _forbidden_problem(source: SourceText, offset: int) -> Problem:
    """A character YAML forbids anywhere (a control character), at its place."""
    line = source.text.count("\n", 0, offset) + 1
    column = offset - (source.text.rfind("\n", 0, offset) + 1) + 1
    code = ord(source.text[offset]) if offset < len(source.text) else 0
    message = f"invalid YAML: the character U+{code:04X} is not allowed in a YAML file"
    return _problem(source, (line, column), message)


#: A line indented with a tab (after any spaces), that holds more than white space.
_TAB_INDENT = re.compile(r"^( *)\t[ \t]*(?=\S)", re.MULTILINE)


def _tab_problems(source: SourceText) -> list[Problem]:
    """Tabs in indentation, which YAML forbids, reported as such rather than as a parse error
    (the first `KEPT` of them)."""
    text = source.text
    if "\t" not in text:
        return []
    problems: list[Problem] = []
    line, counted = 1, 0
    for found in _TAB_INDENT.finditer(text):
        line += text.count("\n", counted, found.start())
        counted = found.start()
        if len(problems) == KEPT:
            return [*problems, more_problems(Location(source.name, line, len(found[1]) + 1))]
        message = "a tab in the indentation: YAML indents with spaces only"
        problems.append(_problem(source, (line, len(found[1]) + 1), message))
    return problems


def _fast_parser_problem(source: SourceText, error: yaml_rs.YAMLDecodeError) -> Problem:
    """The fast parser's own word, for the rare file it refuses and PyYAML accepts."""
    text = str(error)
    found = _LINE_COLUMN.search(text)
    where = (int(found[1]), int(found[2])) if found else (1, 1)
    detail = text.splitlines()[-1].strip() if text else "the file could not be parsed"
    return _problem(source, where, f"invalid YAML: {detail}")
