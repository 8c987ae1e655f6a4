"""Processing (PENDING -> SUCCESS or FAILED with its cause) and GET /payment-agent/payments."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from reconciler.sandbox.timestamps import parse_iso
from tests.sandbox.paying import (
    MICROSECONDS_Z,
    PAYLISTS,
    PAYMENTS,
    active_worker,
    exact,
    journal,
    new_client,
    paylist,
    paylist_payments,
    payment,
    post_json,
    process,
    snapshot,
    top_up,
    wallet,
)
from tests.sandbox.support import Controls, assert_problem, service_client


@pytest.fixture(scope="module")
def _held_server() -> Iterator[SandboxServer]:
    """A sandbox that never settles by itself within a test (only on /_sandbox/process)."""
    with SandboxServer(process_delay_ms=600_000) as server:
        yield server


@pytest.fixture
def held(_held_server: SandboxServer) -> Iterator[tuple[SandboxServer, httpx.Client, Controls]]:
    controls = Controls(_held_server.base_url)
    controls.reset()
    with service_client(_held_server.base_url, _held_server.token) as api:
        yield _held_server, api, controls
    controls.close()


@pytest.fixture
def client_of(sandbox: SandboxServer, controls: Controls) -> Iterator[Any]:
    """Makes a new client with wallet settings (`balance="100.00"`, ...): (its id, its api)."""
    opened: list[httpx.Client] = []

    def make(**settings: str | bool) -> tuple[int, httpx.Client]:
        access = new_client(controls, **settings)
        opened.append(service_client(sandbox.base_url, access.token))
        return access.client_id, opened[-1]

    yield make
    for api in opened:
        api.close()


def create(api: httpx.Client, *items: dict[str, Any]) -> int:
    answer = post_json(api, PAYLISTS, paylist(*items))
    assert answer.status_code == 200, answer.text
    paylist_id: int = answer.json()["id"]
    return paylist_id


def settled(api: httpx.Client, paylist_id: int) -> list[tuple[str, str | None]]:
    page = paylist_payments(api, paylist_id)
    return [(p["status"], p["cause"]) for p in page["content"]]


def test_payments_start_pending_and_process_settles_them_at_once(
    held: tuple[SandboxServer, httpx.Client, Controls],
) -> None:
    sandbox, api, controls = held
    email = active_worker(api, controls)[1]
    paylist_id = create(api, payment(email, "12.34"), payment(email, "0.66"))
    (first, second) = paylist_payments(api, paylist_id)["content"]
    assert {(p["status"], p["cause"]) for p in (first, second)} == {("PENDING", None)}
    assert first["update_date"] == first["creation_date"]
    assert re.fullmatch(MICROSECONDS_Z, first["creation_date"])
    assert wallet(api, sandbox.client_id)["balance"] == Decimal("10000.00")
    process(controls)
    assert settled(api, paylist_id) == [("SUCCESS", None), ("SUCCESS", None)]
    after = paylist_payments(api, paylist_id)["content"][0]
    assert after["update_date"] > after["creation_date"]
    assert re.fullmatch(MICROSECONDS_Z, after["update_date"])
    assert wallet(api, sandbox.client_id)["balance"] == Decimal("9987.00")


def test_the_sandbox_settles_a_paylist_by_itself_after_the_delay() -> None:
    with SandboxServer(process_delay_ms=200) as sandbox:
        controls = Controls(sandbox.base_url)
        with service_client(sandbox.base_url, sandbox.token) as api:
            email = active_worker(api, controls)[1]
            paylist_id = create(api, payment(email))
            deadline = time.monotonic() + 10  # usually ~0.2 s; generous for a loaded machine
            while settled(api, paylist_id) == [("PENDING", None)] and time.monotonic() < deadline:
                time.sleep(0.02)
            (done,) = paylist_payments(api, paylist_id)["content"]
        controls.close()
    assert (done["status"], done["cause"]) == ("SUCCESS", None)
    waited = parse_iso(done["update_date"]) - parse_iso(done["creation_date"])
    assert waited >= 200_000_000 - 1_000  # µs timestamps: allow their truncation


def test_a_success_writes_its_journal_entry(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls
) -> None:
    email = active_worker(api, controls)[1]
    paylist_id = create(api, payment(email, "250.00", description="March invoice"))
    process(controls)
    (paid,) = paylist_payments(api, paylist_id)["content"]
    (entry,) = journal(api)
    assert entry == {
        "journal_id": entry["journal_id"],
        "wallet_id": wallet(api, sandbox.client_id)["id"],
        "client_id": sandbox.client_id,
        "idempotence_key": paid["idempotence_key"],
        "amount": Decimal("-250.00"),
        "reason": "PAYMENT",
        "operation": "WITHDRAWAL",
        "transaction_data": {
            "payment_order_id": str(paid["id"]),
            "payment_purpose": "March invoice",
        },
        "created_at": paid["update_date"],
    }


def test_an_overdrawn_payment_fails_and_leaves_the_balance_untouched(
    controls: Controls, client_of: Any
) -> None:
    client_id, api = client_of(balance="100.00")
    email = active_worker(api, controls)[1]
    paylist_id = create(api, payment(email, "60.00"), payment(email, "50.00"))
    process(controls)
    assert settled(api, paylist_id) == [("SUCCESS", None), ("FAILED", "INSUFFICIENT_FUNDS")]
    assert [e["amount"] for e in journal(api)] == [Decimal("-60.00")]
    account = wallet(api, client_id)
    assert (account["balance"], account["wallet_version"]) == (Decimal("40.00"), 1)


def test_the_over_draft_limit_counts_as_available(controls: Controls, client_of: Any) -> None:
    client_id, api = client_of(balance="10.00", over_draft_limit="100.00")
    email = active_worker(api, controls)[1]
    paylist_id = create(api, payment(email, "110.00"), payment(email, "0.01"))
    process(controls)
    assert settled(api, paylist_id) == [("SUCCESS", None), ("FAILED", "INSUFFICIENT_FUNDS")]
    account = wallet(api, client_id)
    assert (account["balance"], account["over_draft_limit"]) == (
        Decimal("-100.00"),
        Decimal("100.00"),
    )


def test_a_disabled_wallet_fails_every_payment(controls: Controls, client_of: Any) -> None:
    client_id, api = client_of(balance="1000", enabled=False)
    email = active_worker(api, controls)[1]
    paylist_id = create(api, payment(email, "1.00"))
    process(controls)
    assert settled(api, paylist_id) == [("FAILED", "WALLET_DISABLED")]
    assert wallet(api, client_id)["balance"] == Decimal("1000.00")
    assert journal(api) == []


def test_a_payment_already_paid_fails_as_a_duplicate(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls
) -> None:
    email = active_worker(api, controls)[1]
    item = payment(email, "10.00", description="Invoice 7")
    first = create(api, item)
    # Pending payments do not block one another: the first to settle is paid.
    second = create(api, dict(item, worker_email=email.upper()))
    process(controls)
    assert settled(api, first) == [("SUCCESS", None)]
    assert settled(api, second) == [("FAILED", "DUPLICATE_PAYMENT")]
    assert wallet(api, sandbox.client_id)["balance"] == Decimal("9990.00")
    # Another amount or description is another payment.
    third = create(api, dict(item, amount=Decimal("10.01")), dict(item, description="Invoice 8"))
    process(controls)
    assert settled(api, third) == [("SUCCESS", None), ("SUCCESS", None)]


def test_a_failed_payment_is_no_duplicate(controls: Controls, client_of: Any) -> None:
    client_id, api = client_of(balance="5")
    email = active_worker(api, controls)[1]
    item = payment(email, "10.00")
    first = create(api, item)
    process(controls)
    top_up(controls, client_id, "10")
    second = create(api, item)
    process(controls)
    assert settled(api, first) == [("FAILED", "INSUFFICIENT_FUNDS")]
    assert settled(api, second) == [("SUCCESS", None)]


@pytest.mark.parametrize(
    ("amount", "email", "description", "text"),
    [
        ("10", "Ada@Example.com", "March", "10.00|ada@example.com|March"),
        ("0.5", "b@example.com", "Invoice 1", "0.50|b@example.com|Invoice 1"),
        ("1234.56", "c@example.com", "Zoë ✓", "1234.56|c@example.com|Zoë ✓"),
    ],
)
def test_a_payments_idempotence_key_is_the_md5_of_amount_email_description(
    api: httpx.Client, controls: Controls, amount: str, email: str, description: str, text: str
) -> None:
    active_worker(api, controls, workerEmail=email)
    paylist_id = create(api, payment(email, amount, description=description))
    (created,) = paylist_payments(api, paylist_id)["content"]
    assert created["idempotence_key"] == hashlib.md5(text.encode()).hexdigest()


def test_a_payment_reads_the_same_from_its_paylist_the_date_range_and_its_id(
    api: httpx.Client, controls: Controls
) -> None:
    """SQLite writes a Payment's JSON: amounts keep their two places as JSON numbers, text
    that JSON escapes comes back as sent, and the three reads agree."""
    email = active_worker(api, controls)[1]
    items = [
        payment(email, "0.05", description='Quote " and back\\slash'),
        payment(email, "9876.50", description="Zoë ✓ 😀\tline\nbreak"),
        payment(email, "10", description="</script>"),
    ]
    paylist_id = create(api, *items)
    process(controls)
    answer = api.get(f"{PAYLISTS}/{paylist_id}/payments")
    for text in ('"amount":0.05', '"amount":9876.50', '"amount":10.00'):
        assert text in answer.text
    in_paylist = exact(answer)["content"]
    in_range = exact(api.get(PAYMENTS, params={"size": "200"}))["content"]
    by_id = [exact(api.get(f"{PAYMENTS}/{p['id']}")) for p in in_paylist]
    assert in_paylist == [p for p in in_range if p["paylist_id"] == paylist_id] == by_id
    assert [(p["description"], p["amount"]) for p in in_paylist] == [
        (item["description"], Decimal(item["amount"]).quantize(Decimal("0.01"))) for item in items
    ]
    assert [p["status"] for p in in_paylist] == ["SUCCESS"] * 3
    assert all(re.fullmatch(MICROSECONDS_Z, p["update_date"]) for p in in_paylist)


# --- GET /payment-agent/payments ------------------------------------------------------------


def listed(api: httpx.Client, **params: str) -> list[int]:
    answer = api.get(PAYMENTS, params={"size": "200", **params})
    assert answer.status_code == 200, answer.text
    return [p["id"] for p in exact(answer)["content"]]


def test_the_date_range_is_start_inclusive_end_exclusive(
    held: tuple[SandboxServer, httpx.Client, Controls],
) -> None:
    _, api, controls = held
    email = active_worker(api, controls)[1]
    first = paylist_payments(api, create(api, payment(email)))["content"][0]
    second = paylist_payments(api, create(api, payment(email)))["content"][0]
    third = paylist_payments(api, create(api, payment(email)))["content"][0]
    ids = [first["id"], second["id"], third["id"]]
    assert listed(api) == ids  # defaults: no lower bound, up to now
    assert listed(api, startDate=second["creation_date"]) == ids[1:]
    assert listed(api, endDate=second["creation_date"]) == ids[:1]
    assert (
        listed(api, startDate=second["creation_date"], endDate=third["creation_date"]) == ids[1:2]
    )
    assert listed(api, startDate=third["creation_date"], endDate=first["creation_date"]) == []
    assert listed(api, endDate="2000-01-01") == []
    assert listed(api, startDate="1970-01-01T00:00:00Z", endDate="9999-12-31T23:59:59Z") == ids


def test_offsets_and_fractions_of_any_length_are_understood(
    held: tuple[SandboxServer, httpx.Client, Controls],
) -> None:
    _, api, controls = held
    email = active_worker(api, controls)[1]
    created = paylist_payments(api, create(api, payment(email)))["content"][0]
    at = parse_iso(created["creation_date"])
    whole = created["creation_date"][:19]  # 2025-03-14T09:26:53, UTC
    utc = datetime.fromisoformat(f"{whole}+00:00")
    shifted = utc.astimezone(timezone(timedelta(hours=1))).isoformat()  # ...T10:26:53+01:00
    assert shifted.endswith("+01:00")
    assert parse_iso(shifted) == at - at % 1_000_000_000
    assert listed(api, startDate=shifted) == [created["id"]]
    assert listed(api, endDate=shifted) == []
    assert listed(api, startDate=f"{whole}.0Z") == [created["id"]]
    assert listed(api, endDate=f"{whole}.999999999Z") == [created["id"]]


def test_the_date_range_answer_has_content_pageable_and_total_only(
    api: httpx.Client, controls: Controls
) -> None:
    email = active_worker(api, controls)[1]
    create(api, *[payment(email, str(n)) for n in range(1, 4)])
    body = exact(api.get(PAYMENTS, params={"page": 2, "size": 2}))  # one-indexed: the second
    assert set(body) == {"content", "pageable", "totalElements"}
    assert [p["amount"] for p in body["content"]] == [Decimal("3.00")]
    assert body["totalElements"] == 3
    assert (body["pageable"]["pageNumber"], body["pageable"]["pageSize"]) == (1, 2)


def test_another_clients_payments_are_not_listed(
    api: httpx.Client, other_api: httpx.Client, controls: Controls
) -> None:
    email = active_worker(api, controls)[1]
    create(api, payment(email))
    assert listed(other_api) == []


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"startDate": "yesterday"}, "startDate"),
        ({"endDate": "2025-13-01T00:00:00Z"}, "endDate"),
        ({"startDate": "2025-03-14T09:26:53.1234567891Z"}, "startDate"),
        ({"startDate": "2025-03-14 09:26:53"}, "startDate"),
        ({"endDate": "2025-03-14T25:00:00Z"}, "endDate"),
        ({"endDate": ""}, "endDate"),
        ({"startDate": "2025-03-14T09:26:53+24:00"}, "startDate"),
        ({"page": "-1"}, "page"),
        ({"size": "0"}, "size"),
        ({"page": "one"}, "page"),
    ],
)
def test_a_malformed_query_is_400_and_changes_nothing(
    sandbox: SandboxServer,
    api: httpx.Client,
    controls: Controls,
    params: dict[str, str],
    field: str,
) -> None:
    before = snapshot(api, controls, sandbox.client_id)
    problem = assert_problem(api.get(PAYMENTS, params=params), 400, field)
    assert problem["errors"][0]["field"] == field
    assert snapshot(api, controls, sandbox.client_id) == before


def test_a_held_paylist_stays_pending_until_released(
    held: tuple[SandboxServer, httpx.Client, Controls],
) -> None:
    _, api, controls = held
    email = active_worker(api, controls)[1]
    kept, other = create(api, payment(email, "5.00")), create(api, payment(email, "6.00"))
    answer = controls.http.post(f"/_sandbox/paylists/{kept}/hold", json={"held": True})
    assert answer.json() == {"paylist_id": kept, "held": True}
    process(controls)
    assert settled(api, kept) == [("PENDING", None)]
    assert settled(api, other) == [("SUCCESS", None)]
    controls.http.post(f"/_sandbox/paylists/{kept}/hold", json={"held": False})
    process(controls)
    assert settled(api, kept) == [("SUCCESS", None)]


def test_a_paylist_can_be_dated_in_the_past_with_its_payments(
    held: tuple[SandboxServer, httpx.Client, Controls],
) -> None:
    _, api, controls = held
    email = active_worker(api, controls)[1]
    old = create(api, payment(email, "5.00"))
    answer = controls.http.post(
        f"/_sandbox/paylists/{old}/creation-date", json={"creation_date": "2024-01-31"}
    )
    assert answer.json() == {"paylist_id": old, "creation_date": "2024-01-31T00:00:00.000000000Z"}
    assert api.get(f"{PAYLISTS}/{old}").json()["creation_date"].startswith("2024-01-31T00:00:00")
    listed_after = api.get(PAYMENTS, params={"startDate": "2025-01-01T00:00:00Z"}).json()
    assert [p["paylist_id"] for p in listed_after["content"]] == []
    listed_before = api.get(PAYMENTS, params={"endDate": "2025-01-01T00:00:00Z"}).json()
    assert [p["paylist_id"] for p in listed_before["content"]] == [old]


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/_sandbox/paylists/999/hold", {"held": True}, 404),
        ("/_sandbox/paylists/999/creation-date", {"creation_date": "2024-01-01"}, 404),
        ("/_sandbox/paylists/1/hold", {}, 400),
        ("/_sandbox/paylists/1/hold", {"held": "yes"}, 400),
        ("/_sandbox/paylists/1/creation-date", {"creation_date": "last week"}, 400),
        ("/_sandbox/paylists/1/creation-date", {"creation_date": "9999-01-01"}, 400),
    ],
)
def test_bad_paylist_controls_say_what_is_wrong(
    held: tuple[SandboxServer, httpx.Client, Controls], path: str, body: Any, status: int
) -> None:
    _, api, controls = held
    create(api, payment(active_worker(api, controls)[1], "5.00"))
    assert_problem(controls.http.post(path, json=body), status)
