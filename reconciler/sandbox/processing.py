"""Settling paylists: each PENDING payment becomes SUCCESS (paid from the wallet) or FAILED.

The sandbox settles a paylist by itself once it is due (`--process-delay-ms` after its
creation), or at once on `POST /_sandbox/process`; a paylist a test holds
(`/_sandbox/paylists/{id}/hold`) is not settled until it is released. Settling runs in the
caller's transaction: every payment's status, the wallet's balance, the journal and the PAYMENT
events change together.
"""

from __future__ import annotations

import sqlite3

from reconciler.sandbox import events, payments, wallet
from reconciler.sandbox.timestamps import now_ns


def cause_of_failure(conn: sqlite3.Connection, payment: sqlite3.Row) -> str | None:
    """Why `payment` cannot be paid now, or None when it can."""
    account = wallet.wallet_row(conn, payment["client_id"])
    if not account["enabled"]:
        return payments.WALLET_DISABLED
    paid_before = conn.execute(
        "SELECT 1 FROM payments WHERE client_id = ? AND idempotence_key = ? AND status = ?",
        (payment["client_id"], payment["idempotence_key"], payments.SUCCESS),
    ).fetchone()
    if paid_before is not None:
        return payments.DUPLICATE_PAYMENT
    available = account["balance_cents"] + account["over_draft_limit_cents"]
    if available < payment["amount_cents"]:
        return payments.INSUFFICIENT_FUNDS
    return None


def settle_paylist(conn: sqlite3.Connection, paylist_id: int, now: int) -> int:
    """Settle every PENDING payment of one paylist, in order; how many were settled."""
    pending = conn.execute(
        "SELECT * FROM payments WHERE paylist_id = ? AND status = ? ORDER BY id",
        (paylist_id, payments.PENDING),
    ).fetchall()
    for payment in pending:
        cause = cause_of_failure(conn, payment)
        status = payments.FAILED if cause else payments.SUCCESS
        conn.execute(
            "UPDATE payments SET status = ?, cause = ?, updated_ns = ? WHERE id = ?",
            (status, cause, now, payment["id"]),
        )
        if cause is None:
            wallet.withdraw_payment(conn, payment, now)
        events.payment_settled(conn, payment, status, now)
    conn.execute("UPDATE paylists SET settled_ns = ? WHERE id = ?", (now, paylist_id))
    return len(pending)


def settle_due(conn: sqlite3.Connection, *, everything: bool = False) -> int:
    """Settle every unsettled paylist that is due (or all of them), oldest first; how many."""
    now = now_ns()
    due = conn.execute(
        "SELECT id FROM paylists WHERE settled_ns IS NULL AND (? OR due_ns <= ?)"
        " AND id NOT IN (SELECT paylist_id FROM paylist_holds) ORDER BY id",
        (int(everything), now),
    ).fetchall()
    for row in due:
        settle_paylist(conn, row["id"], now)
    return len(due)


def next_due_ns(conn: sqlite3.Connection) -> int | None:
    """When the next unsettled paylist falls due, or None when none waits."""
    row = conn.execute(
        "SELECT MIN(due_ns) FROM paylists WHERE settled_ns IS NULL"
        " AND id NOT IN (SELECT paylist_id FROM paylist_holds)"
    ).fetchone()
    return None if row[0] is None else int(row[0])


def date_paylist(conn: sqlite3.Connection, paylist_id: int, created_ns: int) -> None:
    """Date the paylist and its payments at `created_ns`, as if made then; a payment already
    settled is dated as settled then too, with its journal entry (`/_sandbox/paylists/{id}/
    creation-date`, and a seed's `daysAgo`)."""
    conn.execute("UPDATE paylists SET created_ns = ? WHERE id = ?", (created_ns, paylist_id))
    conn.execute(
        "UPDATE journal SET created_ns = ? WHERE reason = 'PAYMENT' AND"
        " json_extract(transaction_data, '$.payment_order_id') IN"
        " (SELECT CAST(id AS TEXT) FROM payments WHERE paylist_id = ? AND status != 'PENDING')",
        (created_ns, paylist_id),
    )
    conn.execute(
        "UPDATE payments SET updated_ns = ? WHERE paylist_id = ? AND status != 'PENDING'",
        (created_ns, paylist_id),
    )
    conn.execute(
        "UPDATE payments SET created_ns = ? WHERE paylist_id = ?", (created_ns, paylist_id)
    )
