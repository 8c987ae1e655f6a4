"""The ledger for people (aligned columns and a summary line) and for machines (JSON).

The table is laid out by hand rather than with rich's `Table`: at 10,000 rows rich takes
seconds, plain aligned columns (as `kubectl get` prints them) take milliseconds.
"""

from __future__ import annotations

import json
import textwrap
from collections import Counter

import click

from reconciler.apply.ledger import PAY, Entry, Ledger, Outcome, counted_outcomes
from reconciler.money import grouped
from reconciler.words import counted

_COLOURS = {
    Outcome.APPLIED: "green",
    Outcome.FAILED: "red",
    Outcome.SKIPPED: "yellow",
    Outcome.WAITING: "yellow",
}
_HEADINGS = ("ADDRESS", "ACTION", "OUTCOME", "AGREEMENT", "PAYEE", "AMOUNT", "PAYLIST", "DETAIL")
_RIGHT = frozenset({"AGREEMENT", "AMOUNT", "PAYLIST"})
_PAYMENT_COLUMNS = frozenset({"PAYEE", "AMOUNT", "PAYLIST"})
_GAP = "  "
#: The fewest columns a wrapped DETAIL keeps in its column before rows are stacked instead.
_DETAIL_ROOM = 24


def _cells(entry: Entry) -> tuple[str, ...]:
    def text(value: object) -> str:
        return "" if value is None else str(value)

    amount = "" if entry.amount is None else grouped(entry.amount)
    return (
        entry.address,
        entry.action,
        str(entry.outcome),
        text(entry.agreement_id),
        text(entry.payee),
        amount,
        text(entry.paylist_id),
        entry.detail or "",
    )


#: An interrupted apply of more rows than this lists what matters and counts the rest.
INTERRUPTED_ROWS = 50


def ledger_text(ledger: Ledger, *, color: bool = False, width: int | None = None) -> str:
    """The ledger as aligned columns, one row per change, then the summary line.

    An interrupted apply of thousands of changes is summed up instead: the failed rows (the
    ones to act on, the first 50), then per action how many were applied, failed and skipped
    (`--format json` keeps every row). With a `width` (a terminal's, or COLUMNS) every line
    fits it: DETAIL wraps in its column, and when the other columns leave it too little room
    each row is stacked instead (its address, action and outcome, then its values, named);
    no value is ever cut.
    """
    entries = ledger.entries
    if ledger.interrupted and len(entries) > INTERRUPTED_ROWS:
        lines = _summed_up(entries, color=color, width=width)
    else:
        lines = _table(entries, color=color, width=width)
    return "\n".join([*lines, *_wrap(ledger.summary_line(), width)]) + "\n"


def _table(entries: list[Entry], *, color: bool, width: int | None) -> list[str]:
    """Aligned columns with a heading, and an empty line after them (none without rows).

    PAYEE, AMOUNT and PAYLIST are shown when a row is a payment's."""
    if not entries:
        return []
    rows = [_cells(entry) for entry in entries]
    payments = any(entry.action == PAY for entry in entries)
    shown = [
        i for i, heading in enumerate(_HEADINGS) if heading not in _PAYMENT_COLUMNS or payments
    ]
    fixed = shown[:-1]  # every column but DETAIL
    widths = {i: max(len(row[i]) for row in [_HEADINGS, *rows]) for i in fixed}
    detail_at = sum(widths.values()) + len(_GAP) * len(fixed)
    if width is not None and any(
        len((_line(row, fixed, widths) + row[-1]).rstrip()) > width
        and (detail_at > width - _DETAIL_ROOM or not row[-1])
        for row in rows
    ):  # the columns but DETAIL are too wide, or would leave DETAIL too little room
        return _stacked(entries, rows, color=color, width=width)
    lines = []
    heading = _line(_HEADINGS, fixed, widths) + _HEADINGS[-1]
    lines.append(click.style(heading, bold=True) if color else heading)
    for row, entry in zip(rows, entries, strict=True):
        head = _line(row, fixed, widths, outcome=entry.outcome if color else None)
        detail = row[-1]
        if not detail:
            lines.append(head.rstrip())
            continue
        room = None if width is None else max(width - detail_at, _DETAIL_ROOM)
        parts = _wrap(detail, room)
        lines.append(head + parts[0])
        lines += [" " * detail_at + part for part in parts[1:]]
    return [*lines, ""]


def _line(
    cells: tuple[str, ...],
    fixed: list[int],
    widths: dict[int, int],
    *,
    outcome: Outcome | None = None,
) -> str:
    """The fixed columns of a row, padded, each followed by the gap (DETAIL comes after)."""
    out = []
    for i in fixed:
        cell = cells[i].rjust(widths[i]) if _HEADINGS[i] in _RIGHT else cells[i].ljust(widths[i])
        if outcome is not None and _HEADINGS[i] == "OUTCOME":
            cell = click.style(cell, fg=_COLOURS[outcome], bold=True)
        out.append(cell + _GAP)
    return "".join(out)


def _stacked(
    entries: list[Entry], rows: list[tuple[str, ...]], *, color: bool, width: int
) -> list[str]:
    """Each row on its own lines, for a terminal narrower than the table: its address, action
    and outcome, then its other values named (`payee CW-0264  amount 7,400.00  paylist 12`),
    then its detail, each wrapped between words under a four-space indent."""
    lines = []
    for row, entry in zip(rows, entries, strict=True):
        outcome = row[2]
        if color:
            outcome = click.style(outcome, fg=_COLOURS[entry.outcome], bold=True)
        lines += _wrap(_GAP.join((row[0], row[1], outcome)), width, "    ")
        named = [f"{_HEADINGS[i].lower()} {row[i]}" for i in (3, 4, 5, 6) if row[i]]
        for text in (_GAP.join(named), row[-1]):
            if text:
                lines += _wrap("    " + text, width, "    ")
    return [*lines, ""]


def _wrap(text: str, width: int | None, hanging: str = "") -> list[str]:
    """`text` in lines of at most `width` columns, broken between words only (a word wider
    than that is left whole); None: one line."""
    if width is None or len(text) <= width:
        return [text]
    lines = textwrap.wrap(
        text,
        width,
        subsequent_indent=hanging,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return lines or [text]


def _summed_up(entries: list[Entry], *, color: bool, width: int | None) -> list[str]:
    failed = [entry for entry in entries if entry.outcome is Outcome.FAILED]
    lines: list[str] = []
    if failed:
        first = f", the first {counted(INTERRUPTED_ROWS)}" if len(failed) > INTERRUPTED_ROWS else ""
        lines.append(f"Failed ({counted(len(failed))}{first}):")
        lines += _table(failed[:INTERRUPTED_ROWS], color=color, width=width)
    lines.append("By action (every row with --format json):")
    counts: dict[str, Counter[Outcome]] = {}
    for entry in entries:
        counts.setdefault(entry.action, Counter())[entry.outcome] += 1
    for action, by_outcome in counts.items():
        parts = ", ".join(
            f"{counted(by_outcome.get(outcome, 0))} {outcome}"
            for outcome in counted_outcomes(by_outcome)
        )
        lines.append(f"  {action}: {parts}")
    return [*lines, ""]


def ledger_json(ledger: Ledger) -> str:
    """The ledger as one JSON document (`Ledger.as_dict`)."""
    return json.dumps(ledger.as_dict(), indent=2) + "\n"
