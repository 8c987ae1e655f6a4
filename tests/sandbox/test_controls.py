"""The `/_sandbox/` controls: clients, agreement moves, the request log, reset."""

from __future__ import annotations

import re
import threading
import time

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.sandbox.support import Controls, assert_problem, invitation, service_client

LIST = "/contract/workers/list"
INVITE = "/contract/workers/inviteWorkersBulkLocked"
WEBHOOK = "/webhooks/clients"


def test_a_new_client_has_its_own_token_and_wallet(
    sandbox: SandboxServer, controls: Controls
) -> None:
    created = controls.http.post(
        "/_sandbox/clients",
        json={"name": "Acme", "balance": 150.25, "over_draft_limit": 10, "enabled": False},
    )
    assert created.status_code == 201
    body = created.json()
    assert set(body) == {"client_id", "token", "wallet_id", "email", "password"}
    assert body["client_id"] != sandbox.client_id and body["token"] != sandbox.token
    with service_client(sandbox.base_url, body["token"]) as client:
        assert client.get(LIST).status_code == 200


def test_a_client_needs_no_body(controls: Controls) -> None:
    first = controls.http.post("/_sandbox/clients")
    second = controls.http.post("/_sandbox/clients", json={})
    assert (first.status_code, second.status_code) == (201, 201)
    assert first.json()["client_id"] != second.json()["client_id"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"balance": -1}, "balance"),
        ({"balance": "a hundred"}, "balance"),
        ({"balance": 1.234}, "balance"),
        ({"over_draft_limit": True}, "over_draft_limit"),
        ({"enabled": "no"}, "enabled"),
        ({"name": 5}, "name"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_a_bad_client_is_400(controls: Controls, body: dict[str, object], field: str) -> None:
    problem = assert_problem(controls.http.post("/_sandbox/clients", json=body), 400)
    assert problem["errors"][0]["field"] == field


def test_moving_an_agreement_fills_in_the_answers(api: httpx.Client, controls: Controls) -> None:
    (created,) = api.post(INVITE, json=[invitation(countryIso="GB")]).json()
    pending = controls.move_agreement(created["agreementId"], "VERIFICATION_PENDING")
    assert (pending["firstName"], pending["country"]) == ("Ada", "United Kingdom")
    active = controls.move_agreement(
        created["agreementId"], "ACTIVE", firstName="Augusta", countryIso="DE"
    )
    assert (active["firstName"], active["lastName"], active["country"]) == (
        "Augusta",
        "Lovelace",
        "Germany",
    )
    (listed,) = api.get(LIST).json()["content"]
    assert listed == active
    back = controls.move_agreement(created["agreementId"], "INVITATION_SENT")
    assert (back["firstName"], back["country"]) == (None, None)


def test_a_business_answers_with_its_legal_name(api: httpx.Client, controls: Controls) -> None:
    item = invitation(typeOfWorker="Business", workerLegalName="Acme Consulting Ltd")
    (created,) = api.post(INVITE, json=[item]).json()
    moved = controls.move_agreement(created["agreementId"], "ACTIVE")
    assert moved["legalName"] == "Acme Consulting Ltd"


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"status": "INACTIVATED"}, 400),
        ({"status": "active"}, 400),
        ({}, 400),
        ({"status": "ACTIVE", "countryIso": "XX"}, 400),
        ({"status": "ACTIVE", "nickname": "Ada"}, 400),
    ],
)
def test_a_bad_move_is_400(
    api: httpx.Client, controls: Controls, body: dict[str, object], status: int
) -> None:
    (created,) = api.post(INVITE, json=[invitation()]).json()
    answer = controls.http.post(f"/_sandbox/agreements/{created['agreementId']}/status", json=body)
    assert_problem(answer, status)
    assert api.get(LIST).json()["content"][0]["status"] == "INVITATION_SENT"


def test_moving_a_missing_agreement_is_404(controls: Controls) -> None:
    answer = controls.http.post("/_sandbox/agreements/999/status", json={"status": "ACTIVE"})
    assert_problem(answer, 404, "999")


def test_reopening_an_ended_agreement_beside_an_open_one_is_409(
    api: httpx.Client, controls: Controls
) -> None:
    ada = invitation()
    (old,) = api.post(INVITE, json=[ada]).json()
    controls.move_agreement(old["agreementId"], "ENDED")
    api.post(INVITE, json=[ada])
    answer = controls.http.post(
        f"/_sandbox/agreements/{old['agreementId']}/status", json={"status": "ACTIVE"}
    )
    assert_problem(answer, 409, "already open")


def test_the_request_log_records_service_requests_only(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls, other_api: httpx.Client
) -> None:
    api.get(LIST, params={"statusId": 0})
    api.post(INVITE, json=[invitation(countryIso="??")])
    other_api.get(WEBHOOK)
    with service_client(sandbox.base_url, "wrong") as stranger:
        stranger.get(LIST)
    entries = controls.requests()
    assert [
        (e["method"], e["path"], e["status"], e["client_id"], e["dropped"]) for e in entries
    ] == [
        ("GET", LIST, 200, sandbox.client_id, False),
        ("POST", INVITE, 400, sandbox.client_id, False),
        ("GET", WEBHOOK, 404, entries[2]["client_id"], False),
        ("GET", LIST, 401, None, False),
    ]
    assert entries[2]["client_id"] not in (None, sandbox.client_id)
    assert [e["seq"] for e in entries] == sorted({e["seq"] for e in entries})
    assert entries[0]["query"] == "statusId=0"
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:]{8}\.\d{6}Z", e["at"]) for e in entries)
    assert controls.requests(since=entries[1]["seq"]) == entries[2:]
    assert controls.requests(since=entries[-1]["seq"]) == []


def test_the_request_log_rejects_a_bad_since(controls: Controls) -> None:
    assert_problem(controls.http.get("/_sandbox/requests", params={"since": "x"}), 400, "since")


def test_reset_empties_everything_and_keeps_the_demo_token(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls, other_client: object
) -> None:
    api.post(INVITE, json=[invitation()])
    api.post(WEBHOOK, json={"url": "https://a.example.com", "headers": [], "event_types": ["KYC"]})
    controls.set_faults(latency_ms=1)
    answer = controls.http.post("/_sandbox/reset")
    assert answer.json() == {"client_id": sandbox.client_id, "token": sandbox.token}
    assert controls.requests() == []
    assert controls.http.get("/_sandbox/faults").json()["latency_ms"] == 0
    assert api.get(LIST).json()["totalElements"] == 0
    assert_problem(api.get(WEBHOOK), 404)
    with service_client(sandbox.base_url, other_client.token) as gone:  # type: ignore[attr-defined]
        assert_problem(gone.get(LIST), 401)
    (created,) = api.post(INVITE, json=[invitation()]).json()
    assert created["agreementId"] == 1


def test_controls_are_not_logged_nor_faulted(controls: Controls, api: httpx.Client) -> None:
    controls.set_faults(error_rate=1.0, error_status=500)
    assert controls.http.post("/_sandbox/clients").status_code == 201
    assert_problem(api.get(LIST), 500)
    assert [e["path"] for e in controls.requests()] == [LIST]


def test_a_request_held_across_a_reset_changes_nothing_of_the_fresh_sandbox(
    sandbox: SandboxServer, controls: Controls
) -> None:
    """A request a fault's latency holds while the sandbox is reset (the last test's client,
    killed, still waiting) is answered 503 and neither logged nor applied: the next test's
    request log and state are its own."""
    controls.set_faults(latency_ms=6000)
    answers: list[httpx.Response] = []

    def invite() -> None:
        with service_client(sandbox.base_url, sandbox.token) as api:
            answers.append(api.post("/contract/workers/inviteWorkersBulkLocked",
                                    json=[invitation(externalId="LATE-1")]))  # fmt: skip

    held = threading.Thread(target=invite)
    held.start()
    # The request has come, and waits out its latency: nothing says so until it ends, so the
    # margins are wide (2 s for a loaded machine to send it, 4 s left to reset before it ends).
    time.sleep(2.0)
    controls.reset()
    held.join(timeout=30)

    (answer,) = answers
    assert answer.status_code == 503, answer.text
    assert controls.requests() == []
    with service_client(sandbox.base_url, sandbox.token) as api:
        listed = api.get("/contract/workers/list").json()
    assert listed["content"] == [], listed


def test_hr_changes_a_job_title_and_names_in_place(api: httpx.Client, controls: Controls) -> None:
    """Issue 48: the controls edit a worker as HR does in the service's screens, status kept."""
    (created,) = api.post(INVITE, json=[invitation()]).json()
    agreement = created["agreementId"]
    controls.move_agreement(agreement, "ACTIVE")
    body = {"jobTitle": "Principal Engineer", "firstName": "Augusta", "lastName": "King"}
    answer = controls.http.post(f"/_sandbox/agreements/{agreement}/fields", json=body)
    assert answer.status_code == 200, answer.text
    (listed,) = api.get(LIST).json()["content"]
    assert (listed["jobTitle"], listed["firstName"], listed["lastName"], listed["status"]) == (
        "Principal Engineer",
        "Augusta",
        "King",
        "ACTIVE",
    )
    bad = controls.http.post(f"/_sandbox/agreements/{agreement}/fields", json={"email": "x"})
    assert_problem(bad, 400)
    missing = controls.http.post("/_sandbox/agreements/999/fields", json={"jobTitle": "X"})
    assert_problem(missing, 404, "999")
