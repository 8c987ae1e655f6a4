"""Events the service sends to the client's webhook: recording them, one delivery attempt, and
the `/_sandbox/events` view.

An event is recorded, in the transaction of the change it reports, only when the client's
webhook is enabled and subscribes to its type; its URL and headers are taken then. `background`
delivers it: at least once, each failure retried after an exponential backoff, at most
`MAX_ATTEMPTS` times. Only loopback hosts are ever connected to.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
from starlette.routing import Route

from reconciler.sandbox import webhooks
from reconciler.sandbox.jsontext import RawJSON, dumps
from reconciler.sandbox.money import from_cents
from reconciler.sandbox.timestamps import iso_us, now_ns, unix_seconds

KYC = "KYC"
PAYMENT = "PAYMENT"
CLIENT_WALLET_TOP_UP = "CLIENT_WALLET_TOP_UP"

MAX_ATTEMPTS = 6
TIMEOUT_S = 5.0
NOT_LOOPBACK = "not delivered: the sandbox sends events only to loopback hosts"

SCHEMA = (
    # data: JSON text as written by `dumps` (its numbers exact); next_attempt_ns: null once
    # delivered or given up.
    """
    CREATE TABLE IF NOT EXISTS events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        client_id INTEGER NOT NULL REFERENCES clients (id),
        event_type TEXT NOT NULL,
        data TEXT NOT NULL,
        url TEXT NOT NULL,
        headers TEXT NOT NULL,
        created_ns INTEGER NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        delivered INTEGER NOT NULL DEFAULT 0,
        next_attempt_ns INTEGER
    )
    """,
    "CREATE INDEX IF NOT EXISTS events_waiting ON events (next_attempt_ns)"
    " WHERE next_attempt_ns IS NOT NULL",
    """
    CREATE TABLE IF NOT EXISTS event_attempts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id INTEGER NOT NULL REFERENCES events (id),
        at_ns INTEGER NOT NULL,
        status_code INTEGER,
        error TEXT
    )
    """,
    "CREATE INDEX IF NOT EXISTS event_attempts_by_event ON event_attempts (event_id, id)",
)


#: Events are sent by the service, not asked for; the sandbox shows them at `/_sandbox/events`.
ROUTES: list[Route] = []


# --- recording ------------------------------------------------------------------------------


def record(conn: sqlite3.Connection, client_id: int, event_type: str, data: dict[str, Any]) -> None:
    """Record an event for delivery, if the client's enabled webhook subscribes to its type."""
    hook = conn.execute(
        "SELECT url, headers, event_types, enabled FROM webhooks WHERE client_id = ?",
        (client_id,),
    ).fetchone()
    if hook is None or not hook["enabled"] or event_type not in json.loads(hook["event_types"]):
        return
    now = now_ns()
    conn.execute(
        "INSERT INTO events (client_id, event_type, data, url, headers, created_ns,"
        " next_attempt_ns) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            client_id,
            event_type,
            dumps(data),
            hook["url"],
            hook["headers"],
            now,
            now,
        ),
    )


def worker_activated(conn: sqlite3.Connection, agreement: sqlite3.Row) -> None:
    """KYC: a worker has become ACTIVE."""
    record(
        conn,
        agreement["client_id"],
        KYC,
        {
            "status": agreement["status"],
            "worker_id": agreement["id"],
            "client_id": agreement["client_id"],
            "external_id": agreement["external_id"],
            "worker_email": agreement["email"],
        },
    )


def payment_settled(conn: sqlite3.Connection, payment: sqlite3.Row, status: str, at: int) -> None:
    """PAYMENT: a payment has reached SUCCESS or FAILED at `at` (ns)."""
    record(
        conn,
        payment["client_id"],
        PAYMENT,
        {
            "payment_id": payment["id"],
            "client_id": payment["client_id"],
            "worker_id": payment["worker_id"],
            "paylist_id": payment["paylist_id"],
            "idempotency_key": payment["idempotence_key"],
            "email": payment["worker_email"],
            "transaction_status": status,
            "transaction_amount": from_cents(payment["amount_cents"]),
            "transaction_date_time": unix_seconds(at),
        },
    )


def wallet_topped_up(
    conn: sqlite3.Connection, client_id: int, journal_id: int, key: str, amount_cents: int
) -> None:
    """CLIENT_WALLET_TOP_UP: money has come into the wallet (journal entry `journal_id`)."""
    record(
        conn,
        client_id,
        CLIENT_WALLET_TOP_UP,
        {
            "transaction_id": journal_id,
            "transaction_type": "TRANSFER",
            "amount": from_cents(amount_cents),
            "reference_id": key,
        },
    )


# --- delivery -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one attempt got: a status code, or an error (no answer)."""

    at_ns: int
    status_code: int | None = None
    error: str | None = None

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def retry_delay_ns(attempts: int, base_ms: int) -> int:
    """How long after its `attempts`-th failed attempt an event is tried again."""
    return int(base_ms * 2 ** (attempts - 1) * 1_000_000)


def body_of(event: sqlite3.Row) -> str:
    """The JSON text POSTed for an event: `{event_type, data}`."""
    return dumps({"event_type": event["event_type"], "data": RawJSON(event["data"])})


async def attempt(http: httpx.AsyncClient, event: sqlite3.Row) -> Outcome:
    """POST the event once to its URL, with its headers; never raises."""
    host = urlsplit(event["url"]).hostname or ""
    if not webhooks.is_loopback(host):
        return Outcome(now_ns(), error=NOT_LOOPBACK)
    headers = {item["name"]: item["value"] for item in json.loads(event["headers"])}
    headers["Content-Type"] = "application/json"
    try:
        answer = await http.post(
            event["url"], content=body_of(event).encode("utf-8"), headers=headers
        )
    except httpx.TimeoutException:
        return Outcome(now_ns(), error=f"no answer within {TIMEOUT_S:g} s")
    except httpx.HTTPError as error:
        return Outcome(now_ns(), error=f"{type(error).__name__}: {error}")
    return Outcome(now_ns(), status_code=answer.status_code)


def note_outcome(
    conn: sqlite3.Connection, event_id: int, outcome: Outcome, retry_base_ms: int
) -> None:
    """Record one attempt and when (if ever) the event is tried again."""
    row = conn.execute("SELECT attempts FROM events WHERE id = ?", (event_id,)).fetchone()
    if row is None:
        return  # reset while the attempt was under way
    attempts = row["attempts"] + 1
    conn.execute(
        "INSERT INTO event_attempts (event_id, at_ns, status_code, error) VALUES (?, ?, ?, ?)",
        (event_id, outcome.at_ns, outcome.status_code, outcome.error),
    )
    if outcome.delivered or attempts >= MAX_ATTEMPTS:
        next_ns = None
    else:
        next_ns = outcome.at_ns + retry_delay_ns(attempts, retry_base_ms)
    conn.execute(
        "UPDATE events SET attempts = ?, delivered = ?, next_attempt_ns = ? WHERE id = ?",
        (attempts, int(outcome.delivered), next_ns, event_id),
    )


def waiting(conn: sqlite3.Connection, *, due_by: int | None) -> list[sqlite3.Row]:
    """Events still to be attempted (only those due by `due_by`, unless it is None)."""
    return conn.execute(
        "SELECT * FROM events WHERE next_attempt_ns IS NOT NULL AND (? OR next_attempt_ns <= ?)"
        " ORDER BY id",
        (int(due_by is None), due_by or 0),
    ).fetchall()


def next_attempt_ns(conn: sqlite3.Connection, *, excluding: Collection[int] = ()) -> int | None:
    """When the next event (other than those `excluding`) falls due, or None when none waits."""
    # The soonest len(excluding) + 1 events hold at least one that is not excluded.
    rows = conn.execute(
        "SELECT id, next_attempt_ns FROM events WHERE next_attempt_ns IS NOT NULL"
        " ORDER BY next_attempt_ns LIMIT ?",
        (len(excluding) + 1,),
    )
    return next((int(row[1]) for row in rows if row[0] not in excluding), None)


# --- the /_sandbox/events view --------------------------------------------------------------


def all_events(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every event with its attempts, oldest first."""
    attempts: dict[int, list[dict[str, Any]]] = {}
    for row in conn.execute("SELECT * FROM event_attempts ORDER BY id"):
        shown: dict[str, Any] = {"at": iso_us(row["at_ns"])}
        if row["status_code"] is not None:
            shown["status_code"] = row["status_code"]
        if row["error"] is not None:
            shown["error"] = row["error"]
        attempts.setdefault(row["event_id"], []).append(shown)
    return [
        {
            "id": row["id"],
            "event_type": row["event_type"],
            "client_id": row["client_id"],
            "data": RawJSON(row["data"]),
            "attempts": attempts.get(row["id"], []),
            "delivered": bool(row["delivered"]),
        }
        for row in conn.execute("SELECT * FROM events ORDER BY id")
    ]
