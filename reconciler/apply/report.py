"""The ledger for people (aligned columns and a summary line) and for machines (JSON).

The table is laid out by hand rather than with rich's `Table`: at 10,000 rows rich takes
seconds, plain aligned columns (as `kubectl get` prints them) take milliseconds.
"""

from __future__ import annotations

import json
from collections import Counter

import click

from reconciler.apply.ledger import Entry, Ledger, Outcome
from reconciler.words import counted

_COLOURS = {Outcome.APPLIED: "green", Outcome.FAILED: "red", Outcome.SKIPPED: "yellow"}
_HEADINGS = ("ADDRESS", "ACTION", "OUTCOME", "AGREEMENT", "DETAIL")
_GAP = "  "


def _cells(entry: Entry) -> tuple[str, str, str, str, str]:
    agreement = "" if entry.agreement_id is None else str(entry.agreement_id)
    return entry.address, entry.action, str(entry.outcome), agreement, entry.detail or ""


#: An interrupted apply of more rows than this lists what matters and counts the rest.
INTERRUPTED_ROWS = 50


def ledger_text(ledger: Ledger, *, color: bool = False) -> str:
    """The ledger as aligned columns, one row per change, then the summary line.

    An interrupted apply of thousands of changes is summed up instead: the failed rows (the
    ones to act on, the first 50), then per action how many were applied, failed and skipped
    (`--format json` keeps every row).
    """
    entries = ledger.entries
    if ledger.interrupted and len(entries) > INTERRUPTED_ROWS:
        lines = _summed_up(entries, color=color)
    else:
        lines = _table(entries, color=color)
    return "\n".join([*lines, ledger.summary_line()]) + "\n"


def _table(entries: list[Entry], *, color: bool) -> list[str]:
    """Aligned columns with a heading, and an empty line after them (none without rows)."""
    if not entries:
        return []
    rows = [_cells(entry) for entry in entries]
    widths = [max(len(row[i]) for row in [_HEADINGS, *rows]) for i in range(4)]

    def line(cells: tuple[str, ...], outcome: Outcome | None = None) -> str:
        address, action, result, agreement, detail = cells
        result_cell = result.ljust(widths[2])
        if color and outcome is not None:
            result_cell = click.style(result_cell, fg=_COLOURS[outcome], bold=True)
        parts = [
            address.ljust(widths[0]),
            action.ljust(widths[1]),
            result_cell,
            agreement.rjust(widths[3]),
            detail,
        ]
        return _GAP.join(parts).rstrip()

    heading = line(_HEADINGS)
    lines = [click.style(heading, bold=True) if color else heading]
    lines += [line(row, entry.outcome) for row, entry in zip(rows, entries, strict=True)]
    return [*lines, ""]


def _summed_up(entries: list[Entry], *, color: bool) -> list[str]:
    failed = [entry for entry in entries if entry.outcome is Outcome.FAILED]
    lines: list[str] = []
    if failed:
        first = f", the first {counted(INTERRUPTED_ROWS)}" if len(failed) > INTERRUPTED_ROWS else ""
        lines.append(f"Failed ({counted(len(failed))}{first}):")
        lines += _table(failed[:INTERRUPTED_ROWS], color=color)
    lines.append("By action (every row with --format json):")
    counts: dict[str, Counter[Outcome]] = {}
    for entry in entries:
        counts.setdefault(entry.action, Counter())[entry.outcome] += 1
    for action, by_outcome in counts.items():
        parts = ", ".join(f"{counted(by_outcome.get(outcome, 0))} {outcome}" for outcome in Outcome)
        lines.append(f"  {action}: {parts}")
    return [*lines, ""]


def ledger_json(ledger: Ledger) -> str:
    """The ledger as one JSON document (`Ledger.as_dict`)."""
    return json.dumps(ledger.as_dict(), indent=2) + "\n"
