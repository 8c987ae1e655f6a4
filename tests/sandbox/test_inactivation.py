"""POST /contract-server/v2/general/worker/agreements/{agreementId}/status."""

from __future__ import annotations

import httpx
import pytest

from tests.sandbox.support import Controls, assert_problem, invitation

LIST = "/contract/workers/list"
INVITE = "/contract/workers/inviteWorkersBulkLocked"


def status_path(agreement_id: object) -> str:
    return f"/contract-server/v2/general/worker/agreements/{agreement_id}/status"


def invite_one(api: httpx.Client) -> int:
    (created,) = api.post(INVITE, json=[invitation()]).json()
    return int(created["agreementId"])


def statuses(api: httpx.Client) -> list[str]:
    return [w["status"] for w in api.get(LIST).json()["content"]]


@pytest.mark.parametrize("status", ["INVITATION_SENT", "VERIFICATION_PENDING", "ACTIVE", "ENDED"])
def test_inactivation_works_from_any_status_and_answers_changed(
    api: httpx.Client, controls: Controls, status: str
) -> None:
    agreement_id = invite_one(api)
    if status != "INVITATION_SENT":
        controls.move_agreement(agreement_id, status)
    answer = api.post(status_path(agreement_id), json={"status": "inactivated"})
    assert answer.status_code == 200
    assert answer.json() == {
        "agreement_id": agreement_id,
        "status": "INACTIVATED",
        "status_id": 5,
        "changed": True,
    }
    assert statuses(api) == ["INACTIVATED"]


def test_inactivating_twice_answers_changed_false(api: httpx.Client) -> None:
    agreement_id = invite_one(api)
    api.post(status_path(agreement_id), json={"status": "inactivated"})
    again = api.post(status_path(agreement_id), json={"status": "inactivated"})
    assert again.status_code == 200
    assert again.json()["changed"] is False
    assert again.json()["status_id"] == 5


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"status": "INACTIVATED"}, ["status", "inactivated"]),
        ({"status": "Inactivated"}, ["status"]),
        ({"status": "active"}, ["status"]),
        ({"status": ""}, ["status", "blank"]),
        ({"status": None}, ["status", "required"]),
        ({}, ["status", "required"]),
        ({"status": 5}, ["status", "string"]),
        ({"status": "inactivated", "reason": "left"}, ["reason", "unknown field"]),
        (["inactivated"], ["object"]),
    ],
)
def test_any_other_body_is_400_and_changes_nothing(
    api: httpx.Client, body: object, words: list[str]
) -> None:
    agreement_id = invite_one(api)
    assert_problem(api.post(status_path(agreement_id), json=body), 400, *words)
    assert statuses(api) == ["INVITATION_SENT"]


def test_a_missing_or_another_clients_agreement_is_404_alike(
    api: httpx.Client, other_api: httpx.Client
) -> None:
    theirs = invite_one(other_api)
    mine = invite_one(api)
    missing = assert_problem(
        api.post(status_path(mine + 1000), json={"status": "inactivated"}), 404
    )
    foreign = assert_problem(api.post(status_path(theirs), json={"status": "inactivated"}), 404)
    # Nothing tells a missing agreement from another client's but the id itself.
    assert foreign["detail"].replace(str(theirs), "N") == missing["detail"].replace(
        str(mine + 1000), "N"
    )
    assert statuses(other_api) == ["INVITATION_SENT"]


@pytest.mark.parametrize(
    ("agreement_id", "status"),
    [("abc", 400), ("1.5", 400), ("0", 404), ("-3", 404), ("9" * 30, 404)],
)
def test_an_agreement_id_that_cannot_exist(
    api: httpx.Client, agreement_id: str, status: int
) -> None:
    assert_problem(api.post(status_path(agreement_id), json={"status": "inactivated"}), status)
