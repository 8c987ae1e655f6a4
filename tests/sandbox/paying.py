"""Helpers for the paylist, payment, wallet and event tests: bodies, controls, exact numbers.

Answers are read with `exact()`: amounts and event times as Decimal, as a client must read them.
"""

from __future__ import annotations

import itertools
import json
import uuid
from decimal import Decimal
from typing import Any

import httpx

from tests.sandbox.support import ClientAccess, Controls, invitation

PAYLISTS = "/payment-agent/paylists"
PAYMENTS = "/payment-agent/payments"
TRANSACTIONS = "/client-wallet/clients/transactions"
MICROSECONDS_Z = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z"
NANOSECONDS_Z = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z"
_descriptions = itertools.count(1)


def exact(answer: httpx.Response) -> Any:
    """The JSON body with every number that has a fraction as a Decimal, never a float."""
    return json.loads(answer.text, parse_float=Decimal)


def new_key() -> str:
    """A fresh 32-character idempotence key."""
    return uuid.uuid4().hex


def payment(worker_email: str, amount: str | int = "10.00", **fields: Any) -> dict[str, Any]:
    """A payment item with a fresh description; `amount` is sent as a JSON number."""
    item = {
        "description": f"Invoice {next(_descriptions)}",
        "amount": Decimal(amount),
        "worker_email": worker_email,
    }
    item.update(fields)
    return item


def paylist(*items: dict[str, Any], key: str | None = None, **fields: Any) -> dict[str, Any]:
    """A paylist creation body (`key` defaults to a fresh one)."""
    body = {
        "description": "March payroll",
        "idempotence_key": key or new_key(),
        "payments": list(items),
    }
    body.update(fields)
    return body


def encode(body: Any) -> bytes:
    """JSON bytes with Decimals written as their digits (`10.005`, not a rounded float)."""
    from reconciler.sandbox.jsontext import dumps  # only to write test bodies exactly

    return dumps(body).encode("utf-8")


def post_json(http: httpx.Client, path: str, body: Any) -> httpx.Response:
    return http.post(path, content=encode(body), headers={"Content-Type": "application/json"})


def active_worker(api: httpx.Client, controls: Controls, **fields: Any) -> tuple[int, str]:
    """Invite a worker and move it to ACTIVE: its agreementId and email."""
    answer = api.post("/contract/workers/inviteWorkersBulkLocked", json=[invitation(**fields)])
    assert answer.status_code == 200, answer.text
    created = answer.json()[0]
    controls.move_agreement(created["agreementId"], "ACTIVE")
    return created["agreementId"], created["workerEmail"]


def process(controls: Controls) -> None:
    """Settle every pending paylist and attempt every undelivered event, now."""
    answer = controls.http.post("/_sandbox/process")
    assert answer.status_code == 200, answer.text


def top_up(controls: Controls, client_id: int, amount: str) -> dict[str, Any]:
    answer = post_json(
        controls.http, f"/_sandbox/clients/{client_id}/top-up", {"amount": Decimal(amount)}
    )
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = exact(answer)
    return created


def sandbox_events(controls: Controls) -> list[dict[str, Any]]:
    answer = controls.http.get("/_sandbox/events")
    assert answer.status_code == 200, answer.text
    found: list[dict[str, Any]] = exact(answer)
    return found


def wallet(api: httpx.Client, client_id: int) -> dict[str, Any]:
    answer = api.get(f"/client-wallet/clients/{client_id}/wallet")
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = exact(answer)
    return found


def paylist_payments(api: httpx.Client, paylist_id: int, **params: Any) -> dict[str, Any]:
    answer = api.get(f"{PAYLISTS}/{paylist_id}/payments", params=params)
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = exact(answer)
    return found


def journal(api: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    answer = api.get(TRANSACTIONS, params=params)
    assert answer.status_code == 200, answer.text
    found: list[dict[str, Any]] = exact(answer)["content"]
    return found


def snapshot(api: httpx.Client, controls: Controls, client_id: int) -> dict[str, Any]:
    """Everything the client can read, and the events: equal before and after a refused call."""
    reads = {
        "workers": api.get("/contract/workers/list", params={"size": 200}),
        "payments": api.get(PAYMENTS, params={"endDate": "9999-01-01T00:00:00Z", "size": 200}),
        "journal": api.get(TRANSACTIONS, params={"size": 200}),
        "wallet": api.get(f"/client-wallet/clients/{client_id}/wallet"),
        "webhook": api.get("/webhooks/clients"),
        "events": controls.http.get("/_sandbox/events"),
    }
    return {name: (answer.status_code, answer.text) for name, answer in reads.items()}


def new_client(controls: Controls, **settings: str | bool) -> ClientAccess:
    """A new client; money settings (`balance`, `over_draft_limit`) are sent as exact numbers."""
    body = {k: Decimal(v) if isinstance(v, str) else v for k, v in settings.items()}
    answer = post_json(controls.http, "/_sandbox/clients", body)
    assert answer.status_code == 201, answer.text
    created = answer.json()
    return ClientAccess(created["client_id"], created["token"], created["wallet_id"])
