"""Payments: their rows and JSON, the internal idempotence key, and the date-range read."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from reconciler.sandbox.clients import authenticate
from reconciler.sandbox.context import sandbox_of
from reconciler.sandbox.emails import email_key
from reconciler.sandbox.jsontext import JSONText, RawJSON
from reconciler.sandbox.money import from_cents
from reconciler.sandbox.paging import Paging, spring_page
from reconciler.sandbox.problems import FieldError, validation_problem
from reconciler.sandbox.sqljson import json_array, json_object_sql, json_one
from reconciler.sandbox.timestamps import iso_us, now_ns, parse_iso

PENDING = "PENDING"
SUCCESS = "SUCCESS"
FAILED = "FAILED"

INSUFFICIENT_FUNDS = "INSUFFICIENT_FUNDS"
WALLET_DISABLED = "WALLET_DISABLED"
DUPLICATE_PAYMENT = "DUPLICATE_PAYMENT"

_INT64 = 2**63 - 1

SCHEMA = (
    # worker_id: the ACTIVE agreement the email named when the paylist was accepted.
    """
    CREATE TABLE IF NOT EXISTS payments (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        paylist_id INTEGER NOT NULL REFERENCES paylists (id),
        client_id INTEGER NOT NULL REFERENCES clients (id),
        worker_id INTEGER NOT NULL REFERENCES agreements (id),
        description TEXT NOT NULL,
        amount_cents INTEGER NOT NULL,
        worker_email TEXT NOT NULL,
        idempotence_key TEXT NOT NULL,
        status TEXT NOT NULL,
        cause TEXT,
        created_ns INTEGER NOT NULL,
        updated_ns INTEGER NOT NULL
    )
    """,
    "CREATE INDEX IF NOT EXISTS payments_by_paylist ON payments (paylist_id, id)",
    "CREATE INDEX IF NOT EXISTS payments_by_client ON payments (client_id, created_ns, id)",
    # The database itself keeps a second SUCCESS with one internal key out.
    """
    CREATE UNIQUE INDEX IF NOT EXISTS payments_one_success
    ON payments (client_id, idempotence_key) WHERE status = 'SUCCESS'
    """,
)


def internal_key(amount: Decimal, worker_email: str, description: str) -> str:
    """The payment's own idempotence key: MD5 of `"{amount:.2f}|{email lower}|{description}"`."""
    text = f"{amount:.2f}|{email_key(worker_email)}|{description}"
    return hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()


def _amount_text(cents: int) -> str:
    return format(from_cents(cents), "f")


#: SQL functions of one argument the queries below call (registered on the store's connection).
FUNCTIONS: dict[str, Callable[[Any], str | None]] = {
    "sandbox_amount": _amount_text,
    "sandbox_iso_us": iso_us,
}

#: A Payment as the service answers it (interface §2.4), field by field (`sqljson`); the
#: amount is a JSON number with its two places (`10000.00`).
_PAYMENT_JSON = json_object_sql(
    [
        ("id", "id"),
        ("description", "description"),
        ("amount", "json(sandbox_amount(amount_cents))"),
        ("worker_email", "worker_email"),
        ("paylist_id", "paylist_id"),
        ("idempotence_key", "idempotence_key"),
        ("creation_date", "sandbox_iso_us(created_ns)"),
        ("update_date", "sandbox_iso_us(updated_ns)"),
        ("status", "status"),
        ("cause", "cause"),
    ]
)


def payment_json(conn: sqlite3.Connection, payment_id: int) -> RawJSON:
    """One payment as a Payment's JSON text."""
    return json_one(conn, f"SELECT {_PAYMENT_JSON} FROM payments WHERE id = ?", [payment_id])


def _page(
    conn: sqlite3.Connection, where: str, args: list[Any], paging: Paging
) -> tuple[RawJSON, int, int]:
    total = int(conn.execute(f"SELECT COUNT(*) FROM payments WHERE {where}", args).fetchone()[0])
    if paging.offset >= total:  # also keeps an absurd page number away from SQLite
        return RawJSON("[]"), 0, total
    # The page's ids first: where ORDER BY needs a sort (the date range), SQLite would write
    # the JSON of every row in the range before it sorted them and skipped to the page.
    page = f"SELECT id FROM payments WHERE {where} ORDER BY id LIMIT ? OFFSET ?"
    items, count = json_array(
        conn,
        f"SELECT {_PAYMENT_JSON} FROM payments WHERE id IN ({page}) ORDER BY id",
        [*args, paging.size, paging.offset],
    )
    return items, count, total


def paylist_page(
    conn: sqlite3.Connection, paylist_id: int, paging: Paging
) -> tuple[RawJSON, int, int]:
    """One page of a paylist's payments by ascending id as a JSON array of Payments, how many
    it holds, and how many the paylist holds."""
    return _page(conn, "paylist_id = ?", [paylist_id], paging)


def range_page(
    conn: sqlite3.Connection, client_id: int, start: int | None, end: int, paging: Paging
) -> tuple[RawJSON, int, int]:
    """One page of the client's payments with start <= created < end (no start: from the
    first), by ascending id, as `paylist_page` gives it."""
    where, args = "client_id = ? AND created_ns < ?", [client_id, end]
    if start is not None:
        where, args = f"{where} AND created_ns >= ?", [*args, start]
    return _page(conn, where, args, paging)


def date_range(request: Request) -> tuple[int | None, int]:
    """`startDate` (inclusive, default none) and `endDate` (exclusive, default now) in ns."""
    bounds: dict[str, int | None] = {"startDate": None, "endDate": None}
    errors = []
    for name in bounds:
        raw = request.query_params.get(name)
        if raw is None:
            continue
        try:
            # Clamped into SQLite's integers: years past 2262 are simply "after everything".
            bounds[name] = min(max(parse_iso(raw), -_INT64), _INT64)
        except ValueError as error:
            errors.append(FieldError(f"{error}, got {raw[:60]!r}", field=name))
    if errors:
        raise validation_problem(errors, what="the query")
    end = bounds["endDate"]
    return bounds["startDate"], now_ns() if end is None else end


async def list_payments(request: Request) -> Response:
    """The client's payments with startDate <= creation_date < endDate, by ascending id."""
    client_id = authenticate(request)
    start, end = date_range(request)
    paging = sandbox_of(request).paging(request)
    with sandbox_of(request).store.read() as conn:
        items, count, total = range_page(conn, client_id, start, end, paging)
    page = spring_page(items, paging, total, count=count)
    # This read's envelope is only these three fields (contract, "envelopes").
    return JSONText({key: page[key] for key in ("content", "pageable", "totalElements")})


ROUTES = [Route("/payment-agent/payments", list_payments, methods=["GET"])]
