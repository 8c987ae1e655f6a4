"""A JSON document written as it is produced, byte for byte as the standard library writes it.

`json.dumps(document, indent=2, ensure_ascii=False)` needs the whole document in memory and,
with an indent, encodes it in pure Python: for a plan of 100,000 workers a 68 MB string, 3.7 s
and 800 MB. Here the document's large lists are `Stream`s, whose items are produced one at a
time, encoded by orjson (a hundred times faster, and its indented output is the standard
library's: `": "` and `","` with two spaces a level, `{}` and `[]` when empty, UTF-8 as it is,
control characters as `\\u001b`) and written in pieces of about 256 KB, each ending at a new line.

Where orjson cannot encode an item as the standard library would (an integer beyond 64 bits,
a key that is not a string, text with a lone surrogate), that item goes through the standard
library instead; a lone surrogate, which UTF-8 cannot carry, is written escaped (`\\ud800`)
rather than failing. A float would be spelled orjson's way (`1e16` for `1e+16`): the plan's
numbers are all integers (its amounts are strings).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

import orjson

#: orjson's indented output; dataclasses and datetimes are refused, as the standard library does.
_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
_PIECE = 256 * 1024
_INDENT = b"  "


class Output(Protocol):
    """Where a document is written: a binary file, stdout's buffer, a `BytesIO`."""

    def write(self, data: bytes, /) -> object: ...


class Stream:
    """A JSON array whose items are produced one at a time, as the writer reaches them."""

    __slots__ = ("items",)

    def __init__(self, items: Iterable[Any]) -> None:
        self.items = items


def write_document(document: dict[str, Any], out: Output) -> None:
    """Write `document` and a final new line to `out`, as
    `json.dumps(document, indent=2, ensure_ascii=False) + "\\n"` encoded in UTF-8, its
    `Stream`s (at any depth) consumed as they are written; a `Stream`'s items hold none.
    Every `out.write` ends with a new line, so a filter of the output (the secrets' redaction)
    never meets a string cut in two: JSON text has no new line inside a string."""
    pieces: list[bytes] = []
    size = 0
    for chunk in _value(document, 0):
        size += len(chunk)
        if size >= _PIECE and (cut := chunk.find(b"\n") + 1):
            pieces.append(chunk[:cut])
            out.write(b"".join(pieces))
            pieces = [chunk[cut:]]
            size = len(chunk) - cut
        else:
            pieces.append(chunk)
    pieces.append(b"\n")
    out.write(b"".join(pieces))


def encode(value: Any, depth: int = 0) -> bytes:
    """`value` as `json.dumps(value, indent=2, ensure_ascii=False)` writes it, in UTF-8, with
    its lines after the first indented for `depth` levels."""
    try:
        data = orjson.dumps(value, option=_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is one: what only the standard library writes
        data = _standard(value)
    if depth and b"\n" in data:
        data = data.replace(b"\n", b"\n" + _INDENT * depth)
    return data


def _standard(value: Any) -> bytes:
    text = json.dumps(value, indent=2, ensure_ascii=False)
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate: valid JSON only escaped
        return json.dumps(value, indent=2, ensure_ascii=True).encode()


def _value(value: Any, depth: int) -> Iterator[bytes]:
    if isinstance(value, Stream):
        yield from _array(value.items, depth)
    elif isinstance(value, dict) and _streams_inside(value):
        yield from _object(value, depth)
    else:
        yield encode(value, depth)


def _object(value: dict[str, Any], depth: int) -> Iterator[bytes]:
    if not value:
        yield b"{}"
        return
    inner = b"\n" + _INDENT * (depth + 1)
    separator = b"{" + inner
    for key, item in value.items():
        yield separator + encode(key) + b": "
        yield from _value(item, depth + 1)
        separator = b"," + inner
    yield b"\n" + _INDENT * depth + b"}"


def _array(items: Iterable[Any], depth: int) -> Iterator[bytes]:
    """A `Stream`'s items, each encoded whole (they hold no `Stream`)."""
    inner = b"\n" + _INDENT * (depth + 1)
    separator = b"[" + inner
    for item in items:
        yield separator + encode(item, depth + 1)
        separator = b"," + inner
    yield b"[]" if separator.startswith(b"[") else b"\n" + _INDENT * depth + b"]"


def _streams_inside(value: Any) -> bool:
    if isinstance(value, Stream):
        return True
    if isinstance(value, dict):
        return any(_streams_inside(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_streams_inside(item) for item in value)
    return False


def materialised(value: Any) -> Any:
    """`value` with every `Stream` turned into a list: the same document as one value."""
    if isinstance(value, Stream):
        return [materialised(item) for item in value.items]
    if isinstance(value, dict):
        return {key: materialised(item) for key, item in value.items()}
    return value
