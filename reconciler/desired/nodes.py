"""How many values (YAML nodes) the files of one load may hold, checked before any is built,
and how deeply they may nest.

yaml-rs builds every value of a file at once, in Rust and then in Python, and cannot be stopped
part way: 64 MiB of tiny items (`- a` lines, `[1,1,1,...]`, `- {a: 1}`) are 16 to 33 million
values, and took 1.7 to 2.8 GB of memory to refuse. So before it runs, a count of indicator
characters bounds from above how many values the file can hold (one pass in C over its bytes,
about 17 ms for a state of 100,000 workers), and only a file whose bound passes what the load
has left is counted exactly: by PyYAML's event parser, which builds nothing and stops at the
value that crosses the limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: The most values (keys, values and list items, at every level) one load reads, in all its
#: files (documented in docs/safety.md). A state of 100,000 workers with every field and an
#: `ignoreChanges` list holds about 2 million (7 fields each: 1.5 million); 64 MiB of such
#: workers, the most bytes a load reads, about 5 million.
MAX_NODES = 5_000_000

#: Every value but a document's root is an entry of a collection, and every entry is
#: introduced by an indicator of its own: a block sequence's `-` (one value), a mapping's
#: `:` or `?` (a key and its value: two), a flow sequence's `[` or `,` (one), a flow
#: mapping's `{` or `,` (two). A root is the first value or follows `---` or `...`. These
#: characters met anywhere else (in text, in comments) only make the bound looser.
_ONE, _TWO = b"-[.", b":?,{"
_WEIGHTS = bytes.maketrans(_ONE + _TWO, b"1" * len(_ONE) + b"2" * len(_TWO))
_OTHERS = bytes(sorted(set(range(256)) - set(_ONE + _TWO)))


def nodes_at_most(data: bytes) -> int:
    """An upper bound of the values (nodes) a YAML text holds, from its UTF-8 bytes."""
    indicators = data.translate(_WEIGHTS, _OTHERS)
    return 1 + indicators.count(b"1") + 2 * indicators.count(b"2")


def nodes_in(data: object) -> int:
    """The values of a parsed document (as many as its YAML nodes), without recursion."""
    count = 0
    pending = [data]
    while pending:
        value = pending.pop()
        count += 1
        if isinstance(value, dict):
            pending += value.keys()
            pending += value.values()
        elif isinstance(value, list | tuple):
            pending += value
    return count


@dataclass(slots=True)
class NodeBudget:
    """The values the files of one load may still hold, `MAX_NODES` in all.

    A file is charged its bound while that fits (no exact count for a usual file); once one
    does not, the files charged before are charged their exact count instead (counted on
    their values, already built), so a refusal says a true total.
    """

    left: int = MAX_NODES
    limit: int = MAX_NODES
    _estimated: list[tuple[object, int]] = field(default_factory=list)

    def fits(self, bound: int) -> bool:
        """Whether a file of at most `bound` values fits without an exact count."""
        if bound <= self.left:
            return True
        for data, charged in self._estimated:
            self.left += charged - nodes_in(data)
        self._estimated.clear()
        return bound <= self.left

    def charge(self, data: object, count: int, *, exact: bool) -> None:
        """Charge a file read (its values `data`) `count` values."""
        self.left -= count
        if not exact:
            self._estimated.append((data, count))


#: Deeper than any desired-state file (it needs 4 levels), and far from any recursion limit.
MAX_DEPTH = 32
#: A line indented (or dashed, `- - -`) this far: only then is the depth worth measuring.
#: Searched from a line break, a literal the regex engine finds fast (`^` tries every place).
_DEEP_LINE = re.compile(r"\n[ \t-]{48}")


def may_be_deep(text: str) -> bool:
    """Whether `text` may nest deeper than `MAX_DEPTH` (a cheap look for a deep line)."""
    return _DEEP_LINE.search(text) is not None or _DEEP_LINE.match(f"\n{text[:48]}") is not None


def depth(data: object) -> int:
    """How deeply `data` nests lists and mappings, without recursion."""
    deepest = 0
    pending: list[tuple[object, int]] = [(data, 1)]
    while pending:
        value, depth = pending.pop()
        if depth > MAX_DEPTH:
            return depth
        deepest = max(deepest, depth)
        if isinstance(value, dict):
            pending.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            pending.extend((item, depth + 1) for item in value)
    return deepest


def node_past(text: str, most: int) -> tuple[int, tuple[int, int] | None]:
    """The values of `text` counted up to `most`, and where the value past `most` starts
    (line and column, from 1), or None when there is none; raises PyYAML's errors (a syntax
    error met before the count is over)."""
    import yaml  # only for a file whose bound passes the limit

    nodes = (yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent, yaml.AliasEvent)
    parser = yaml.CSafeLoader(text)
    count = 0
    try:
        while (event := parser.get_event()) is not None:
            if isinstance(event, nodes):
                count += 1
                if count > most:
                    mark = event.start_mark
                    return count, ((mark.line + 1, mark.column + 1) if mark else (1, 1))
    finally:
        parser.dispose()
    return count, None


def too_many_message(limit: int) -> str:
    """Why a file that takes the run past `limit` values is refused."""
    return (
        f"refused: more than {limit:,} YAML nodes in all the files one run reads (each key, "
        "value and list item is one; a state of 100,000 workers holds about 2 million), and "
        "this file passes the limit here (see docs/safety.md)"
    )
