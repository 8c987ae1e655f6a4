"""The real service's other read endpoints (service-contract.md, "Beyond the interface").

A worker by email, a paylist by id, the paylists listing and a payment by id. Another client's
object answers 404, exactly as a missing one does.
"""

from __future__ import annotations

import sqlite3
from decimal import Decimal

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from reconciler.sandbox.clients import authenticate
from reconciler.sandbox.context import sandbox_of
from reconciler.sandbox.jsontext import JSONText
from reconciler.sandbox.money import from_cents
from reconciler.sandbox.paging import Paging, spring_page
from reconciler.sandbox.params import path_id
from reconciler.sandbox.paylists import owned_row, paylist_json
from reconciler.sandbox.payments import date_range, payment_json
from reconciler.sandbox.problems import FieldError, Problem, validation_problem
from reconciler.sandbox.workers import INVITATION_SENT, worker_json

SCHEMA: tuple[str, ...] = ()

_NOT_ONBOARDING = "the worker has not started the onboarding process"


async def worker_by_email(request: Request) -> Response:
    """The client's agreement for an email (case ignored): the open one with the highest id,
    else the highest; 404 when none, or when it is still INVITATION_SENT."""
    client_id = authenticate(request)
    email = request.query_params.get("email", "").strip()
    if not email:
        raise validation_problem([FieldError("is required", field="email")], what="the query")
    with sandbox_of(request).store.read() as conn:
        row = conn.execute(
            "SELECT id, status FROM agreements WHERE client_id = ? AND lower(email) = lower(?)"
            " ORDER BY (status = 'ENDED'), id DESC LIMIT 1",
            (client_id, email),
        ).fetchone()
        if row is None:
            raise Problem(404, f"no worker with the email {email[:80]!r}")
        if row["status"] == INVITATION_SENT:
            raise Problem(404, _NOT_ONBOARDING)
        return JSONText(worker_json(conn, row["id"]))


async def paylist_by_id(request: Request) -> Response:
    client_id = authenticate(request)
    paylist_id = path_id(request, "paylistId", what="paylist")
    with sandbox_of(request).store.read() as conn:
        row = owned_row(conn, "paylists", paylist_id, client_id, "paylist")
    return JSONText(paylist_json(row))


async def list_paylists(request: Request) -> Response:
    """The client's paylists with startDate <= creation_date < endDate, by ascending id:
    `{paylistId, flowStage, description, total}`, `pageable`, `totalElements`."""
    client_id = authenticate(request)
    start, end = date_range(request)
    sandbox = sandbox_of(request)
    paging = sandbox.paging(request)
    where, args = "client_id = ? AND created_ns < ?", [client_id, end]
    if start is not None:
        where, args = f"{where} AND created_ns >= ?", [*args, start]
    with sandbox.store.read() as conn:
        total = int(
            conn.execute(f"SELECT COUNT(*) FROM paylists WHERE {where}", args).fetchone()[0]
        )
        rows = [] if paging.offset >= total else _paylist_rows(conn, where, args, paging)
    page = spring_page(rows, paging, total)
    return JSONText({key: page[key] for key in ("content", "pageable", "totalElements")})


def _paylist_rows(
    conn: sqlite3.Connection, where: str, args: list[int], paging: Paging
) -> list[dict[str, object]]:
    rows = conn.execute(
        f"SELECT p.id, p.description,"
        "  (SELECT COALESCE(SUM(amount_cents), 0) FROM payments WHERE paylist_id = p.id) AS cents,"
        "  EXISTS (SELECT 1 FROM payments WHERE paylist_id = p.id AND status = 'PENDING') AS busy"
        f" FROM paylists AS p WHERE {where} ORDER BY p.id LIMIT ? OFFSET ?",
        [*args, paging.size, paging.offset],
    ).fetchall()
    return [
        {
            "paylistId": row["id"],
            "flowStage": "PROCESSING" if row["busy"] else "COMPLETED",
            "description": row["description"],
            "total": from_cents(row["cents"]) if row["cents"] else Decimal("0.00"),
        }
        for row in rows
    ]


async def payment_by_id(request: Request) -> Response:
    client_id = authenticate(request)
    payment_id = path_id(request, "paymentId", what="payment")
    with sandbox_of(request).store.read() as conn:
        row = owned_row(conn, "payments", payment_id, client_id, "payment")
        return JSONText(payment_json(conn, row["id"]))


ROUTES = [
    Route("/contract/workers", worker_by_email, methods=["GET"]),
    # The same path as the POST that creates a paylist (paylists.py): routed by method.
    Route("/payment-agent/paylists", list_paylists, methods=["GET"]),
    Route("/payment-agent/paylists/{paylistId}", paylist_by_id, methods=["GET"]),
    Route("/payment-agent/payments/{paymentId}", payment_by_id, methods=["GET"]),
]
