"""Workers: the worker list, bulk invitations and inactivation (one row per agreement).

Invitation items are read as interface §2.2 says (`read_batch`): every error in a batch at once,
and nothing created unless the whole batch is valid. The worker list's deep pages are index
ranges into the ids of the lists read lately (`kept_ids`), kept while the database is unchanged.
"""

from __future__ import annotations

import sqlite3
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from reconciler.sandbox.bodies import read_json
from reconciler.sandbox.clients import authenticate
from reconciler.sandbox.context import sandbox_of
from reconciler.sandbox.emails import email_key as mailbox_key
from reconciler.sandbox.jsontext import JSONText, RawJSON
from reconciler.sandbox.paging import Paging, spring_page
from reconciler.sandbox.params import path_id, query_integer
from reconciler.sandbox.problems import FieldError, Problem, validation_problem
from reconciler.sandbox.sqljson import json_array, json_object_sql, json_one
from reconciler.sandbox.timestamps import iso_ms_offset, now_ns
from reconciler.sandbox.validation import ObjectReader, country_name

ACTIVE = "ACTIVE"
INVITATION_SENT = "INVITATION_SENT"
VERIFICATION_PENDING = "VERIFICATION_PENDING"
ENDED = "ENDED"
INACTIVATED = "INACTIVATED"

#: The worker list's statusId filter (interface §2.1); INACTIVATED (5) cannot be filtered on.
STATUS_BY_ID = {0: ACTIVE, 1: INVITATION_SENT, 2: VERIFICATION_PENDING, 3: ENDED}
INACTIVATED_ID = 5
#: An open agreement: the same email or externalId cannot be invited again while one exists.
OPEN_STATUSES = (ACTIVE, INVITATION_SENT, VERIFICATION_PENDING)

_OPEN_SQL = "('ACTIVE', 'INVITATION_SENT', 'VERIFICATION_PENDING')"

SCHEMA = (
    # invited_*: what the client sent; first_name .. country_iso: what the worker answered,
    # null while INVITATION_SENT (as the service's public example shows).
    """
    CREATE TABLE IF NOT EXISTS agreements (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        client_id INTEGER NOT NULL REFERENCES clients (id),
        status TEXT NOT NULL,
        type_of_worker TEXT NOT NULL,
        email TEXT NOT NULL,
        email_key TEXT NOT NULL,
        external_id TEXT,
        job_title TEXT,
        email_text TEXT,
        invited_name TEXT NOT NULL,
        invited_surname TEXT NOT NULL,
        invited_legal_name TEXT,
        invited_country_iso TEXT NOT NULL,
        first_name TEXT,
        last_name TEXT,
        legal_name TEXT,
        country_iso TEXT,
        created_ns INTEGER NOT NULL,
        updated_ns INTEGER NOT NULL
    )
    """,
    "CREATE INDEX IF NOT EXISTS agreements_by_client ON agreements (client_id, id)",
    "CREATE INDEX IF NOT EXISTS agreements_by_status ON agreements (client_id, status, id)",
    # The database itself refuses a second open agreement for one person: the last line of
    # defence behind the checks that give the 400.
    f"""
    CREATE UNIQUE INDEX IF NOT EXISTS agreements_open_email
    ON agreements (client_id, email_key) WHERE status IN {_OPEN_SQL}
    """,
    f"""
    CREATE UNIQUE INDEX IF NOT EXISTS agreements_open_external_id
    ON agreements (client_id, external_id)
    WHERE status IN {_OPEN_SQL} AND external_id IS NOT NULL
    """,
)


# --- agreements: queries --------------------------------------------------------------------


MAX_BATCH = 100
WORKER_TYPES = ("Worker", "Business")

INVITATION_FIELDS = (
    "workerName",
    "workerSurname",
    "typeOfWorker",
    "workerLegalName",
    "workerEmail",
    "countryIso",
    "jobTitle",
    "workerEmailText",
    "externalId",
)


@dataclass(frozen=True, slots=True)
class Invitation:
    """One valid invitation item (interface §2.2)."""

    name: str
    surname: str
    type_of_worker: str
    email: str
    country_iso: str
    legal_name: str | None = None
    job_title: str | None = None
    email_text: str | None = None
    external_id: str | None = None

    @property
    def email_key(self) -> str:
        return mailbox_key(self.email)


def read_invitation(
    value: object, index: int | None = None
) -> tuple[Invitation | None, list[FieldError]]:
    """One invitation item, or every error in it."""
    reader = ObjectReader(value, INVITATION_FIELDS, index=index)
    if not isinstance(value, dict):
        return None, reader.errors
    name = reader.string("workerName")
    surname = reader.string("workerSurname")
    type_of_worker = reader.choice("typeOfWorker", WORKER_TYPES)
    legal_name = reader.string("workerLegalName", required=type_of_worker == "Business")
    email = reader.email("workerEmail")
    country_iso = reader.country("countryIso")
    job_title = reader.string("jobTitle", required=False)
    email_text = reader.string("workerEmailText", required=False)
    external_id = reader.string("externalId", required=False)
    if external_id is not None and not external_id.strip():
        reader.fail("externalId", "must not be blank (omit it or send null)")
    if not reader.ok:
        return None, reader.errors
    assert name and surname and type_of_worker and email and country_iso
    return Invitation(
        name=name,
        surname=surname,
        type_of_worker=type_of_worker,
        email=email,
        country_iso=country_iso,
        legal_name=legal_name,
        job_title=job_title,
        email_text=email_text,
        external_id=external_id,
    ), []


def duplicates_within(indexed: Sequence[tuple[int, Invitation]]) -> list[FieldError]:
    """The same email (ignoring case) or the same externalId twice in one batch."""
    errors = []
    first_email: dict[str, int] = {}
    first_external: dict[str, int] = {}
    for index, item in indexed:
        if (seen := first_email.setdefault(item.email_key, index)) != index:
            errors.append(FieldError(f"repeats the email of item {seen}", "workerEmail", index))
        external_id = item.external_id
        if (
            external_id is not None
            and (seen := first_external.setdefault(external_id, index)) != index
        ):
            errors.append(FieldError(f"repeats the externalId of item {seen}", "externalId", index))
    return errors


def read_batch(body: object) -> list[Invitation]:
    """A whole valid batch, or a Problem that lists every error (nothing is created)."""
    if not isinstance(body, list):
        raise Problem(400, "the request body must be a JSON array of invitation items")
    if not body:
        raise Problem(400, "the batch is empty: send 1 to 100 invitation items")
    if len(body) > MAX_BATCH:
        raise Problem(413, f"the batch holds {len(body)} items; at most {MAX_BATCH} are allowed")
    indexed: list[tuple[int, Invitation]] = []
    errors: list[FieldError] = []
    for index, value in enumerate(body):
        item, item_errors = read_invitation(value, index)
        errors += item_errors
        if item is not None:
            indexed.append((index, item))
    errors += duplicates_within(indexed)
    if errors:
        raise validation_problem(sorted(errors, key=lambda e: e.index or 0), "the batch")
    return [item for _, item in indexed]


def _open_agreement(
    conn: sqlite3.Connection, client_id: int, column: str, value: str
) -> sqlite3.Row | None:
    """The client's open agreement whose `column` (email_key or external_id) is `value`."""
    row: sqlite3.Row | None = conn.execute(
        f"SELECT id, status FROM agreements WHERE client_id = ? AND {column} = ?"
        f" AND status IN {_OPEN_SQL}",
        (client_id, value),
    ).fetchone()
    return row


def open_conflicts(
    conn: sqlite3.Connection, client_id: int, items: Sequence[Invitation]
) -> list[FieldError]:
    """Items whose email or externalId already has an open agreement with this client."""
    errors = []
    for index, item in enumerate(items):
        if (row := _open_agreement(conn, client_id, "email_key", item.email_key)) is not None:
            errors.append(_conflict(row, "workerEmail", item.email, index))
        external_id = item.external_id
        if (
            external_id is not None
            and (row := _open_agreement(conn, client_id, "external_id", external_id)) is not None
        ):
            errors.append(_conflict(row, "externalId", external_id, index))
    return errors


def _conflict(row: sqlite3.Row, field: str, value: str, index: int) -> FieldError:
    return FieldError(
        f"{value} already has an open agreement ({row['id']}, {row['status']})", field, index
    )


def insert_agreement(
    conn: sqlite3.Connection, client_id: int, item: Invitation, status: str, now: int
) -> int:
    """A new agreement in `status`; names and country show once it has left INVITATION_SENT."""
    answered = status != INVITATION_SENT
    cursor = conn.execute(
        """
        INSERT INTO agreements (
            client_id, status, type_of_worker, email, email_key, external_id, job_title,
            email_text, invited_name, invited_surname, invited_legal_name, invited_country_iso,
            first_name, last_name, legal_name, country_iso, created_ns, updated_ns
        ) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """,
        (
            client_id,
            status,
            item.type_of_worker,
            item.email,
            item.email_key,
            item.external_id,
            item.job_title,
            item.email_text,
            item.name,
            item.surname,
            item.legal_name,
            item.country_iso,
            item.name if answered else None,
            item.surname if answered else None,
            item.legal_name if answered else None,
            item.country_iso if answered else None,
            now,
            now,
        ),
    )
    return int(cursor.lastrowid or 0)


def invite(conn: sqlite3.Connection, client_id: int, items: Sequence[Invitation]) -> list[int]:
    """Create every item's agreement, or none: a conflicting item is a Problem."""
    if errors := open_conflicts(conn, client_id, items):
        raise validation_problem(errors, "the batch")
    now = now_ns()
    return [insert_agreement(conn, client_id, item, INVITATION_SENT, now) for item in items]


def _country_name(iso: str | None) -> str | None:
    return None if iso is None else country_name(iso)


#: SQL functions of one argument the queries below call (registered on the store's connection).
FUNCTIONS: dict[str, Callable[[Any], str | None]] = {
    "sandbox_country_name": _country_name,
    "sandbox_iso_ms_offset": iso_ms_offset,
}

#: A Worker as the service shows it (interface §2.1), field by field: its camelCase name and
#: the SQL that reads it from an agreements row (`sqljson`).
_WORKER_JSON = json_object_sql(
    [
        ("agreementId", "id"),
        ("firstName", "first_name"),
        ("lastName", "last_name"),
        ("legalName", "legal_name"),
        ("email", "email"),
        ("jobTitle", "job_title"),
        ("country", "sandbox_country_name(country_iso)"),
        ("externalId", "external_id"),
        ("workerCreationDate", "sandbox_iso_ms_offset(created_ns)"),
        ("status", "status"),
    ]
)


def worker_json(conn: sqlite3.Connection, agreement_id: int) -> RawJSON:
    """One agreement as a Worker's JSON text."""
    return json_one(conn, f"SELECT {_WORKER_JSON} FROM agreements WHERE id = ?", [agreement_id])


#: The ids of the lists read lately, in order, while the database is unchanged: a deep page is
#: an index range from them (keyset), not an OFFSET that skips every row before it, and the
#: count is their number, not a COUNT(*) per page. Several clients read their lists at once
#: (`plan --all` of several accounts): each keeps its own, the least recently read dropped
#: first, at most `_IDS_KEPT` ids in all (8 bytes each).
_IDS: OrderedDict[tuple[int, int, int, str | None], array[int]] = OrderedDict()
_IDS_KEPT = 2_000_000
_IDS_LOCK = threading.Lock()


def kept_ids(key: tuple[int, int, int, str | None]) -> array[int] | None:
    with _IDS_LOCK:
        ids = _IDS.get(key)
        if ids is not None:
            _IDS.move_to_end(key)
        return ids


def keep_ids(key: tuple[int, int, int, str | None], ids: array[int]) -> None:
    with _IDS_LOCK:
        _IDS[key] = ids
        _IDS.move_to_end(key)
        kept = sum(len(value) for value in _IDS.values())
        while kept > _IDS_KEPT and len(_IDS) > 1:
            _, dropped = _IDS.popitem(last=False)
            kept -= len(dropped)


def list_page(
    conn: sqlite3.Connection,
    client_id: int,
    status: str | None,
    paging: Paging,
    version: tuple[int, int] | None = None,
) -> tuple[RawJSON, int, int]:
    """One page of the client's agreements by ascending id as a JSON array of Workers, how
    many it holds, and how many there are in all.

    `version` (the store's identity and write version) lets pages of one unchanged list share
    the list of ids; without it every call reads them afresh.
    """
    args: list[int | str]
    where, args = "client_id = ?", [client_id]
    if status is not None:
        where, args = "client_id = ? AND status = ?", [client_id, status]
    key = None if version is None else (*version, client_id, status)
    ids = kept_ids(key) if key is not None else None
    if ids is None:
        query = f"SELECT id FROM agreements WHERE {where} ORDER BY id"
        ids = array("q", (row[0] for row in conn.execute(query, args)))
        if key is not None:
            keep_ids(key, ids)
    total = len(ids)
    if paging.offset >= total:  # also keeps an absurd page number away from SQLite
        return RawJSON("[]"), 0, total
    first, last = ids[paging.offset], ids[min(paging.offset + paging.size, total) - 1]
    items, count = json_array(
        conn,
        f"SELECT {_WORKER_JSON} FROM agreements WHERE {where} AND id BETWEEN ? AND ? ORDER BY id",
        (*args, first, last),
    )
    return items, count, total


def inactivate(conn: sqlite3.Connection, client_id: int, agreement_id: int) -> bool | None:
    """Inactivate one of the client's agreements: whether it changed, None when not theirs."""
    row = conn.execute(
        "SELECT status FROM agreements WHERE id = ? AND client_id = ?", (agreement_id, client_id)
    ).fetchone()
    if row is None:
        return None
    if row["status"] == INACTIVATED:
        return False
    conn.execute(
        "UPDATE agreements SET status = ?, updated_ns = ? WHERE id = ?",
        (INACTIVATED, now_ns(), agreement_id),
    )
    return True


# --- endpoints ------------------------------------------------------------------------------


async def list_workers(request: Request) -> Response:
    client_id = authenticate(request)
    status_id = query_integer(request.query_params, "statusId")
    if status_id is not None and status_id not in STATUS_BY_ID:
        raise validation_problem(
            [FieldError(f"must be 0, 1, 2 or 3, got {status_id}", field="statusId")],
            what="the query",
        )
    status = None if status_id is None else STATUS_BY_ID[status_id]
    paging = sandbox_of(request).paging(request)
    with sandbox_of(request).store.read() as conn:
        store = sandbox_of(request).store
        items, count, total = list_page(
            conn, client_id, status, paging, (store.serial, store.version)
        )
    return JSONText(spring_page(items, paging, total, count=count))


async def invite_workers(request: Request) -> Response:
    client_id = authenticate(request)
    items = read_batch(await read_json(request))
    with sandbox_of(request).store.write() as conn:
        ids = invite(conn, client_id, items)
    return JSONResponse(
        [
            {
                "agreementId": agreement_id,
                "workerEmail": item.email,
                "externalId": item.external_id,
                "status": INVITATION_SENT,
            }
            for agreement_id, item in zip(ids, items, strict=True)
        ]
    )


async def set_agreement_status(request: Request) -> Response:
    client_id = authenticate(request)
    agreement_id = path_id(request, "agreementId", what="agreement")
    reader = ObjectReader(await read_json(request), ("status",))
    if reader.ok and (status := reader.string("status")) is not None and status != "inactivated":
        reader.fail("status", f"the only accepted value is 'inactivated', got {status[:40]!r}")
    if not reader.ok:
        raise validation_problem(reader.errors)
    with sandbox_of(request).store.write() as conn:
        changed = inactivate(conn, client_id, agreement_id)
    if changed is None:
        raise Problem(404, f"agreement {agreement_id} not found")
    return JSONResponse(
        {
            "agreement_id": agreement_id,
            "status": INACTIVATED,
            "status_id": INACTIVATED_ID,
            "changed": changed,
        }
    )


ROUTES = [
    Route("/contract/workers/list", list_workers, methods=["GET"]),
    Route("/contract/workers/inviteWorkersBulkLocked", invite_workers, methods=["POST"]),
    Route(
        "/contract-server/v2/general/worker/agreements/{agreementId}/status",
        set_agreement_status,
        methods=["POST"],
    ),
]


# --- moves the service makes by itself (driven by the sandbox controls) ---------------------

#: Where `POST /_sandbox/agreements/{id}/status` may move an agreement.
MOVABLE_STATUSES = (INVITATION_SENT, VERIFICATION_PENDING, ACTIVE, ENDED)


@dataclass(frozen=True, slots=True)
class Answers:
    """What the worker filled in on answering; None keeps what is there (or was invited)."""

    first_name: str | None = None
    last_name: str | None = None
    legal_name: str | None = None
    country_iso: str | None = None


def move_agreement(
    conn: sqlite3.Connection, agreement_id: int, status: str, answers: Answers
) -> sqlite3.Row:
    """Move any client's agreement to `status`, as the worker or the service would."""
    row = conn.execute("SELECT * FROM agreements WHERE id = ?", (agreement_id,)).fetchone()
    if row is None:
        raise Problem(404, f"agreement {agreement_id} not found")
    if status in OPEN_STATUSES and row["status"] not in OPEN_STATUSES:
        other = conn.execute(
            f"SELECT id FROM agreements WHERE client_id = ? AND id != ? AND status IN {_OPEN_SQL}"
            " AND (email_key = ? OR external_id = ?)",
            (row["client_id"], agreement_id, row["email_key"], row["external_id"]),
        ).fetchone()
        if other is not None:
            raise Problem(
                409, f"agreement {other['id']} is already open for the same email or externalId"
            )
    if status == INVITATION_SENT:
        filled: tuple[str | None, ...] = (None, None, None, None)
    else:
        filled = (
            answers.first_name or row["first_name"] or row["invited_name"],
            answers.last_name or row["last_name"] or row["invited_surname"],
            answers.legal_name or row["legal_name"] or row["invited_legal_name"],
            answers.country_iso or row["country_iso"] or row["invited_country_iso"],
        )
    conn.execute(
        "UPDATE agreements SET status = ?, first_name = ?, last_name = ?, legal_name = ?,"
        " country_iso = ?, updated_ns = ? WHERE id = ?",
        (status, *filled, now_ns(), agreement_id),
    )
    moved: sqlite3.Row = conn.execute(
        "SELECT * FROM agreements WHERE id = ?", (agreement_id,)
    ).fetchone()
    return moved
