"""The outcome note's text: a row per account the merge applied (or tried to), with its icon,
what became of it and its run; the rows of the accounts this run did not land kept as they
were. The CI flow (`reconciler.gitops.outcome`) says what the outcomes are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

_ICON = {"applied": ":white_check_mark:", "nothing to do": ":white_check_mark:",
         "superseded": ":fast_forward:", "refused": ":no_entry:", "failed": ":x:"}  # fmt: skip
_ROW = re.compile(r"^\| `([^`|]+)` \|")


class Outcome(Protocol):
    """An account's outcome, as its row says it (`gitops.outcome.Landing`)."""

    @property
    def account(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def summary(self) -> str: ...


def outcome_body(
    landings: Iterable[tuple[Outcome, str | None]], sha: str, run_url: str, existing: str | None
) -> str:
    """The outcome comment: a row per account, those of `existing` not in this run kept."""
    rows: dict[str, str] = {}
    for line in (existing or "").splitlines():
        if match := _ROW.match(line):
            rows[match[1]] = line
    for landing, log_url in landings:
        text = landing.summary.replace("|", "\\|").replace("\n", " ")
        link = f"[run]({log_url or run_url})"
        rows[landing.account] = f"| `{landing.account}` | {_ICON[landing.kind]} {text} | {link} |"
    return "\n".join([
        f"**Applied after the merge** (latest: commit {sha[:12]}, [this run]({run_url})).",
        "",
        "| Account | Outcome | Run |",
        "|---|---|---|",
        *rows.values(),
        "",
    ])  # fmt: skip
