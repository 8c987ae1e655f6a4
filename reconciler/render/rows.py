"""How the look commands print what they read: JSON, CSV or a table, chosen by `--format`
(the option itself is the command line's: `reconciler.cli.formats`).

A list is written while it is read: each JSON record and CSV row as soon as its page has come,
so formatting works while later pages are awaited. A table is the exception: its column widths
need every row, so it is printed once the list is whole. Nothing closes a JSON list before its
last record: a read that fails part-way leaves the JSON unterminated, never a shorter list that
parses (the error follows on stderr and the exit status is 1). CSV has no end mark to leave
out: there the exit status is what tells a cut list from a whole one.
"""

from __future__ import annotations

import csv
import dataclasses
import enum
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol, TextIO, TypeVar

import click

from reconciler.money import grouped, two_places
from reconciler.secrets import MASK, Secret
from reconciler.service.models import WebhookHeader
from reconciler.words import counted

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


class Writer(Protocol):
    """Where text goes: a text stream, or the blocks of stdout."""

    def write(self, text: str, /) -> int: ...


FORMATS = ("table", "json", "csv")

#: Where `--wide` (`reconciler.cli.formats`) is remembered: the command's click context.
WIDE = "reconciler.wide"

#: Which columns a table on a narrow terminal keeps first (the rest follow in display order).
PRIORITY = (
    "email",
    "worker_email",
    # The key everything else uses: hidden only when a whole email leaves no room for it.
    "external_id",
    "status",
    "flow_stage",
    "amount",
    "total",
    "balance",
    # What a payment's failure was and what a paylist pays for: kept before the ids (they
    # wrap between words, so they take what room the others leave).
    "cause",
    "description",
    "id",
    "paylist_id",
    "journal_id",
    "agreement_id",
    "operation",
)

#: Free-text columns: on a narrow terminal they wrap between words rather than being cut.
WRAPPING = frozenset({"description", "cause", "reason", "payment_purpose", "error"})


def _wide() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(WIDE))


def chosen_format(output_format: str | None) -> str:
    if output_format is not None:
        return output_format
    return "table" if sys.stdout.isatty() else "json"


def print_rows(
    rows: Iterable[object], columns: Sequence[str], output_format: str | None, *, title: str
) -> None:
    """Print a list of rows: JSON and CSV as the rows come, a table once they all have."""
    chosen = chosen_format(output_format)
    if chosen == "json":
        with stdout_blocks() as out:
            write_json_list(rows, out, text=row_json(columns))
            out.write("\n")
    elif chosen == "csv":
        with stdout_blocks() as out:
            write_csv(rows, columns, out)
    else:
        from reconciler.render.tables import print_table

        values = [[getattr(row, column) for column in columns] for row in rows]
        cells = [[_table_cell(value) for value in row] for row in values]
        amounts = {c for i, c in enumerate(columns) if any(type(r[i]) is Decimal for r in values)}
        title = f"{title} ({counted(len(cells))})"
        print_table(
            columns,
            cells,
            title=title,
            wide=_wide(),
            priority=PRIORITY,
            wrapping=WRAPPING,
            right=amounts,
        )


def print_record(
    row: object, columns: Sequence[str], output_format: str | None, *, title: str
) -> None:
    chosen = chosen_format(output_format)
    if chosen == "json":
        click.echo(json.dumps(record(row, columns), indent=2, ensure_ascii=False))
    elif chosen == "csv":
        write_csv([row], columns, sys.stdout)
    else:
        from reconciler.render.tables import print_fields

        fields = [(column, _table_cell(getattr(row, column))) for column in columns]
        print_fields(fields, title=title, wide=_wide())


def write_csv(rows: Iterable[object], columns: Sequence[str], out: Writer) -> None:
    """The header, then a line for each row as it comes."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([csv_cell(getattr(row, column)) for column in columns])


#: What a spreadsheet reads as the start of a formula (OWASP's "CSV Injection"): `=`, `+`, `-`,
#: `@`, a tab and a carriage return.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: Values written as numbers or times, never as text a spreadsheet could run: a negative amount
#: (`-12.50`, a withdrawal) stays a number.
_NOT_TEXT = (Decimal, int, float, datetime)


def csv_cell(value: Any) -> str:
    """A value as a CSV cell, the one place every CSV the reconciler writes makes its cells:
    amounts with two places (12.50), secrets masked, times in full, and a text cell that a
    spreadsheet would run as a formula (a description `=HYPERLINK(...)`, a name `@SUM(...)`)
    prefixed with `'`, as OWASP advises, so it shows as the text it is."""
    text = _cell(value)
    if text.startswith(_FORMULA_STARTS) and not isinstance(value, _NOT_TEXT):
        return "'" + text
    return text


# -- written as it comes ---------------------------------------------------------------------

#: How much text is gathered before it is written: the rows of a page leave in a few writes,
#: and at most this much waits for the next page.
BLOCK = 16 * 1024


class _Blocks:
    """A text stream that passes what it is given on to `out` in blocks of about `BLOCK`
    characters, each ending where a write ended (so a record, and any secret the redaction
    must find in it, is never split), and flushes `out` after each block: as many system calls
    with PYTHONUNBUFFERED (common in CI, where every write is one) as without it."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._parts: list[str] = []
        self._size = 0

    def write(self, text: str) -> int:
        self._parts.append(text)
        self._size += len(text)
        if self._size >= BLOCK:
            self.flush()
        return len(text)

    def flush(self) -> None:
        if self._parts:
            self._out.write("".join(self._parts))
            self._parts.clear()
            self._size = 0
        self._out.flush()


@contextmanager
def stdout_blocks() -> Iterator[Writer]:
    """stdout, written in blocks; what was given is written out at the end, even after an error."""
    out = _Blocks(sys.stdout)
    try:
        yield out
    finally:
        out.flush()


def write_json_list(
    items: Iterable[T],
    out: Writer,
    *,
    depth: int = 0,
    text: Callable[[T, int], str] = lambda item, depth: json_text(item, depth),
) -> None:
    """Write `items` to `out` exactly as `json.dumps(list(items), indent=2,
    ensure_ascii=False)` would, as the value `depth` levels deep in a document, each item as
    soon as it comes (`text(item, depth)` writes one: `json_text`, or `row_json`'s for rows);
    no line end follows.

    The list is closed only after its last item, and nothing at all is written before the first
    one, so an `items` that fails part-way leaves the JSON unterminated (after the failure, a line
    end ends what was written, and the error goes on).
    """
    inner = "\n" + "  " * (depth + 1)
    written = False
    try:
        for item in items:
            out.write(("," if written else "[") + inner + text(item, depth + 1))
            written = True
    except BaseException:
        if written:
            out.write("\n")
        raise
    out.write("\n" + "  " * depth + "]" if written else "[]")


def row_json(columns: Sequence[str]) -> Callable[[object, int], str]:
    """How `json_text` writes a row's `record`, made straight from the row's attributes."""
    keys = [(column, _encode_string(column) + ": ") for column in columns]

    def text(row: object, depth: int) -> str:
        members = [key + _value_text(getattr(row, column), depth + 1) for column, key in keys]
        return _object(members, depth)

    return text


def _value_text(value: object, depth: int) -> str:
    if type(value) is str:
        return _encode_string(value)
    if type(value) is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    return json_text(_json_value(value), depth)


def json_text(value: object, depth: int) -> str:
    """`value` as `json.dumps(value, indent=2, ensure_ascii=False)` writes it `depth` levels
    deep; a flat record of plain values (every row of a look command) without the pure-Python
    encoder that `indent` otherwise means."""
    if type(value) is dict and all(type(key) is str for key in value):
        members = [
            _encode_string(key) + ": " + json_text(item, depth + 1) for key, item in value.items()
        ]
        return _object(members, depth)
    if type(value) is str:
        return _encode_string(value)
    if type(value) is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    # Anything else (lists, floats, other keys) as json itself writes it, moved in `depth` levels:
    # JSON text holds no raw line end, so every one of them starts an indented line.
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + "  " * depth)


def _object(members: list[str], depth: int) -> str:
    """An object of `members` (each `"key": value`) as json.dumps indents it `depth` levels deep."""
    if not members:
        return "{}"
    inner = "\n" + "  " * (depth + 1)
    return "{" + inner + ("," + inner).join(members) + "\n" + "  " * depth + "}"


#: The string encoder `json.dumps(..., ensure_ascii=False)` uses (the C one where there is one).
_encode_string: Callable[[str], str] = json.encoder.encode_basestring


# -- values ---------------------------------------------------------------------------------


_SCALARS = frozenset({str, int, bool, float, type(None)})


def record(row: object, columns: Sequence[str]) -> dict[str, Any]:
    """The row's columns as JSON values: amounts as two-place strings (as the plan writes them),
    times in ISO 8601, secrets masked."""
    return {column: _json_value(getattr(row, column)) for column in columns}


def _json_value(value: Any) -> Any:
    if type(value) in _SCALARS:
        return value
    if isinstance(value, Secret):
        return MASK
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Decimal):
        return two_places(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: _json_value(getattr(value, field.name))
            for field in dataclasses.fields(value)
        }
    if isinstance(value, list | tuple):
        return [_json_value(item) for item in value]
    return value


def _table_cell(value: Any) -> str:
    """A cell of a table for people: amounts grouped as the plan writes them (1,394,500.00),
    times to the second, else as in CSV."""
    if isinstance(value, Decimal):
        return grouped(value)
    if isinstance(value, datetime):
        text = value.isoformat(sep=" ", timespec="seconds")
        return text.removesuffix("+00:00") + " UTC" if text.endswith("+00:00") else text
    return _cell(value)


def _cell(value: Any) -> str:
    """A value as a CSV cell: amounts with two places (12.50), secrets masked, times in full."""
    if type(value) is str:
        return value
    if value is None:
        return ""
    if isinstance(value, Secret):
        return MASK
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return two_places(value)
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, WebhookHeader):
        return f"{value.name}: {MASK}"
    if isinstance(value, list | tuple):
        return ", ".join(_cell(item) for item in value)
    return str(value)
