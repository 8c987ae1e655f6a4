"""GET /contract/workers/list: the envelope, paging, the statusId filter, field formats."""

from __future__ import annotations

import re

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.sandbox.support import Controls, assert_problem, invitation, service_client

LIST = "/contract/workers/list"
INVITE = "/contract/workers/inviteWorkersBulkLocked"

ENVELOPE_KEYS = {
    "content",
    "pageable",
    "last",
    "totalPages",
    "totalElements",
    "first",
    "size",
    "number",
    "sort",
    "numberOfElements",
    "empty",
}
WORKER_KEYS = {
    "agreementId",
    "firstName",
    "lastName",
    "legalName",
    "email",
    "jobTitle",
    "country",
    "externalId",
    "workerCreationDate",
    "status",
}


def invite(api: httpx.Client, count: int, **fields: object) -> list[int]:
    answer = api.post(INVITE, json=[invitation(**fields) for _ in range(count)])
    assert answer.status_code == 200, answer.text
    return [item["agreementId"] for item in answer.json()]


def test_an_empty_account_answers_an_empty_full_envelope(api: httpx.Client) -> None:
    body = api.get(LIST).json()
    assert set(body) == ENVELOPE_KEYS
    assert body["content"] == []
    assert body["pageable"] == {
        "sort": {"empty": False, "sorted": True, "unsorted": False},
        "offset": 0,
        "pageNumber": 0,
        "pageSize": 20,
        "paged": True,
        "unpaged": False,
    }
    assert (body["totalElements"], body["totalPages"], body["numberOfElements"]) == (0, 0, 0)
    assert (body["first"], body["last"], body["empty"]) == (True, True, True)
    assert (body["size"], body["number"]) == (20, 0)


def test_pages_count_from_one_and_are_sorted_by_agreement_id(api: httpx.Client) -> None:
    """The real service reads `page` one-indexed (0 is the first page too); the envelope
    counts from 0, as the interface's own example shows (`page=1` answers `pageNumber: 0`)."""
    ids = invite(api, 5)
    first = api.get(LIST, params={"size": 2}).json()
    assert api.get(LIST, params={"page": 0, "size": 2}).json() == first
    assert api.get(LIST, params={"page": 1, "size": 2}).json() == first
    second = api.get(LIST, params={"page": 2, "size": 2}).json()
    last = api.get(LIST, params={"page": 3, "size": 2}).json()
    beyond = api.get(LIST, params={"page": 4, "size": 2}).json()
    assert [w["agreementId"] for w in first["content"]] == ids[:2]
    assert [w["agreementId"] for w in second["content"]] == ids[2:4]
    assert [w["agreementId"] for w in last["content"]] == ids[4:]
    assert beyond["content"] == [] and beyond["empty"] and beyond["last"]
    assert (first["first"], first["last"], first["number"], first["totalPages"]) == (
        True,
        False,
        0,
        3,
    )
    assert (second["first"], second["last"], second["pageable"]["offset"]) == (False, False, 2)
    assert (last["last"], last["numberOfElements"], last["totalElements"]) == (True, 1, 5)
    assert ids == sorted(ids)


def test_default_size_is_20_and_a_larger_size_is_clamped_to_200(api: httpx.Client) -> None:
    invite(api, 100)
    invite(api, 100)
    invite(api, 21)
    assert len(api.get(LIST).json()["content"]) == 20
    clamped = api.get(LIST, params={"size": 5000}).json()
    assert (clamped["size"], clamped["pageable"]["pageSize"], clamped["totalPages"]) == (
        200,
        200,
        2,
    )
    assert len(clamped["content"]) == 200


def test_a_new_invitation_lists_with_names_and_country_null(api: httpx.Client) -> None:
    item = invitation(externalId="ENG-042", jobTitle="Engineer", workerEmail="Ada@Example.com")
    (agreement_id,) = [w["agreementId"] for w in api.post(INVITE, json=[item]).json()]
    (worker,) = api.get(LIST).json()["content"]
    assert set(worker) == WORKER_KEYS
    assert worker["agreementId"] == agreement_id
    assert (worker["firstName"], worker["lastName"], worker["legalName"]) == (None, None, None)
    assert worker["country"] is None
    assert (worker["email"], worker["jobTitle"], worker["externalId"]) == (
        "Ada@Example.com",
        "Engineer",
        "ENG-042",
    )
    assert worker["status"] == "INVITATION_SENT"
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", worker["workerCreationDate"]
    )


@pytest.mark.parametrize(
    ("iso", "name"),
    [
        ("GB", "United Kingdom"),
        ("DE", "Germany"),
        ("KR", "Korea, Republic of"),
        ("US", "United States"),
        ("NL", "Netherlands"),
    ],
)
def test_country_is_the_iso_codes_name_once_the_worker_answers(
    api: httpx.Client, controls: Controls, iso: str, name: str
) -> None:
    (agreement_id,) = invite(api, 1, countryIso=iso)
    controls.move_agreement(agreement_id, "ACTIVE")
    (worker,) = api.get(LIST).json()["content"]
    assert worker["country"] == name
    assert (worker["firstName"], worker["lastName"]) == ("Ada", "Lovelace")


@pytest.mark.parametrize(
    "text",
    [
        'Quote " and back\\slash',
        "Zoë Ångström 李 😀",
        "Tab\tand line\nbreak",
        "e\u0301 (NFD) and \u00a0",
        "</script><b>",
    ],
)
def test_text_reads_back_as_written_from_the_list_and_the_lookups(
    api: httpx.Client, controls: Controls, text: str
) -> None:
    """The sandbox writes a Worker's JSON in SQLite: what JSON escapes comes back unchanged."""
    (agreement_id,) = invite(api, 1, jobTitle=text, externalId=f"EXT-{text[:5]}")
    moved = controls.move_agreement(
        agreement_id, "ACTIVE", firstName=text, lastName=text, legalName=text
    )
    (listed,) = api.get(LIST).json()["content"]
    by_email = api.get("/contract/workers", params={"email": listed["email"]})
    assert by_email.status_code == 200, by_email.text
    for worker in (listed, moved, by_email.json()):
        assert set(worker) == WORKER_KEYS
        assert worker["agreementId"] == agreement_id
        assert worker["jobTitle"] == text
        assert (worker["firstName"], worker["lastName"], worker["legalName"]) == (text,) * 3
        assert worker["externalId"] == f"EXT-{text[:5]}"
        assert worker["country"] == "United Kingdom"
    assert listed == by_email.json() == moved


@pytest.mark.parametrize(
    ("status_id", "status"),
    [(0, "ACTIVE"), (1, "INVITATION_SENT"), (2, "VERIFICATION_PENDING"), (3, "ENDED")],
)
def test_status_id_filters_by_status(
    api: httpx.Client, controls: Controls, status_id: int, status: str
) -> None:
    ids = invite(api, 5)
    for agreement_id, move in zip(ids, ["ACTIVE", "VERIFICATION_PENDING", "ENDED"], strict=False):
        controls.move_agreement(agreement_id, move)
    api.post(
        f"/contract-server/v2/general/worker/agreements/{ids[3]}/status",
        json={"status": "inactivated"},
    )
    body = api.get(LIST, params={"statusId": status_id}).json()
    assert body["content"], status
    assert {w["status"] for w in body["content"]} == {status}
    assert body["totalElements"] == len(body["content"])


def test_inactivated_workers_are_listed_without_a_filter_only(
    api: httpx.Client,
) -> None:
    (agreement_id,) = invite(api, 1)
    api.post(
        f"/contract-server/v2/general/worker/agreements/{agreement_id}/status",
        json={"status": "inactivated"},
    )
    assert [w["status"] for w in api.get(LIST).json()["content"]] == ["INACTIVATED"]
    for status_id in range(4):
        assert api.get(LIST, params={"statusId": status_id}).json()["content"] == []


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"statusId": "4"}, ["statusId", "0, 1, 2 or 3"]),
        ({"statusId": "5"}, ["statusId"]),
        ({"statusId": "-1"}, ["statusId"]),
        ({"statusId": "ACTIVE"}, ["statusId", "integer"]),
        ({"statusId": "1.0"}, ["statusId", "integer"]),
        ({"statusId": ""}, ["statusId", "integer"]),
        ({"page": "-1"}, ["page", "0 or more"]),
        ({"page": "one"}, ["page", "integer"]),
        ({"size": "0"}, ["size", "1 or more"]),
        ({"size": "-5"}, ["size"]),
        ({"size": "ten"}, ["size", "integer"]),
        ({"statusId": "9" * 40}, ["statusId"]),
    ],
)
def test_bad_query_parameters_are_400(
    api: httpx.Client, params: dict[str, str], words: list[str]
) -> None:
    assert_problem(api.get(LIST, params=params), 400, *words)


def test_a_huge_page_number_is_an_empty_page_not_an_error(api: httpx.Client) -> None:
    invite(api, 1)
    body = api.get(LIST, params={"page": str(10**30)}).json()
    assert body["content"] == [] and body["totalElements"] == 1


def test_with_zero_based_pages_page_one_is_the_second() -> None:
    with SandboxServer(zero_based_pages=True) as server:
        api = service_client(server.base_url, server.token)
        ids = invite(api, 3)
        first = api.get(LIST, params={"page": 0, "size": 2}).json()
        second = api.get(LIST, params={"page": 1, "size": 2}).json()
        assert [w["agreementId"] for w in first["content"]] == ids[:2]
        assert [w["agreementId"] for w in second["content"]] == ids[2:]
        assert (first["number"], second["number"]) == (0, 1)
        api.close()


def test_a_write_between_two_pages_is_seen_by_the_next(api: httpx.Client) -> None:
    """Deep pages come from the ids of the list as last read (keyset), never a stale copy."""
    first_ids = invite(api, 3)
    first = api.get(LIST, params={"page": 1, "size": 2}).json()
    assert first["totalElements"] == 3
    more = invite(api, 2)
    second = api.get(LIST, params={"page": 2, "size": 2}).json()
    assert second["totalElements"] == 5
    assert [w["agreementId"] for w in second["content"]] == [first_ids[2], more[0]]
    status = f"/contract-server/v2/general/worker/agreements/{first_ids[0]}/status"
    assert api.post(status, json={"status": "inactivated"}).is_success
    active = api.get(LIST, params={"statusId": 3, "size": 200}).json()
    assert first_ids[0] not in [w["agreementId"] for w in active["content"]]
