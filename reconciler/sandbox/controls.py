"""The sandbox's own test controls under `/_sandbox/` (no token; not part of the service)."""

from __future__ import annotations

import sqlite3
from decimal import Decimal

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from reconciler.sandbox import clients, events, login, processing, wallet, workers
from reconciler.sandbox.bodies import read_json
from reconciler.sandbox.context import Sandbox, sandbox_of
from reconciler.sandbox.faults import FaultSettings
from reconciler.sandbox.jsontext import JSONText
from reconciler.sandbox.money import from_cents
from reconciler.sandbox.params import path_id, query_integer
from reconciler.sandbox.problems import FieldError, Problem, validation_problem
from reconciler.sandbox.timestamps import iso_ns, now_ns, parse_iso
from reconciler.sandbox.validation import ObjectReader


async def create_client(request: Request) -> Response:
    """`{name?, balance?, over_draft_limit?, enabled?, email?, password?}` -> 201
    `{client_id, token, wallet_id, email, password}`."""
    fields = ("name", "balance", "over_draft_limit", "enabled", "email", "password")
    reader = ObjectReader(await read_json(request, optional=True), fields)
    name = reader.string("name", required=False)
    email = reader.string("email", required=False)
    password = reader.string("password", required=False)
    balance = reader.money("balance")
    over_draft_limit = reader.money("over_draft_limit")
    enabled = reader.boolean("enabled", default=True)
    if not reader.ok:
        raise validation_problem(reader.errors)
    with sandbox_of(request).store.write() as conn:
        if email is not None and login.email_taken(conn, email):
            raise validation_problem([FieldError("another client has this email", field="email")])
        count = conn.execute("SELECT COUNT(*) FROM clients").fetchone()[0]
        client = clients.create_client(
            conn,
            name=name or f"Client {count + 1}",
            balance_cents=balance or 0,
            over_draft_limit_cents=over_draft_limit or 0,
            enabled=bool(enabled),
            email=email,
            password=password,
        )
    answer = {"client_id": client.client_id, "token": client.token, "wallet_id": client.wallet_id}
    answer |= {"email": client.email, "password": client.password}
    return JSONResponse(answer, status_code=201)


async def move_agreement(request: Request) -> Response:
    """`{status, firstName?, lastName?, legalName?, countryIso?}` -> the worker as listed."""
    agreement_id = path_id(request, "agreementId", what="agreement")
    reader = ObjectReader(
        await read_json(request), ("status", "firstName", "lastName", "legalName", "countryIso")
    )
    status = reader.choice("status", workers.MOVABLE_STATUSES)
    answers = workers.Answers(
        first_name=reader.string("firstName", required=False),
        last_name=reader.string("lastName", required=False),
        legal_name=reader.string("legalName", required=False),
        country_iso=reader.country("countryIso", required=False),
    )
    if not reader.ok or status is None:
        raise validation_problem(reader.errors)
    sandbox = sandbox_of(request)
    with sandbox.store.write() as conn:
        before = conn.execute(
            "SELECT status FROM agreements WHERE id = ?", (agreement_id,)
        ).fetchone()
        row = workers.move_agreement(conn, agreement_id, status, answers)
        if row["status"] == workers.ACTIVE and before["status"] != workers.ACTIVE:
            events.worker_activated(conn, row)
        worker = workers.worker_json(conn, agreement_id)
    _wake(sandbox)
    return JSONText(worker)


async def edit_agreement(request: Request) -> Response:
    """`{jobTitle?, firstName?, lastName?, legalName?}` -> the worker as listed: HR's edit in
    the service's screens (the status stays)."""
    agreement_id = path_id(request, "agreementId", what="agreement")
    reader = ObjectReader(await read_json(request), tuple(workers.EDITABLE))
    values = {name: reader.string(name, required=False) for name in workers.EDITABLE}
    if not reader.ok:
        raise validation_problem(reader.errors)
    fields = {workers.EDITABLE[name]: value for name, value in values.items() if value is not None}
    sandbox = sandbox_of(request)
    with sandbox.store.write() as conn:
        workers.edit_agreement(conn, agreement_id, fields)
        worker = workers.worker_json(conn, agreement_id)
    return JSONText(worker)


async def faults(request: Request) -> Response:
    """POST sets the faults (`{}` clears them), GET shows them."""
    sandbox = sandbox_of(request)
    if request.method == "POST":
        reader = ObjectReader(
            await read_json(request, optional=True),
            (
                "latency_ms",
                "error_rate",
                "error_status",
                "rate_limit_per_s",
                "drop_rate",
                "seed",
                "page_cost_ms",
                "methods",
            ),
        )
        one = Decimal(1)
        latency_ms = reader.integer("latency_ms", minimum=0, maximum=60_000)
        error_rate = reader.number("error_rate", minimum=Decimal(0), maximum=one)
        error_status = reader.integer("error_status", minimum=400, maximum=599)
        rate = reader.number("rate_limit_per_s", minimum=Decimal("0.001"), maximum=Decimal("1e6"))
        drop_rate = reader.number("drop_rate", minimum=Decimal(0), maximum=one)
        seed = reader.integer("seed", minimum=-(2**63), maximum=2**63 - 1)
        page_cost = reader.number("page_cost_ms", minimum=Decimal(0), maximum=Decimal(10_000))
        methods = None
        if reader.fields.get("methods") is not None:
            listed = reader.array("methods") or []
            methods = tuple(str(m).upper() for m in listed if isinstance(m, str))
            if len(methods) != len(listed) or not methods:
                reader.fail("methods", 'must be a non-empty array of HTTP methods, e.g. ["POST"]')
        if not reader.ok:
            raise validation_problem(reader.errors)
        sandbox.faults.configure(
            FaultSettings(
                latency_ms=latency_ms or 0,
                error_rate=float(error_rate or 0),
                error_status=error_status or 503,
                rate_limit_per_s=None if rate is None else float(rate),
                drop_rate=float(drop_rate or 0),
                seed=seed,
                page_cost_ms=float(page_cost or 0),
                methods=methods,
            )
        )
    return JSONResponse(sandbox.faults.settings.to_json())


async def requests(request: Request) -> Response:
    """The service requests completed after `since` (default 0: all of them)."""
    since = query_integer(request.query_params, "since") or 0
    return JSONResponse(sandbox_of(request).requests.since(since))


async def reset(request: Request) -> Response:
    """Empty every table, recreate the demo client (same id and token), clear faults and log."""
    sandbox = sandbox_of(request)
    with sandbox.store.write() as conn:
        demo = clients.reset(conn)
    if sandbox.background is not None:
        await sandbox.background.forget()
    sandbox.faults.configure(FaultSettings())
    sandbox.requests.clear()
    return JSONResponse({"client_id": demo.client_id, "token": demo.token})


def _wake(sandbox: Sandbox) -> None:
    if sandbox.background is not None:
        sandbox.background.wake()


async def top_up(request: Request) -> Response:
    """`{amount}` -> 201 `{journal_id, balance}`: a DEPOSIT / TOP_UP entry and its event."""
    client_id = path_id(request, "clientId", what="client")
    reader = ObjectReader(await read_json(request), ("amount",))
    amount = reader.money("amount")
    if reader.ok and amount is None:
        reader.fail("amount", "is required")
    elif amount == 0:
        reader.fail("amount", "must be greater than 0")
    if not reader.ok or amount is None:
        raise validation_problem(reader.errors)
    sandbox = sandbox_of(request)
    with sandbox.store.write() as conn:
        entry = wallet.top_up(conn, client_id, amount, now_ns())
        balance = wallet.wallet_row(conn, client_id)["balance_cents"]
    _wake(sandbox)
    return JSONText(
        {"journal_id": entry.journal_id, "balance": from_cents(balance)}, status_code=201
    )


async def process(request: Request) -> Response:
    """Settle every pending paylist and attempt every undelivered event now; then answer."""
    sandbox = sandbox_of(request)
    if sandbox.background is None:
        raise Problem(503, "the sandbox's background worker is not running")
    await sandbox.background.process_now()
    return JSONResponse({"processed": True})


async def hold_paylist(request: Request) -> Response:
    """`{held}` -> `{paylist_id, held}`: while held, the paylist's payments stay PENDING (neither
    its due time nor `/_sandbox/process` settles it); released, it is settled as usual."""
    paylist_id = path_id(request, "paylistId", what="paylist")
    reader = ObjectReader(await read_json(request), ("held",))
    if "held" not in reader.fields and reader.ok:
        reader.fail("held", "is required")
    held = reader.boolean("held", default=False)
    if not reader.ok or held is None:
        raise validation_problem(reader.errors)
    sandbox = sandbox_of(request)
    with sandbox.store.write() as conn:
        _paylist_row(conn, paylist_id)
        if held:
            conn.execute(
                "INSERT OR IGNORE INTO paylist_holds (paylist_id) VALUES (?)", (paylist_id,)
            )
        else:
            conn.execute("DELETE FROM paylist_holds WHERE paylist_id = ?", (paylist_id,))
    _wake(sandbox)
    return JSONResponse({"paylist_id": paylist_id, "held": held})


async def paylist_creation_date(request: Request) -> Response:
    """`{creation_date}` -> `{paylist_id, creation_date}`: the paylist and its payments are
    dated then, as if made at that time (for tests of date windows; nothing else changes). A
    payment already settled is dated as settled then too, with its journal entry: all of its
    money moved at that time. One still PENDING settles whenever it is settled."""
    paylist_id = path_id(request, "paylistId", what="paylist")
    reader = ObjectReader(await read_json(request), ("creation_date",))
    text = reader.string("creation_date")
    created_ns = None
    if text is not None:
        try:
            created_ns = parse_iso(text)
        except ValueError as error:
            reader.fail("creation_date", f"{error}, got {text[:60]!r}")
        if created_ns is not None and not 0 <= created_ns < 2**63:
            reader.fail("creation_date", "must be between 1970 and 2262, got " + text[:60])
            created_ns = None
    if not reader.ok or created_ns is None:
        raise validation_problem(reader.errors)
    with sandbox_of(request).store.write() as conn:
        _paylist_row(conn, paylist_id)
        processing.date_paylist(conn, paylist_id, created_ns)
    return JSONResponse({"paylist_id": paylist_id, "creation_date": iso_ns(created_ns)})


def _paylist_row(conn: sqlite3.Connection, paylist_id: int) -> None:
    if conn.execute("SELECT 1 FROM paylists WHERE id = ?", (paylist_id,)).fetchone() is None:
        raise Problem(404, f"paylist {paylist_id} not found")


async def list_events(request: Request) -> Response:
    """Every event with its delivery attempts, oldest first."""
    with sandbox_of(request).store.read() as conn:
        return JSONText(events.all_events(conn))


ROUTES = [
    Route("/_sandbox/clients", create_client, methods=["POST"]),
    Route("/_sandbox/agreements/{agreementId}/status", move_agreement, methods=["POST"]),
    Route("/_sandbox/agreements/{agreementId}/fields", edit_agreement, methods=["POST"]),
    Route("/_sandbox/faults", faults, methods=["GET", "POST"]),
    Route("/_sandbox/requests", requests, methods=["GET"]),
    Route("/_sandbox/reset", reset, methods=["POST"]),
    Route("/_sandbox/clients/{clientId}/top-up", top_up, methods=["POST"]),
    Route("/_sandbox/process", process, methods=["POST"]),
    Route("/_sandbox/events", list_events, methods=["GET"]),
    Route("/_sandbox/paylists/{paylistId}/hold", hold_paylist, methods=["POST"]),
    Route("/_sandbox/paylists/{paylistId}/creation-date", paylist_creation_date, methods=["POST"]),
]
