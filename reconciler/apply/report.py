"""The ledger for people (a rich table and a summary line) and for machines (JSON)."""

from __future__ import annotations

import io
import json

from reconciler.apply.ledger import Ledger, Outcome

_STYLES = {Outcome.APPLIED: "green", Outcome.FAILED: "bold red", Outcome.SKIPPED: "yellow"}


def ledger_text(ledger: Ledger, *, color: bool = False, width: int = 120) -> str:
    """The ledger as a table, one row per change, then the summary line."""
    from rich.console import Console
    from rich.table import Table

    buffer = io.StringIO()
    console = Console(
        file=buffer, force_terminal=color, no_color=not color, width=width, highlight=False
    )
    entries = ledger.entries
    if entries:
        table = Table(title="Apply ledger", title_justify="left", show_lines=False)
        table.add_column("Address", no_wrap=True)
        table.add_column("Action")
        table.add_column("Outcome")
        table.add_column("Agreement", justify="right")
        table.add_column("Detail", overflow="fold")
        for entry in entries:
            table.add_row(
                entry.address,
                entry.action,
                f"[{_STYLES[entry.outcome]}]{entry.outcome}[/]",
                "" if entry.agreement_id is None else str(entry.agreement_id),
                entry.detail or "",
            )
        console.print(table)
    console.print(ledger.summary_line(), markup=False)
    return buffer.getvalue()


def ledger_json(ledger: Ledger) -> str:
    """The ledger as one JSON document (`Ledger.as_dict`)."""
    return json.dumps(ledger.as_dict(), indent=2) + "\n"
