"""The wallet, its journal, and top-ups through `POST /_sandbox/clients/{id}/top-up`."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.sandbox.paying import (
    MICROSECONDS_Z,
    PAYLISTS,
    TRANSACTIONS,
    active_worker,
    journal,
    new_client,
    paylist,
    payment,
    post_json,
    process,
    snapshot,
    top_up,
    wallet,
)
from tests.sandbox.support import ClientAccess, Controls, assert_problem, service_client


def test_the_wallet_of_the_demo_client(sandbox: SandboxServer, api: httpx.Client) -> None:
    body = wallet(api, sandbox.client_id)
    assert body == {
        "id": body["id"],
        "wallet_version": 0,
        "client_id": sandbox.client_id,
        "enabled": True,
        "balance": Decimal("10000.00"),
        "over_draft_limit": Decimal("0.00"),
        "created_at": body["created_at"],
    }
    assert re.fullmatch(MICROSECONDS_Z, body["created_at"])
    text = api.get(f"/client-wallet/clients/{sandbox.client_id}/wallet").text
    assert '"balance":10000.00' in text and '"over_draft_limit":0.00' in text


def test_a_new_clients_wallet_has_its_settings(sandbox: SandboxServer, controls: Controls) -> None:
    access = new_client(controls, balance="12.5", over_draft_limit="100", enabled=False)
    with service_client(sandbox.base_url, access.token) as theirs:
        body = wallet(theirs, access.client_id)
    assert (body["id"], body["client_id"], body["enabled"]) == (
        access.wallet_id,
        access.client_id,
        False,
    )
    assert (body["balance"], body["over_draft_limit"]) == (Decimal("12.50"), Decimal("100.00"))


def test_another_clients_wallet_is_404_as_a_missing_one(
    sandbox: SandboxServer, api: httpx.Client, other_client: ClientAccess
) -> None:
    theirs = assert_problem(api.get(f"/client-wallet/clients/{other_client.client_id}/wallet"), 404)
    missing = assert_problem(api.get("/client-wallet/clients/999999/wallet"), 404)
    assert theirs["detail"].replace(str(other_client.client_id), "N") == missing["detail"].replace(
        "999999", "N"
    )


def test_a_client_id_that_is_not_an_integer_is_400(api: httpx.Client) -> None:
    assert_problem(api.get("/client-wallet/clients/me/wallet"), 400, "clientId")


def test_a_top_up_writes_a_deposit_and_raises_the_balance(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls
) -> None:
    created = top_up(controls, sandbox.client_id, "250.5")
    assert created["balance"] == Decimal("10250.50")
    (entry,) = journal(api)
    assert entry == {
        "journal_id": created["journal_id"],
        "wallet_id": wallet(api, sandbox.client_id)["id"],
        "client_id": sandbox.client_id,
        "idempotence_key": entry["idempotence_key"],
        "amount": Decimal("250.50"),
        "reason": "TOP_UP",
        "operation": "DEPOSIT",
        "transaction_data": {},
        "created_at": entry["created_at"],
    }
    assert re.fullmatch(r"[0-9a-f]{32}", entry["idempotence_key"])
    assert re.fullmatch(MICROSECONDS_Z, entry["created_at"])
    account = wallet(api, sandbox.client_id)
    assert (account["balance"], account["wallet_version"]) == (Decimal("10250.50"), 1)


def test_the_journal_is_content_only_in_ascending_order_and_pages(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls
) -> None:
    email = active_worker(api, controls)[1]
    top_up(controls, sandbox.client_id, "1")
    post_json(api, PAYLISTS, paylist(payment(email, "2.00"), payment(email, "3.00")))
    process(controls)
    top_up(controls, sandbox.client_id, "4")
    body = api.get(TRANSACTIONS).json()
    assert set(body) == {"content"}
    entries = journal(api)
    assert [e["amount"] for e in entries] == [Decimal(n) for n in ("1", "-2", "-3", "4")]
    ids = [e["journal_id"] for e in entries]
    assert ids == sorted(ids)
    # Pages count from 1, as the real service reads them (0 is the first page too).
    assert [e["journal_id"] for e in journal(api, page=1, size=3)] == ids[:3]
    assert [e["journal_id"] for e in journal(api, page=2, size=3)] == ids[3:]
    assert journal(api, page=3, size=3) == []
    assert journal(api, page=10**18, size=200) == []
    balance = wallet(api, sandbox.client_id)["balance"]
    assert balance == Decimal("10000.00") + sum(e["amount"] for e in entries)


def test_journals_are_per_client(
    sandbox: SandboxServer, other_client: ClientAccess, other_api: httpx.Client, controls: Controls
) -> None:
    top_up(controls, sandbox.client_id, "5")
    assert journal(other_api) == []
    top_up(controls, other_client.client_id, "6")
    assert [e["amount"] for e in journal(other_api)] == [Decimal("6.00")]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"amount": Decimal("-1")}, 400, "amount"),
        ({"amount": Decimal("0")}, 400, "greater than 0"),
        ({"amount": Decimal("1.001")}, 400, "two decimal places"),
        ({"amount": "ten"}, 400, "number"),
        ({}, 400, "required"),
        ({"amount": Decimal("1"), "note": "x"}, 400, "note"),
        ({"amount": Decimal("1000000000000000")}, 400, "balance would pass"),
    ],
)
def test_a_bad_top_up_is_refused_and_changes_nothing(
    sandbox: SandboxServer,
    api: httpx.Client,
    controls: Controls,
    body: dict[str, Any],
    status: int,
    words: str,
) -> None:
    before = snapshot(api, controls, sandbox.client_id)
    answer = post_json(controls.http, f"/_sandbox/clients/{sandbox.client_id}/top-up", body)
    assert_problem(answer, status, words)
    assert snapshot(api, controls, sandbox.client_id) == before


def test_a_top_up_of_a_missing_client_is_404(controls: Controls) -> None:
    answer = post_json(controls.http, "/_sandbox/clients/424242/top-up", {"amount": 1})
    assert_problem(answer, 404, "424242")
