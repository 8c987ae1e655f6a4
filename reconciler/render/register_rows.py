"""The payroll register for machines: CSV, one row a payment, and one JSON document.

Amounts are two-place strings (`"1394500.00"`), counts integers, times ISO 8601 with their
offset. Each payment's row has room for the record of the merge that paid its paylist (`commit`,
`pull_request`, `author`, `approvers`; JSON's `merge`), empty until one is read.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from reconciler.money import two_places
from reconciler.plan.register import Cause, MergeRecord, PaylistRow, Register, Sums
from reconciler.render.json_stream import Stream, write_document
from reconciler.render.rows import csv_cell

#: What the register cannot say yet: the forge's record of each merge.
SERVICE_SIDE = (
    "the service's side alone: the record of the merge that paid each paylist (commit, pull "
    "request, author, approvers) is not read"
)
CSV_COLUMNS = (
    "month",
    "paylist_id",
    "payrun_id",
    "part",
    "period",
    "payment_id",
    "payee",
    "amount",
    "status",
    "cause",
    "description",
    "created_at",
    "updated_at",
    "commit",
    "pull_request",
    "author",
    "approvers",
)


def register_csv(register: Register) -> str:
    """One row a payment, with its month, paylist, payrun, period and merge record (its cells
    made as every CSV's are: `reconciler.render.rows.csv_cell`)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in register.payments:
        merge = row.merge
        cells: tuple[Any, ...] = (
            row.month,
            row.paylist_id,
            row.payrun_id,
            row.part,
            row.period,
            row.payment_id,
            row.payee,
            row.amount,
            row.status,
            row.cause,
            row.description,
            row.created_at,
            row.updated_at,
            None if merge is None else merge.commit,
            None if merge is None else merge.pull_request,
            None if merge is None else merge.author,
            None if merge is None else "; ".join(merge.approvers),
        )
        writer.writerow([csv_cell(cell) for cell in cells])
    return out.getvalue()


def register_json(register: Register, source: str | None = None) -> str:
    """The register as one JSON document: amounts as two-place strings, counts as integers."""
    out = io.BytesIO()
    write_document(_document(register, source), out)
    return out.getvalue().decode("utf-8")


def _document(register: Register, source: str | None) -> dict[str, Any]:
    return {
        "scope": "files" if register.files else "account",
        "source": source if register.files else None,
        "since": register.since,
        "until": register.until,
        "merges_read": register.merges_read,
        "note": None if register.merges_read else f"This register shows {SERVICE_SIDE}.",
        "totals": _sums(register.totals),
        "failed_causes": [_cause(cause) for cause in register.causes],
        "months": [
            {
                "month": month.month,
                **_sums(month.sums),
                "paylists": [_paylist(row) for row in month.paylists],
            }
            for month in register.months
        ],
        "payees": [
            {"payee": payee.payee, "months": payee.months, **_sums(payee.sums)}
            for payee in register.payees
        ],
        "left_out_paylists": list(register.left_out),
        "unpaid_payruns": list(register.unpaid),
        "payments": Stream(
            {
                "month": row.month,
                "paylist_id": row.paylist_id,
                "payrun_id": row.payrun_id,
                "part": row.part,
                "period": row.period,
                "payment_id": row.payment_id,
                "payee": row.payee,
                "amount": two_places(row.amount),
                "status": row.status,
                "cause": row.cause,
                "description": row.description,
                "created_at": None if row.created_at is None else row.created_at.isoformat(),
                "updated_at": None if row.updated_at is None else row.updated_at.isoformat(),
                "merge": _merge(row.merge),
            }
            for row in register.payments
        ),
    }


def _paylist(row: PaylistRow) -> dict[str, Any]:
    return {
        "paylist_id": row.paylist_id,
        "description": row.description,
        "payrun_id": row.payrun_id,
        "part": row.part,
        "period": row.period,
        **_sums(row.sums),
        "failed_causes": [_cause(cause) for cause in row.causes],
        "merge": _merge(row.merge),
    }


def _sums(sums: Sums) -> dict[str, Any]:
    return {
        "requested": two_places(sums.requested),
        "paid": two_places(sums.paid),
        "failed": two_places(sums.failed),
        "pending": two_places(sums.pending),
        "requested_count": sums.requested_count,
        "paid_count": sums.paid_count,
        "failed_count": sums.failed_count,
        "pending_count": sums.pending_count,
    }


def _cause(cause: Cause) -> dict[str, Any]:
    return {"cause": cause.cause, "count": cause.count, "amount": two_places(cause.amount)}


def _merge(merge: MergeRecord | None) -> dict[str, Any] | None:
    if merge is None:
        return None
    return {
        "commit": merge.commit,
        "pull_request": merge.pull_request,
        "author": merge.author,
        "approvers": list(merge.approvers),
    }
