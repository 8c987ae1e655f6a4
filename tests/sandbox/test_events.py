"""Events: KYC, PAYMENT and CLIENT_WALLET_TOP_UP, delivered to a receiver on loopback."""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from typing import Any

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from reconciler.sandbox.timestamps import parse_iso
from tests.sandbox.paying import (
    PAYLISTS,
    active_worker,
    journal,
    paylist,
    paylist_payments,
    payment,
    post_json,
    process,
    sandbox_events,
    top_up,
)
from tests.sandbox.receiver import Receiver
from tests.sandbox.support import Controls, invitation, service_client

WEBHOOK = "/webhooks/clients"
ALL_TYPES = ["KYC", "PAYMENT", "CLIENT_WALLET_TOP_UP"]
HEADERS = [{"name": "X-Signature", "value": "s3cr3t"}, {"name": "X-Tenant", "value": "acme"}]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as hook:
        yield hook


def subscribe(api: httpx.Client, url: str, types: list[str], **fields: Any) -> None:
    body = {"url": url, "headers": HEADERS, "event_types": types, **fields}
    answer = api.post(WEBHOOK, json=body)
    assert answer.status_code in (200, 201), answer.text


def wait_delivered(controls: Controls, count: int, timeout_s: float = 10) -> list[dict[str, Any]]:
    """The events, once `count` of them are delivered."""
    deadline = time.monotonic() + timeout_s
    while True:
        events = sandbox_events(controls)
        if sum(e["delivered"] for e in events) >= count or time.monotonic() > deadline:
            return events
        time.sleep(0.01)


def sent(received: Any) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(received.body, parse_float=Decimal)
    return body


def test_kyc_is_sent_when_a_worker_becomes_active_with_the_custom_headers(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls, receiver: Receiver
) -> None:
    subscribe(api, receiver.url, ["KYC"])
    created = api.post("/contract/workers/inviteWorkersBulkLocked", json=[invitation()]).json()[0]
    agreement_id = created["agreementId"]
    controls.move_agreement(agreement_id, "VERIFICATION_PENDING")  # not ACTIVE: no event
    controls.move_agreement(agreement_id, "ACTIVE")
    controls.move_agreement(agreement_id, "ACTIVE")  # already ACTIVE: no second event
    (got,) = receiver.wait_for(1)
    assert got.path == "/hook"
    assert (got.headers["X-Signature"], got.headers["X-Tenant"]) == ("s3cr3t", "acme")
    assert got.headers["Content-Type"] == "application/json"
    assert sent(got) == {
        "event_type": "KYC",
        "data": {
            "status": "ACTIVE",
            "worker_id": agreement_id,
            "client_id": sandbox.client_id,
            "external_id": created["externalId"],
            "worker_email": created["workerEmail"],
        },
    }
    (event,) = wait_delivered(controls, 1)
    assert event["delivered"] and len(event["attempts"]) == 1
    assert event["attempts"][0]["status_code"] == 200
    time.sleep(0.05)
    assert len(receiver.received) == 1


def test_payment_events_carry_the_outcome_and_an_exact_time(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls, receiver: Receiver
) -> None:
    agreement_id, email = active_worker(api, controls)
    subscribe(api, receiver.url, ["PAYMENT"])
    created = post_json(api, PAYLISTS, paylist(payment(email, "12.30"), payment(email, "99999")))
    paylist_id = created.json()["id"]
    process(controls)
    paid, refused = paylist_payments(api, paylist_id)["content"]
    got = sorted(receiver.wait_for(2), key=lambda r: sent(r)["data"]["payment_id"])
    assert [sent(r)["data"] for r in got] == [
        {
            "payment_id": p["id"],
            "client_id": sandbox.client_id,
            "worker_id": agreement_id,
            "paylist_id": paylist_id,
            "idempotency_key": p["idempotence_key"],
            "email": email,
            "transaction_status": status,
            "transaction_amount": p["amount"],
            "transaction_date_time": sent(r)["data"]["transaction_date_time"],
        }
        for p, status, r in ((paid, "SUCCESS", got[0]), (refused, "FAILED", got[1]))
    ]
    text = got[0].body.decode()
    # Unix seconds with nine fraction digits, written as a number; amounts with two places.
    match = re.search(r'"transaction_date_time":(\d+\.\d{9})[,}]', text)
    assert match is not None, text
    assert '"transaction_amount":12.30' in text
    ns = int(Decimal(match[1]) * 10**9)
    assert ns // 1000 == parse_iso(paid["update_date"]) // 1000
    assert datetime.fromtimestamp(int(Decimal(match[1]))).year >= 2025


def test_a_top_up_sends_client_wallet_top_up(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls, receiver: Receiver
) -> None:
    subscribe(api, receiver.url, ["CLIENT_WALLET_TOP_UP"])
    created = top_up(controls, sandbox.client_id, "75.5")
    (entry,) = journal(api)
    (got,) = receiver.wait_for(1)
    assert sent(got) == {
        "event_type": "CLIENT_WALLET_TOP_UP",
        "data": {
            "transaction_id": created["journal_id"],
            "transaction_type": "TRANSFER",
            "amount": Decimal("75.50"),
            "reference_id": entry["idempotence_key"],
        },
    }
    assert '"amount":75.50' in got.body.decode()


def test_an_event_is_retried_after_a_500(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls, receiver: Receiver
) -> None:
    subscribe(api, receiver.url, ALL_TYPES)
    receiver.answers.append(500)
    top_up(controls, sandbox.client_id, "1")
    first, second = receiver.wait_for(2)
    assert first.body == second.body
    assert second.headers["X-Signature"] == "s3cr3t"
    (event,) = wait_delivered(controls, 1)
    assert [a.get("status_code") for a in event["attempts"]] == [500, 200]
    assert event["delivered"] is True
    waited = parse_iso(event["attempts"][1]["at"]) - parse_iso(event["attempts"][0]["at"])
    assert waited >= 250_000_000 - 1_000  # the shared sandbox's --event-retry-base-ms


@pytest.mark.parametrize(
    ("types", "enabled"),
    [(["KYC", "PAYMENT"], True), (ALL_TYPES, False)],
    ids=["not subscribed", "disabled"],
)
def test_no_event_unless_subscribed_and_enabled(
    sandbox: SandboxServer,
    api: httpx.Client,
    controls: Controls,
    receiver: Receiver,
    types: list[str],
    enabled: bool,
) -> None:
    subscribe(api, receiver.url, types, enabled=enabled)
    top_up(controls, sandbox.client_id, "1")
    process(controls)
    assert sandbox_events(controls) == []
    assert receiver.received == []


def test_no_event_without_a_webhook(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls
) -> None:
    active_worker(api, controls)
    top_up(controls, sandbox.client_id, "1")
    process(controls)
    assert sandbox_events(controls) == []


def test_events_go_to_each_clients_own_webhook(
    sandbox: SandboxServer,
    api: httpx.Client,
    other_api: httpx.Client,
    controls: Controls,
    receiver: Receiver,
) -> None:
    with Receiver() as theirs:
        subscribe(api, receiver.url, ALL_TYPES)
        subscribe(other_api, theirs.url, ALL_TYPES)
        active_worker(other_api, controls)
        (got,) = theirs.wait_for(1)
        assert sent(got)["event_type"] == "KYC"
    process(controls)
    assert receiver.received == []


def test_a_host_that_is_not_loopback_is_never_contacted(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls
) -> None:
    subscribe(api, "https://hooks.example.com/workforce", ["CLIENT_WALLET_TOP_UP"])
    top_up(controls, sandbox.client_id, "1")
    for _ in range(8):  # /_sandbox/process attempts whatever the backoff; 6 attempts at most
        process(controls)
    (event,) = sandbox_events(controls)
    assert event["delivered"] is False
    assert len(event["attempts"]) == 6
    assert {a["error"] for a in event["attempts"]} == {
        "not delivered: the sandbox sends events only to loopback hosts"
    }
    assert all("status_code" not in a for a in event["attempts"])


def test_retries_back_off_exponentially_and_stop_after_six_attempts(receiver: Receiver) -> None:
    receiver.answers.extend([503] * 10)
    with SandboxServer(event_retry_base_ms=20) as sandbox:
        controls = Controls(sandbox.base_url)
        with service_client(sandbox.base_url, sandbox.token) as api:
            subscribe(api, receiver.url, ["CLIENT_WALLET_TOP_UP"])
        top_up(controls, sandbox.client_id, "1")
        receiver.wait_for(6)
        time.sleep(0.7)  # past a seventh attempt's time, had there been one (20 * 2**5 ms)
        (event,) = sandbox_events(controls)
        controls.close()
    assert len(receiver.received) == 6
    assert [a["status_code"] for a in event["attempts"]] == [503] * 6
    assert event["delivered"] is False
    times = [parse_iso(a["at"]) for a in event["attempts"]]
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    for attempt, gap in enumerate(gaps, start=1):
        assert gap >= 20_000_000 * 2 ** (attempt - 1) - 1_000, gaps


def test_process_attempts_an_undelivered_event_now_whatever_its_backoff(
    receiver: Receiver,
) -> None:
    with SandboxServer(event_retry_base_ms=600_000) as sandbox:
        controls = Controls(sandbox.base_url)
        receiver.answers.append(500)
        with service_client(sandbox.base_url, sandbox.token) as api:
            subscribe(api, receiver.url, ["CLIENT_WALLET_TOP_UP"])
        top_up(controls, sandbox.client_id, "1")
        receiver.wait_for(1)
        deadline = time.monotonic() + 10
        while not sandbox_events(controls)[0]["attempts"] and time.monotonic() < deadline:
            time.sleep(0.01)
        process(controls)  # the next attempt would be 10 minutes away
        (event,) = sandbox_events(controls)
        controls.close()
    assert [a["status_code"] for a in event["attempts"]] == [500, 200]
    assert event["delivered"] is True


def test_a_receiver_that_does_not_answer_within_5_s_counts_as_a_failure(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls
) -> None:
    with Receiver(delay_s=6) as slow:
        subscribe(api, slow.url, ["CLIENT_WALLET_TOP_UP"])
        top_up(controls, sandbox.client_id, "1")
        started = time.monotonic()
        process(controls)  # waits for the attempt under way
        elapsed = time.monotonic() - started
        (event,) = sandbox_events(controls)
    assert event["attempts"][0]["error"] == "no answer within 5 s"
    assert event["delivered"] is False
    assert elapsed < 6


def test_the_events_view_shows_every_event_with_its_attempts(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls, receiver: Receiver
) -> None:
    subscribe(api, receiver.url, ALL_TYPES)
    active_worker(api, controls)
    top_up(controls, sandbox.client_id, "2")
    process(controls)
    events = sandbox_events(controls)
    assert [e["event_type"] for e in events] == ["KYC", "CLIENT_WALLET_TOP_UP"]
    for event in events:
        assert set(event) == {"id", "event_type", "client_id", "data", "attempts", "delivered"}
        assert event["client_id"] == sandbox.client_id
        assert event["delivered"] is True
        (attempt,) = event["attempts"]
        assert set(attempt) == {"at", "status_code"}
    assert [e["id"] for e in events] == sorted(e["id"] for e in events)
    # Deliveries run concurrently, so they may arrive in any order.
    assert len(receiver.received) == len(events)
    assert {sent(r)["event_type"]: sent(r) for r in receiver.received} == {
        e["event_type"]: {"event_type": e["event_type"], "data": e["data"]} for e in events
    }
