"""POST /contract/workers/inviteWorkersBulkLocked: an atomic batch with every error per item."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.sandbox.support import Controls, assert_problem, invitation, service_client

LIST = "/contract/workers/list"
INVITE = "/contract/workers/inviteWorkersBulkLocked"
MISSING = object()  # a field left out of the item


def listed(api: httpx.Client) -> list[dict[str, Any]]:
    return list(api.get(LIST, params={"size": 200}).json()["content"])


def inactivate(api: httpx.Client, agreement_id: int) -> httpx.Response:
    return api.post(
        f"/contract-server/v2/general/worker/agreements/{agreement_id}/status",
        json={"status": "inactivated"},
    )


def test_a_batch_answers_each_item_in_request_order(api: httpx.Client) -> None:
    items = [invitation(), invitation(externalId=None), invitation()]
    answer = api.post(INVITE, json=items)
    assert answer.status_code == 200
    body = answer.json()
    assert [set(item) for item in body] == [
        {"agreementId", "workerEmail", "externalId", "status"}
    ] * 3
    assert [item["workerEmail"] for item in body] == [item["workerEmail"] for item in items]
    assert [item["externalId"] for item in body] == [
        items[0]["externalId"],
        None,
        items[2]["externalId"],
    ]
    assert {item["status"] for item in body} == {"INVITATION_SENT"}
    assert [w["agreementId"] for w in listed(api)] == [item["agreementId"] for item in body]


def test_a_business_needs_a_legal_name(api: httpx.Client) -> None:
    business = invitation(typeOfWorker="Business")
    assert_problem(api.post(INVITE, json=[business]), 400, "workerLegalName", "required")
    business["workerLegalName"] = "Acme Consulting Ltd"
    assert api.post(INVITE, json=[business]).status_code == 200


def test_optional_fields_may_be_omitted_or_null(api: httpx.Client) -> None:
    item = invitation(jobTitle=None, externalId=None)
    item["workerEmailText"] = None
    assert api.post(INVITE, json=[item]).status_code == 200
    (worker,) = listed(api)
    assert (worker["jobTitle"], worker["externalId"]) == (None, None)


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"workerName": MISSING}, "workerName", ["required"]),
        ({"workerName": None}, "workerName", ["required"]),
        ({"workerName": ""}, "workerName", ["blank"]),
        ({"workerSurname": "   "}, "workerSurname", ["blank"]),
        ({"workerName": 42}, "workerName", ["string", "number"]),
        ({"workerName": ["Ada"]}, "workerName", ["string", "array"]),
        ({"typeOfWorker": "Robot"}, "typeOfWorker", ["Worker, Business"]),
        ({"typeOfWorker": MISSING}, "typeOfWorker", ["required"]),
        ({"workerEmail": "not-an-email"}, "workerEmail", ["email"]),
        ({"workerEmail": "ada@@example.com"}, "workerEmail", ["email"]),
        ({"workerEmail": MISSING}, "workerEmail", ["required"]),
        ({"countryIso": "XX"}, "countryIso", ["alpha-2"]),
        ({"countryIso": "gb"}, "countryIso", ["upper-case"]),
        ({"countryIso": "GBR"}, "countryIso", ["alpha-2"]),
        ({"countryIso": MISSING}, "countryIso", ["required"]),
        ({"jobTitle": "x" * 256}, "jobTitle", ["255"]),
        ({"workerName": "x" * 100_000}, "workerName", ["255"]),
        ({"jobTitle": True}, "jobTitle", ["string", "boolean"]),
        ({"externalId": " "}, "externalId", ["blank"]),
        ({"externalId": 7}, "externalId", ["string"]),
        ({"status": "ACTIVE"}, "status", ["unknown field"]),
        ({"clientId": 2}, "clientId", ["unknown field"]),
    ],
)
def test_an_invalid_item_is_400_naming_index_and_field(
    api: httpx.Client, change: dict[str, Any], field: str, words: list[str]
) -> None:
    bad = {key: value for key, value in {**invitation(), **change}.items() if value is not MISSING}
    problem = assert_problem(api.post(INVITE, json=[invitation(), bad]), 400, *words)
    assert problem["errors"][0]["index"] == 1
    assert problem["errors"][0]["field"] == field
    assert listed(api) == []


def test_every_invalid_item_is_reported_and_nothing_is_created(api: httpx.Client) -> None:
    items = [invitation(), invitation(countryIso="ZZ"), invitation(), "Ada", invitation()]
    del items[4]["workerName"]
    problem = assert_problem(api.post(INVITE, json=items), 400)
    assert [(e.get("index"), e.get("field")) for e in problem["errors"]] == [
        (1, "countryIso"),
        (3, None),
        (4, "workerName"),
    ]
    assert listed(api) == []


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ('{"workerName": "Ada"}', 400, ["JSON array"]),
        ("[]", 400, ["empty"]),
        ('"invite me"', 400, ["JSON array"]),
        ("null", 400, ["JSON array"]),
        ("", 400, ["empty"]),
    ],
)
def test_the_body_must_be_a_non_empty_array(
    api: httpx.Client, body: str, status: int, words: list[str]
) -> None:
    answer = api.post(INVITE, content=body, headers={"Content-Type": "application/json"})
    assert_problem(answer, status, *words)


def test_100_items_pass_and_101_are_413(api: httpx.Client) -> None:
    assert_problem(api.post(INVITE, json=[invitation() for _ in range(101)]), 413, "101", "100")
    assert listed(api) == []
    assert len(api.post(INVITE, json=[invitation() for _ in range(100)]).json()) == 100


def test_the_same_email_or_external_id_twice_in_a_batch_is_400(api: httpx.Client) -> None:
    first = invitation()
    same_email = invitation(workerEmail=first["workerEmail"].upper())
    same_external = invitation(externalId=first["externalId"])
    problem = assert_problem(api.post(INVITE, json=[first, same_email, same_external]), 400)
    assert [(e["index"], e["field"]) for e in problem["errors"]] == [
        (1, "workerEmail"),
        (2, "externalId"),
    ]
    assert "item 0" in problem["errors"][0]["message"]
    assert listed(api) == []


@pytest.mark.parametrize("status", ["INVITATION_SENT", "VERIFICATION_PENDING", "ACTIVE"])
def test_an_open_agreement_blocks_a_new_invitation(
    api: httpx.Client, controls: Controls, status: str
) -> None:
    ada = invitation()
    (created,) = api.post(INVITE, json=[ada]).json()
    if status != "INVITATION_SENT":
        controls.move_agreement(created["agreementId"], status)
    again = invitation(workerEmail=ada["workerEmail"].title())
    same_external = invitation(externalId=ada["externalId"])
    problem = assert_problem(
        api.post(INVITE, json=[invitation(), again, same_external]), 400, "open agreement"
    )
    assert [(e["index"], e["field"]) for e in problem["errors"]] == [
        (1, "workerEmail"),
        (2, "externalId"),
    ]
    assert str(created["agreementId"]) in problem["errors"][0]["message"]
    assert len(listed(api)) == 1


@pytest.mark.parametrize("closed", ["ENDED", "INACTIVATED"])
def test_after_ended_or_inactivated_the_person_gets_a_new_agreement(
    api: httpx.Client, controls: Controls, closed: str
) -> None:
    ada = invitation()
    (created,) = api.post(INVITE, json=[ada]).json()
    if closed == "ENDED":
        controls.move_agreement(created["agreementId"], "ENDED")
    else:
        assert inactivate(api, created["agreementId"]).status_code == 200
    (again,) = api.post(INVITE, json=[ada]).json()
    assert again["agreementId"] > created["agreementId"]
    assert [w["status"] for w in listed(api)] == [closed, "INVITATION_SENT"]


def test_clients_do_not_see_or_block_each_others_workers(
    api: httpx.Client, other_api: httpx.Client
) -> None:
    ada = invitation()
    assert api.post(INVITE, json=[ada]).status_code == 200
    assert other_api.post(INVITE, json=[ada]).status_code == 200
    (mine,) = listed(api)
    (theirs,) = listed(other_api)
    assert mine["agreementId"] != theirs["agreementId"]
    assert mine["email"] == theirs["email"]


def test_concurrent_invitations_of_the_same_email_exactly_one_wins(
    sandbox: SandboxServer, api: httpx.Client
) -> None:
    rounds, racers = 5, 4
    for _ in range(rounds):
        email = invitation()["workerEmail"]
        start = threading.Barrier(racers)
        statuses: list[int] = []

        def race(
            email: str = email, start: threading.Barrier = start, statuses: list[int] = statuses
        ) -> None:
            with service_client(sandbox.base_url, sandbox.token) as client:
                start.wait()
                answer = client.post(INVITE, json=[invitation(workerEmail=email)])
                statuses.append(answer.status_code)

        threads = [threading.Thread(target=race) for _ in range(racers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(statuses) == [200] + [400] * (racers - 1)
    emails = [w["email"] for w in listed(api)]
    assert len(emails) == len(set(emails)) == rounds
