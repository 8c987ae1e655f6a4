"""Paylists: creation (validated, idempotent by key) and the payments of one paylist.

A paylist is accepted whole or not at all. Its payments start PENDING; `processing` settles
them later. The same idempotence key with the same content answers the original paylist, so
a client may retry a creation whose answer it never saw.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from reconciler.sandbox import payments
from reconciler.sandbox.bodies import read_json
from reconciler.sandbox.clients import authenticate
from reconciler.sandbox.context import sandbox_of
from reconciler.sandbox.emails import email_key
from reconciler.sandbox.jsontext import JSONText
from reconciler.sandbox.money import MAX_AMOUNT, to_cents
from reconciler.sandbox.paging import spring_page
from reconciler.sandbox.params import path_id
from reconciler.sandbox.problems import FieldError, Problem, validation_problem
from reconciler.sandbox.timestamps import iso_ns, now_ns
from reconciler.sandbox.validation import ObjectReader

KEY_LENGTH = 32
MAX_PAYMENTS = 1000

SCHEMA = (
    # content: the canonical JSON of what was sent (description and payments in order), so a
    # replay of the key can be told from a reuse with other content. due_ns: when the sandbox
    # settles it by itself; settled_ns: null until it has.
    """
    CREATE TABLE IF NOT EXISTS paylists (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        client_id INTEGER NOT NULL REFERENCES clients (id),
        description TEXT NOT NULL,
        idempotence_key TEXT NOT NULL,
        content TEXT NOT NULL,
        created_ns INTEGER NOT NULL,
        due_ns INTEGER NOT NULL,
        settled_ns INTEGER,
        UNIQUE (client_id, idempotence_key)
    )
    """,
    "CREATE INDEX IF NOT EXISTS paylists_unsettled ON paylists (due_ns) WHERE settled_ns IS NULL",
    # Paylists whose processing a test holds (`/_sandbox/paylists/{id}/hold`): their payments
    # stay PENDING, even on `/_sandbox/process`, until released. A table of its own, so a
    # database made before it existed gains it unchanged.
    """
    CREATE TABLE IF NOT EXISTS paylist_holds (
        paylist_id INTEGER PRIMARY KEY REFERENCES paylists (id)
    )
    """,
)


@dataclass(frozen=True, slots=True)
class PaymentItem:
    """One valid payment item of a creation body."""

    description: str
    amount: Decimal
    worker_email: str

    @property
    def key(self) -> str:
        return payments.internal_key(self.amount, self.worker_email, self.description)


@dataclass(frozen=True, slots=True)
class NewPaylist:
    """A creation body that is well formed (whether its workers are ACTIVE is checked later)."""

    description: str
    idempotence_key: str
    items: tuple[PaymentItem, ...]

    def content(self) -> str:
        """What a replay must repeat: the description and the payments, in order.

        Amounts compare by value (10.5 is 10.50) and emails ignoring case, as the payment's
        own key does.
        """
        lines = [
            [item.description, to_cents(item.amount), email_key(item.worker_email)]
            for item in self.items
        ]
        return json.dumps([self.description, lines], ensure_ascii=False)


def _read_amount(reader: ObjectReader) -> Decimal | None:
    if reader.fields.get("amount") is None:
        reader.fail("amount", "is required")
        return None
    amount = reader.number("amount", minimum=Decimal("0.01"), maximum=MAX_AMOUNT)
    if amount is not None and amount != amount.quantize(Decimal("0.01")):
        reader.fail("amount", f"must have at most two decimal places, got {amount}")
        return None
    return amount


def _read_item(value: object, index: int) -> tuple[PaymentItem | None, list[FieldError]]:
    reader = ObjectReader(value, ("description", "amount", "worker_email"), index=index)
    if not reader.is_object:
        return None, reader.errors
    description = reader.string("description")
    amount = _read_amount(reader)
    worker_email = reader.string("worker_email")
    if not reader.ok:
        return None, reader.errors
    assert description is not None and amount is not None and worker_email is not None
    return PaymentItem(description, amount, worker_email), []


def _repeats(items: Sequence[tuple[int, PaymentItem]]) -> list[FieldError]:
    """Items with the same amount, email and description as an earlier one (one payment key)."""
    first: dict[str, int] = {}
    return [
        FieldError(
            f"repeats item {seen} (same amount, worker_email and description); "
            "make the description more specific",
            field="description",
            index=index,
        )
        for index, item in items
        if (seen := first.setdefault(item.key, index)) != index
    ]


def read_paylist(body: object, client_id: int) -> NewPaylist:
    """A well-formed creation body, or a Problem: 400 listing every error, 403, or 413."""
    reader = ObjectReader(body, ("description", "idempotence_key", "payments", "client_id"))
    if not reader.is_object:
        raise validation_problem(reader.errors)
    description = reader.string("description")
    key = reader.string("idempotence_key")
    if key is not None and len(key) != KEY_LENGTH:
        reader.fail("idempotence_key", f"must be exactly {KEY_LENGTH} characters, got {len(key)}")
    named_client = reader.integer("client_id", minimum=-(2**63), maximum=2**63 - 1)
    raw_items = reader.array("payments")
    if raw_items is not None and len(raw_items) > MAX_PAYMENTS:
        raise Problem(
            413, f"the paylist holds {len(raw_items)} payments; at most {MAX_PAYMENTS} are allowed"
        )
    if raw_items == []:
        reader.fail("payments", f"must hold 1 to {MAX_PAYMENTS} payments, got none")
    items: list[tuple[int, PaymentItem]] = []
    for index, value in enumerate(raw_items or []):
        item, errors = _read_item(value, index)
        reader.errors += errors
        if item is not None:
            items.append((index, item))
    reader.errors += _repeats(items)
    if not reader.ok:
        raise validation_problem(reader.errors)
    if named_client is not None and named_client != client_id:
        raise Problem(403, f"client_id {named_client} is not the client of the token")
    assert description is not None and key is not None
    return NewPaylist(description, key, tuple(item for _, item in items))


def _active_workers(
    conn: sqlite3.Connection, client_id: int, items: Sequence[PaymentItem]
) -> tuple[list[int], list[FieldError]]:
    """The ACTIVE agreement each item's worker_email names, or an error for each that names none."""
    ids, errors = [], []
    for index, item in enumerate(items):
        row = conn.execute(
            "SELECT id FROM agreements WHERE client_id = ? AND email_key = ? AND status = 'ACTIVE'",
            (client_id, email_key(item.worker_email)),
        ).fetchone()
        if row is None:
            errors.append(
                FieldError(
                    f"{item.worker_email[:80]} is not an ACTIVE worker of this client",
                    field="worker_email",
                    index=index,
                )
            )
        else:
            ids.append(int(row["id"]))
    return ids, errors


def create(
    conn: sqlite3.Connection, client_id: int, new: NewPaylist, process_delay_ms: int
) -> sqlite3.Row:
    """The paylist with `new`'s key: the original on a replay, else a new one (409, 400)."""
    existing: sqlite3.Row | None = conn.execute(
        "SELECT * FROM paylists WHERE client_id = ? AND idempotence_key = ?",
        (client_id, new.idempotence_key),
    ).fetchone()
    if existing is not None:
        if existing["content"] != new.content():
            raise Problem(
                409,
                f"idempotence_key {new.idempotence_key} was used for paylist {existing['id']}"
                " with other content; use a new key for a new paylist",
            )
        return existing
    worker_ids, errors = _active_workers(conn, client_id, new.items)
    if errors:
        raise validation_problem(errors)
    now = now_ns()
    cursor = conn.execute(
        "INSERT INTO paylists (client_id, description, idempotence_key, content, created_ns,"
        " due_ns) VALUES (?, ?, ?, ?, ?, ?)",
        (
            client_id,
            new.description,
            new.idempotence_key,
            new.content(),
            now,
            now + process_delay_ms * 1_000_000,
        ),
    )
    paylist_id = int(cursor.lastrowid or 0)
    conn.executemany(
        "INSERT INTO payments (paylist_id, client_id, worker_id, description, amount_cents,"
        " worker_email, idempotence_key, status, created_ns, updated_ns)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                paylist_id,
                client_id,
                worker_id,
                item.description,
                to_cents(item.amount),
                item.worker_email,
                item.key,
                payments.PENDING,
                now,
                now,
            )
            for item, worker_id in zip(new.items, worker_ids, strict=True)
        ],
    )
    created: sqlite3.Row = conn.execute(
        "SELECT * FROM paylists WHERE id = ?", (paylist_id,)
    ).fetchone()
    return created


def paylist_json(row: sqlite3.Row) -> dict[str, Any]:
    """A paylist as the creation answers it (interface §2.3)."""
    return {
        "id": row["id"],
        "description": row["description"],
        "client_id": row["client_id"],
        "idempotence_key": row["idempotence_key"],
        "creation_date": iso_ns(row["created_ns"]),
    }


# --- endpoints ------------------------------------------------------------------------------


async def create_paylist(request: Request) -> Response:
    client_id = authenticate(request)
    new = read_paylist(await read_json(request), client_id)
    sandbox = sandbox_of(request)
    with sandbox.store.write() as conn:
        row = create(conn, client_id, new, sandbox.timing.process_delay_ms)
    if sandbox.background is not None:
        sandbox.background.wake()
    return JSONText(paylist_json(row))


def owned_row(
    conn: sqlite3.Connection, table: str, row_id: int, client_id: int, what: str
) -> sqlite3.Row:
    """The client's row of `table` (paylists, payments) with this id; another client's is 404
    exactly as a missing one is."""
    row: sqlite3.Row | None = conn.execute(
        f"SELECT * FROM {table} WHERE id = ? AND client_id = ?", (row_id, client_id)
    ).fetchone()
    if row is None:
        raise Problem(404, f"{what} {row_id} not found")
    return row


async def paylist_payments(request: Request) -> Response:
    client_id = authenticate(request)
    paylist_id = path_id(request, "paylistId", what="paylist")
    paging = sandbox_of(request).paging(request)
    with sandbox_of(request).store.read() as conn:
        owned_row(conn, "paylists", paylist_id, client_id, "paylist")
        items, count, total = payments.paylist_page(conn, paylist_id, paging)
    return JSONText(spring_page(items, paging, total, count=count))


ROUTES = [
    Route("/payment-agent/paylists", create_paylist, methods=["POST"]),
    Route("/payment-agent/paylists/{paylistId}/payments", paylist_payments, methods=["GET"]),
]
