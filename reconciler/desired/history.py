"""An account's history: the paylists it paid before its payruns were in git.

`reconciler export` writes them (`history: {paylists: [{id, total, reason}]}`), so the first
payrun does not turn the company's own past into untraced money. Each is named by its id
with its total: never a pattern, and not an ignore rule (which can never hide money). A paylist
whose live total is not the one written is untraced again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any


@dataclass(frozen=True, slots=True)
class KnownPaylist:
    """One paylist of the account's history."""

    paylist_id: int
    total: Decimal
    reason: str


def build_history(files: Iterable[dict[str, Any]]) -> tuple[KnownPaylist, ...]:
    """The known paylists of every file, in file order (their values passed the checks: a
    total is a plain decimal's text, `payruns.amount_problem`)."""
    return tuple(
        KnownPaylist(int(item["id"]), Decimal(str(item["total"])), str(item["reason"]))
        for data in files
        for item in (data.get("history") or {}).get("paylists", ())
    )
