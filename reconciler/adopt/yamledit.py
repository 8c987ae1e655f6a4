"""Editing a desired-state file in place, from the positions of its YAML nodes.

`adopt` must leave every byte it does not mean to change as it was: comments, key order,
quoting, blank lines. So nothing here loads the file into values and writes them out again:
the file is composed by PyYAML (the parser the loader already uses for positions), and each
edit is a span of the original text replaced by new text, written in the style of what is
around it (a value's own quoting, its siblings' indentation, flow or block). Scalars are
written by `export.yamltext`, which the export already uses to write values every parser of
the project reads back as the same string.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import yaml

from reconciler.errors import ReconcilerError
from reconciler.export.yamltext import quoted, scalar

_NEWLINE = re.compile("\n")
#: The indicators that open a line's items and keys (`- `, `? `, `- ? `), with the white space
#: after each: a tab there is YAML's separation, which PyYAML's scanner does not take.
_LINE_OPENING = re.compile(r"^[ ]*(?:[-?][ \t]+)+", re.MULTILINE)


class UneditableFile(ReconcilerError):
    """A file whose shape the edit cannot follow (said why, and where): nothing is written."""


@dataclass(frozen=True, slots=True)
class _Edit:
    start: int
    end: int
    text: str


@dataclass(slots=True)
class YamlDocument:
    """One file's text, its composed nodes, and the edits made to it so far."""

    name: str
    text: str
    root: yaml.Node | None
    _lines: list[int] = field(default_factory=list)
    _edits: list[_Edit] = field(default_factory=list)
    _grown: set[int] = field(default_factory=set)  # the sequences an item was appended to
    #: The keys given a new sequence (`insert_pair`), by mapping: its edit and its items.
    _new_keys: dict[tuple[int, str], tuple[int, list[list[str]]]] = field(default_factory=dict)

    @classmethod
    def parse(cls, name: str, text: str) -> YamlDocument:
        """The document of `text` (the file was validated before). PyYAML composes it for the
        positions: a tab after a line's `-` or `?` (separation white space YAML allows and the
        loader reads) is read as a space, one character for one, so every position is the
        text's own; what PyYAML still cannot read is refused at its line, nothing written."""
        readable = _LINE_OPENING.sub(lambda found: found[0].replace("\t", " "), text)
        try:
            root = yaml.compose(readable, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            at = "" if mark is None else f":{mark.line + 1}:{mark.column + 1}"
            problem = getattr(error, "problem", None) or "a form its editor cannot follow"
            raise UneditableFile(
                f"{name}{at}: adopt cannot edit this file ({problem}), although it is valid: "
                "nothing was written",
                hint="adopt writes through PyYAML's reading of the file: write this place "
                "in plain block or flow style (spaces, no tabs), and run adopt again",
            ) from None
        starts = [0, *(found.end() for found in _NEWLINE.finditer(text))]
        return cls(name, text, root, starts)

    @property
    def newline(self) -> str:
        return "\r\n" if "\r\n" in self.text else "\n"

    @property
    def changed(self) -> bool:
        return bool(self._edits)

    def result(self) -> str:
        """The text with every edit made (they never overlap: each touches its own node)."""
        text = self.text
        # From the end, so each offset still points into the original; of several insertions
        # at one place the last made goes in first, so they read in the order made.
        ordered = sorted(
            enumerate(self._edits), key=lambda pair: (pair[1].start, pair[1].end, pair[0])
        )
        for _, edit in reversed(ordered):
            text = text[: edit.start] + edit.text + text[edit.end :]
        return text

    # --- finding ------------------------------------------------------------------------

    def offset(self, mark: yaml.Mark) -> int:
        """A mark's place in the text (from its line and column, which count characters)."""
        return self._lines[mark.line] + mark.column

    def line_start(self, offset: int) -> int:
        return self._lines[bisect.bisect_right(self._lines, offset) - 1]

    def line_end(self, offset: int) -> int:
        """Where the line holding `offset` ends (its line break, or the end of the text)."""
        found = self.text.find("\n", offset)
        end = len(self.text) if found < 0 else found
        return end - 1 if end > 0 and self.text[end - 1] == "\r" else end

    def column(self, node: yaml.Node) -> int:
        return int(node.start_mark.column)

    def pair_start(self, key: yaml.Node) -> int:
        """Where the pair of `key` begins: at its `?` when the key is explicit (`? key` with
        `: value` below), else at the key itself."""
        start = self.offset(key.start_mark)
        before = self.text[self.line_start(start) : start].rstrip(" \t")
        return self.line_start(start) + len(before) - 1 if before.endswith("?") else start

    def pair_column(self, key: yaml.Node) -> int:
        """The column the pair of `key` begins at (its `?`, for an explicit key)."""
        start = self.pair_start(key)
        return start - self.line_start(start)

    def last_end(self, node: yaml.Node) -> int:
        """Where the last scalar of `node` ends (a block collection's own end mark lies at the
        next token, past any comment after it)."""
        while isinstance(node, yaml.MappingNode | yaml.SequenceNode) and node.value:
            if node.flow_style:
                return self.offset(node.end_mark)
            last = node.value[-1]
            node = last[1] if isinstance(last, tuple) else last
        end = self.offset(node.end_mark)
        if isinstance(node, yaml.ScalarNode) and node.style in ("|", ">"):
            # A block scalar's end mark lies past the blank lines after it (the scanner reads
            # them for its chomping): it ends with its last line that holds text, before that
            # line's break (`\r\n` too), so the blank lines and the break stay the file's own.
            start = self.offset(node.start_mark)
            lines = self.text[start:end].splitlines(keepends=True)
            while len(lines) > 1 and not lines[-1].strip():
                lines.pop()
            last = lines[-1]
            end = start + sum(map(len, lines)) - (len(last) - len(last.rstrip("\r\n")))
        return end

    @staticmethod
    def get(mapping: yaml.Node | None, key: str) -> yaml.Node | None:
        """The value node under `key`, or None."""
        if not isinstance(mapping, yaml.MappingNode):
            return None
        for key_node, value_node in mapping.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                found: yaml.Node = value_node
                return found
        return None

    def scalar_text(self, node: yaml.Node) -> str:
        """A node's text as written (quotes included)."""
        return self.text[self.offset(node.start_mark) : self.offset(node.end_mark)]

    # --- editing ------------------------------------------------------------------------

    def _add(self, start: int, end: int, text: str) -> None:
        self._edits.append(_Edit(start, end, text))

    def set_scalar(self, node: yaml.Node, value: str | bool) -> None:
        """Write `value` where `node` was, in its quoting when that can hold it."""
        start, end = self.offset(node.start_mark), self.offset(node.end_mark)
        text = like(node, value)
        if isinstance(node, yaml.ScalarNode) and node.style in ("|", ">"):
            end = self.last_end(node)
        self._add(start, end, text)

    def replace_node(self, node: yaml.Node, text: str) -> None:
        """Write `text` (one line) where the whole of `node` was."""
        self._add(self.offset(node.start_mark), self.last_end(node), text)

    def set_key(self, mapping: yaml.MappingNode, key: str, value: str | bool) -> None:
        """Set `key` to the scalar `value`: in place when it is there, else a new pair."""
        found = self.get(mapping, key)
        if found is not None:
            self.set_scalar(found, value)
            return
        self.insert_pair(mapping, key, like(None, value))

    def insert_pair(
        self, mapping: yaml.MappingNode, key: str, value: str | list[list[str]]
    ) -> None:
        """Add `key: value` after the mapping's last pair: `value` is a scalar's text, or the
        items of a sequence of mappings (each its `key: value` lines), written in the
        mapping's style (flow, or a block sequence indented below the key). A sequence given
        to a key this document added already (two new headers) joins that key's items."""
        at = self.last_end(mapping.value[-1][1])
        if isinstance(value, str):
            if mapping.flow_style:
                self._add(at, at, f", {key}: {value}")
            else:
                indent = " " * self.pair_column(mapping.value[0][0])
                self._insert_lines(at, [f"{indent}{key}: {value}"])
            return
        made = self._new_keys.get((id(mapping), key))
        items = [*made[1], *value] if made is not None else list(value)
        if mapping.flow_style:
            edit = _Edit(at, at, f", {key}: [" + ", ".join(map(_flow, items)) + "]")
        else:
            indent = " " * self.pair_column(mapping.value[0][0])
            lines = [f"{indent}{key}:"]
            for item in items:
                lines.append(f"{indent}  - {item[0]}")
                lines += [f"{indent}    {line}" for line in item[1:]]
            edit = self._lines_edit(at, lines)
        if made is None:
            self._edits.append(edit)
            self._new_keys[(id(mapping), key)] = (len(self._edits) - 1, items)
        else:
            self._edits[made[0]] = edit
            self._new_keys[(id(mapping), key)] = (made[0], items)

    def _insert_lines(self, offset: int, lines: list[str]) -> None:
        """Insert whole lines after the line holding `offset`: at the next line's start, so
        that lines removed before it (a removed last item) are removed whole."""
        self._edits.append(self._lines_edit(offset, lines))

    def _lines_edit(self, offset: int, lines: list[str]) -> _Edit:
        nl = self.newline
        newline = self.text.find("\n", offset)
        if newline < 0:
            return _Edit(len(self.text), len(self.text), nl + nl.join(lines))
        return _Edit(newline + 1, newline + 1, "".join(line + nl for line in lines))

    def delete_pair(self, mapping: yaml.MappingNode, key: str) -> None:
        """Remove `key` and its value from the mapping (it must have another pair)."""
        pairs = mapping.value
        index = next(i for i, (k, _) in enumerate(pairs) if k.value == key)
        key_node, value_node = pairs[index]
        start, end = self.pair_start(key_node), self.last_end(value_node)
        if mapping.flow_style:
            if index > 0:
                self._add(self.last_end(pairs[index - 1][1]), end, "")
            else:
                self._add(start, self.pair_start(pairs[1][0]), "")
            return
        if self.text[self.line_start(start) : start].strip():  # `- key: value`: keep the dash
            if index + 1 >= len(pairs):
                raise UneditableFile(f"{self.name}: cannot remove the only key {key}")
            self._add(start, self.pair_start(pairs[index + 1][0]), "")
            return
        self._delete_lines(start, end)

    def _delete_lines(self, start: int, end: int) -> None:
        """Remove the whole lines from the one holding `start` to the one holding `end`."""
        line_end = self.line_end(end)
        after = self.text.find("\n", line_end)
        self._add(self.line_start(start), len(self.text) if after < 0 else after + 1, "")

    def append_item(
        self, sequence: yaml.SequenceNode, item: Sequence[str], key: yaml.Node | None = None
    ) -> None:
        """Add an item after the sequence's last one: `item` is the lines of a mapping
        (`key: value` each), or one scalar's text alone. An empty `[]` under `key` in a block
        mapping becomes a block sequence, as the rest of such a file is written."""
        again = id(sequence) in self._grown  # edits at one place apply in the order made
        self._grown.add(id(sequence))
        if sequence.flow_style and not sequence.value and key is not None and self._block(key):
            indent = " " * (self.column(key) + 2)
            lines = [f"{indent}- {item[0]}", *(f"{indent}  {line}" for line in item[1:])]
            end = self.offset(sequence.end_mark)
            if not again:  # `key: []` becomes `key:`, a comment after it left on its line
                self._add(self.offset(key.end_mark), end, ":")
            self._insert_lines(end, lines)
            return
        if sequence.flow_style:
            text = _flow(item)
            if sequence.value:
                at = self.last_end(sequence.value[-1])
                self._add(at, at, f", {text}")
            else:
                end = self.offset(sequence.end_mark)
                self._add(end - 1, end - 1, f", {text}" if again else text)
            return
        dash = self.column(sequence)
        first = sequence.value[0]
        inner = (
            self.column(first) - dash if first.start_mark.line == sequence.start_mark.line else 2
        )
        lines = [f"{' ' * dash}-{' ' * (inner - 1)}{item[0]}"]
        lines += [f"{' ' * (dash + inner)}{line}" for line in item[1:]]
        self._insert_lines(self.last_end(sequence.value[-1]), lines)

    def _block(self, key: yaml.Node) -> bool:
        """Whether `key` begins its line (a key of a block mapping)."""
        start = self.offset(key.start_mark)
        return not self.text[self.line_start(start) : start].strip()

    def delete_items(self, sequence: yaml.SequenceNode, indexes: list[int], key: yaml.Node) -> None:
        """Remove the items at `indexes` of the sequence, the value of `key` in its mapping:
        a sequence left empty is written `[]`."""
        items = sequence.value
        gone = set(indexes)
        if len(gone) == len(items) and id(sequence) not in self._grown:
            if sequence.flow_style:
                self.replace_node(sequence, "[]")
            else:
                start = self.offset(key.end_mark)
                self._add(start, self.line_end(self.last_end(items[-1])), ": []")
            return
        last_kept = max((i for i in range(len(items)) if i not in gone), default=len(items))
        for index in sorted(gone):
            item = items[index]
            if not sequence.flow_style:
                self._delete_lines(self.offset(item.start_mark), self.last_end(item))
            elif index < last_kept:  # the item, its comma, up to the next
                start = self.offset(item.start_mark)
                self._add(start, self.offset(items[index + 1].start_mark), "")
            else:  # after the last kept one: the comma before it, and the item
                self._add(self.last_end(items[index - 1]), self.last_end(item), "")


def like(node: yaml.Node | None, value: str | bool) -> str:
    """`value` as YAML text, in the quoting `node` was written in when that can hold it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    style = node.style if isinstance(node, yaml.ScalarNode) else None
    if style == "'" and value.isprintable():
        return "'" + value.replace("'", "''") + "'"
    if style == '"':
        return quoted(value)
    return scalar(value)


def _flow(item: Sequence[str]) -> str:
    """A mapping's `key: value` lines as one flow mapping; a scalar's text as it is."""
    if len(item) == 1 and not _is_pair(item[0]):
        return item[0]
    return "{" + ", ".join(item) + "}"


def _is_pair(line: str) -> bool:
    """Whether a line made by `adopt` is `key: value` (keys are plain field names)."""
    key, colon, _ = line.partition(": ")
    return bool(colon) and key.isidentifier()
