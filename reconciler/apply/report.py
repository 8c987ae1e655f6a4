"""The ledger for people (aligned columns and a summary line) and for machines (JSON).

The table is laid out by hand rather than with rich's `Table`: at 10,000 rows rich takes
seconds, plain aligned columns (as `kubectl get` prints them) take milliseconds.
"""

from __future__ import annotations

import json

import click

from reconciler.apply.ledger import Entry, Ledger, Outcome

_COLOURS = {Outcome.APPLIED: "green", Outcome.FAILED: "red", Outcome.SKIPPED: "yellow"}
_HEADINGS = ("ADDRESS", "ACTION", "OUTCOME", "AGREEMENT", "DETAIL")
_GAP = "  "


def _cells(entry: Entry) -> tuple[str, str, str, str, str]:
    agreement = "" if entry.agreement_id is None else str(entry.agreement_id)
    return entry.address, entry.action, str(entry.outcome), agreement, entry.detail or ""


def ledger_text(ledger: Ledger, *, color: bool = False) -> str:
    """The ledger as aligned columns, one row per change, then the summary line."""
    entries = ledger.entries
    lines: list[str] = []
    if entries:
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
        lines.append(click.style(heading, bold=True) if color else heading)
        lines += [line(row, entry.outcome) for row, entry in zip(rows, entries, strict=True)]
        lines.append("")
    lines.append(ledger.summary_line())
    return "\n".join(lines) + "\n"


def ledger_json(ledger: Ledger) -> str:
    """The ledger as one JSON document (`Ledger.as_dict`)."""
    return json.dumps(ledger.as_dict(), indent=2) + "\n"
