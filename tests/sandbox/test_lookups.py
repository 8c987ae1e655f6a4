"""The real service's other reads: a worker by email, paylists, a payment by id (over HTTP)."""

from __future__ import annotations

import json
from decimal import Decimal

import httpx

from reconciler.sandbox import SandboxServer
from tests.sandbox.paying import active_worker, exact, paylist, payment, post_json, process
from tests.sandbox.receiver import Receiver
from tests.sandbox.support import ClientAccess, Controls, assert_problem, invitation


def test_a_worker_by_email_ignoring_case(api: httpx.Client, controls: Controls) -> None:
    agreement_id, email = active_worker(api, controls)
    found = exact(api.get("/contract/workers", params={"email": email.upper()}))
    assert found["agreementId"] == agreement_id and found["email"] == email
    assert_problem(api.get("/contract/workers", params={"email": "nobody@example.com"}), 404)
    assert_problem(api.get("/contract/workers"), 400, "email")


def test_a_worker_who_has_not_started_onboarding_is_404_with_the_reason(
    api: httpx.Client,
) -> None:
    item = invitation()
    assert api.post("/contract/workers/inviteWorkersBulkLocked", json=[item]).is_success
    answer = api.get("/contract/workers", params={"email": item["workerEmail"]})
    assert_problem(answer, 404, "has not started the onboarding process")


def test_paylists_by_id_listing_and_payment_by_id(
    api: httpx.Client, controls: Controls, other_client: ClientAccess, sandbox: SandboxServer
) -> None:
    _, email = active_worker(api, controls)
    created = post_json(
        api, "/payment-agent/paylists", paylist(payment(email, "2.50"), payment(email, "1.25"))
    ).json()
    by_id = exact(api.get(f"/payment-agent/paylists/{created['id']}"))
    assert by_id == created
    listed = exact(api.get("/payment-agent/paylists"))
    assert set(listed) == {"content", "pageable", "totalElements"}
    (row,) = listed["content"]
    assert row == {
        "paylistId": created["id"],
        "flowStage": "PROCESSING",
        "description": created["description"],
        "total": Decimal("3.75"),
    }
    process(controls)
    assert exact(api.get("/payment-agent/paylists"))["content"][0]["flowStage"] == "COMPLETED"
    payments = exact(api.get(f"/payment-agent/paylists/{created['id']}/payments"))["content"]
    first = exact(api.get(f"/payment-agent/payments/{payments[0]['id']}"))
    assert first == payments[0]
    with httpx.Client(
        base_url=sandbox.base_url, headers={"Authorization": f"Bearer {other_client.token}"}
    ) as other:  # another client's objects are missing ones
        assert_problem(other.get(f"/payment-agent/paylists/{created['id']}"), 404)
        assert_problem(other.get(f"/payment-agent/payments/{payments[0]['id']}"), 404)
        assert exact(other.get("/payment-agent/paylists"))["content"] == []
    assert_problem(api.get("/payment-agent/paylists/999999"), 404)
    assert_problem(api.get("/payment-agent/payments/x"), 400)


def test_the_webhook_test_event(api: httpx.Client, controls: Controls) -> None:
    test = "/webhooks/clients/test"
    assert_problem(api.post(test), 404, "no webhook")
    with Receiver() as hook:
        config = {
            "url": hook.url,
            "headers": [{"name": "X-Token", "value": "t0k3n-value"}],
            "event_types": ["PAYMENT", "KYC"],
        }
        assert api.post("/webhooks/clients", json=config).is_success
        answer = exact(api.post(test))  # an empty body: the first subscribed type
        assert answer == {
            "event_type": "PAYMENT",
            "delivered": True,
            "status_code": 200,
            "error": None,
        }
        (received,) = hook.wait_for(1)
        body = json.loads(received.body)
        assert body["test"] is True and body["event_type"] == "PAYMENT"
        assert received.headers["X-Token"] == "t0k3n-value"
        hook.answers.append(500)
        failed = exact(api.post(test, json={"event_type": "KYC"}))
        assert failed == {
            "event_type": "KYC",
            "delivered": False,
            "status_code": 500,
            "error": None,
        }
        assert_problem(api.post(test, json={"event_type": "CLIENT_WALLET_TOP_UP"}), 400)
        assert controls.http.get("/_sandbox/events").json() == []  # not an event of the account
        config["enabled"] = False
        assert api.post("/webhooks/clients", json=config).is_success
        assert_problem(api.post(test), 400, "disabled")
