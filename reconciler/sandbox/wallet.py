"""The client wallet and its journal: reads, and the two ways money moves (payment, top-up).

Every movement changes the balance and writes its journal entry in the caller's transaction,
so the journal always adds up to the balance's changes.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from reconciler.sandbox import events
from reconciler.sandbox.clients import authenticate
from reconciler.sandbox.context import sandbox_of
from reconciler.sandbox.jsontext import JSONText
from reconciler.sandbox.money import MAX_BALANCE_CENTS, from_cents
from reconciler.sandbox.params import path_id
from reconciler.sandbox.problems import Problem
from reconciler.sandbox.timestamps import iso_us

WITHDRAWAL = "WITHDRAWAL"
DEPOSIT = "DEPOSIT"
PAYMENT = "PAYMENT"
TOP_UP = "TOP_UP"

_MAX_OFFSET = 2**62

SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS journal (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        wallet_id INTEGER NOT NULL REFERENCES wallets (id),
        client_id INTEGER NOT NULL REFERENCES clients (id),
        idempotence_key TEXT NOT NULL,
        amount_cents INTEGER NOT NULL,
        reason TEXT NOT NULL,
        operation TEXT NOT NULL,
        transaction_data TEXT NOT NULL,
        created_ns INTEGER NOT NULL
    )
    """,
    "CREATE INDEX IF NOT EXISTS journal_by_client ON journal (client_id, id)",
)


@dataclass(frozen=True, slots=True)
class Entry:
    """A journal entry just written."""

    journal_id: int
    idempotence_key: str
    amount_cents: int


def wallet_row(conn: sqlite3.Connection, client_id: int) -> sqlite3.Row:
    row: sqlite3.Row = conn.execute(
        "SELECT * FROM wallets WHERE client_id = ?", (client_id,)
    ).fetchone()
    return row


def _move(
    conn: sqlite3.Connection,
    client_id: int,
    *,
    amount_cents: int,
    key: str,
    reason: str,
    operation: str,
    data: dict[str, str],
    now: int,
) -> Entry:
    wallet = wallet_row(conn, client_id)
    conn.execute(
        "UPDATE wallets SET balance_cents = balance_cents + ?, wallet_version = wallet_version + 1"
        " WHERE id = ?",
        (amount_cents, wallet["id"]),
    )
    cursor = conn.execute(
        "INSERT INTO journal (wallet_id, client_id, idempotence_key, amount_cents, reason,"
        " operation, transaction_data, created_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (wallet["id"], client_id, key, amount_cents, reason, operation, json.dumps(data), now),
    )
    return Entry(int(cursor.lastrowid or 0), key, amount_cents)


def withdraw_payment(conn: sqlite3.Connection, payment: sqlite3.Row, now: int) -> Entry:
    """Pay `payment` out of its client's wallet: WITHDRAWAL / PAYMENT, a negative amount."""
    return _move(
        conn,
        payment["client_id"],
        amount_cents=-payment["amount_cents"],
        key=payment["idempotence_key"],
        reason=PAYMENT,
        operation=WITHDRAWAL,
        data={"payment_order_id": str(payment["id"]), "payment_purpose": payment["description"]},
        now=now,
    )


def top_up(conn: sqlite3.Connection, client_id: int, amount_cents: int, now: int) -> Entry:
    """Money into the client's wallet: DEPOSIT / TOP_UP, a positive amount, and its event."""
    account = conn.execute(
        "SELECT balance_cents FROM wallets WHERE client_id = ?", (client_id,)
    ).fetchone()
    if account is None:
        raise Problem(404, f"client {client_id} not found")
    if account["balance_cents"] + amount_cents > MAX_BALANCE_CENTS:
        raise Problem(400, f"the balance would pass {from_cents(MAX_BALANCE_CENTS)}")
    entry = _move(
        conn,
        client_id,
        amount_cents=amount_cents,
        key=uuid.uuid4().hex,
        reason=TOP_UP,
        operation=DEPOSIT,
        data={},
        now=now,
    )
    events.wallet_topped_up(conn, client_id, entry.journal_id, entry.idempotence_key, amount_cents)
    return entry


def wallet_json(row: sqlite3.Row) -> dict[str, Any]:
    """The Wallet (interface §2.5)."""
    return {
        "id": row["id"],
        "wallet_version": row["wallet_version"],
        "client_id": row["client_id"],
        "enabled": bool(row["enabled"]),
        "balance": from_cents(row["balance_cents"]),
        "over_draft_limit": from_cents(row["over_draft_limit_cents"]),
        "created_at": iso_us(row["created_ns"]),
    }


def entry_json(row: sqlite3.Row) -> dict[str, Any]:
    """A journal entry (interface §2.6)."""
    return {
        "journal_id": row["id"],
        "wallet_id": row["wallet_id"],
        "client_id": row["client_id"],
        "idempotence_key": row["idempotence_key"],
        "amount": from_cents(row["amount_cents"]),
        "reason": row["reason"],
        "operation": row["operation"],
        "transaction_data": json.loads(row["transaction_data"]),
        "created_at": iso_us(row["created_ns"]),
    }


# --- endpoints ------------------------------------------------------------------------------


async def get_wallet(request: Request) -> Response:
    client_id = authenticate(request)
    asked = path_id(request, "clientId", what="client")
    if asked != client_id:  # another client's wallet answers exactly as a missing one
        raise Problem(404, f"client {asked} not found")
    with sandbox_of(request).store.read() as conn:
        row = wallet_row(conn, client_id)
    return JSONText(wallet_json(row))


async def list_transactions(request: Request) -> Response:
    """The client's journal by ascending journal_id; the envelope is `content` only."""
    client_id = authenticate(request)
    paging = sandbox_of(request).paging(request)
    if paging.offset > _MAX_OFFSET:  # past any journal, and past what SQLite can take
        return JSONText({"content": []})
    with sandbox_of(request).store.read() as conn:
        rows = conn.execute(
            "SELECT * FROM journal WHERE client_id = ? ORDER BY id LIMIT ? OFFSET ?",
            (client_id, paging.size, paging.offset),
        ).fetchall()
    return JSONText({"content": [entry_json(row) for row in rows]})


ROUTES = [
    Route("/client-wallet/clients/{clientId}/wallet", get_wallet, methods=["GET"]),
    Route("/client-wallet/clients/transactions", list_transactions, methods=["GET"]),
]
