"""POST /payment-agent/paylists and GET .../paylists/{id}/payments: validation, idempotence."""

from __future__ import annotations

import re
import threading
from decimal import Decimal
from typing import Any

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.sandbox.paying import (
    NANOSECONDS_Z,
    PAYLISTS,
    active_worker,
    new_key,
    paylist,
    paylist_payments,
    payment,
    post_json,
    process,
    snapshot,
)
from tests.sandbox.support import ClientAccess, Controls, assert_problem, service_client


@pytest.fixture
def email(api: httpx.Client, controls: Controls) -> str:
    """The email of an ACTIVE worker of the demo client."""
    return active_worker(api, controls)[1]


def test_a_valid_paylist_answers_200_with_the_paylist(
    sandbox: SandboxServer, api: httpx.Client, email: str
) -> None:
    body = paylist(payment(email, "12.34"), payment(email, "5"))
    answer = post_json(api, PAYLISTS, body)
    assert answer.status_code == 200
    created = answer.json()
    assert created == {
        "id": created["id"],
        "description": "March payroll",
        "client_id": sandbox.client_id,
        "idempotence_key": body["idempotence_key"],
        "creation_date": created["creation_date"],
    }
    assert re.fullmatch(NANOSECONDS_Z, created["creation_date"])
    page = paylist_payments(api, created["id"])
    assert [(p["description"], p["amount"], p["worker_email"]) for p in page["content"]] == [
        (item["description"], Decimal(item["amount"]), email) for item in body["payments"]
    ]
    # Amounts are written with two places, as the service writes them.
    assert '"amount":5.00' in api.get(f"{PAYLISTS}/{created['id']}/payments").text


def test_client_id_may_name_the_tokens_client(
    sandbox: SandboxServer, api: httpx.Client, email: str
) -> None:
    answer = post_json(api, PAYLISTS, paylist(payment(email), client_id=sandbox.client_id))
    assert answer.status_code == 200


def test_client_id_of_another_client_is_403_and_creates_nothing(
    sandbox: SandboxServer,
    api: httpx.Client,
    controls: Controls,
    email: str,
    other_client: ClientAccess,
) -> None:
    before = snapshot(api, controls, sandbox.client_id)
    answer = post_json(api, PAYLISTS, paylist(payment(email), client_id=other_client.client_id))
    assert_problem(answer, 403, "client_id")
    assert snapshot(api, controls, sandbox.client_id) == before


def test_a_replay_with_the_same_content_answers_the_original_and_creates_nothing(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls, email: str
) -> None:
    body = paylist(payment(email, "10.5"), payment(email, "7.25"))
    first = post_json(api, PAYLISTS, body)
    process(controls)  # settled now, so nothing changes by itself during the test
    before = snapshot(api, controls, sandbox.client_id)
    # The same content written differently: 10.50 for 10.5, the email in other case.
    again = dict(body, payments=[dict(body["payments"][0], amount=Decimal("10.50"))])
    again["payments"].append(dict(body["payments"][1], worker_email=email.upper()))
    replay = post_json(api, PAYLISTS, again)
    assert (replay.status_code, replay.json()) == (200, first.json())
    assert snapshot(api, controls, sandbox.client_id) == before


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda body: body.update(description="April payroll"), id="description"),
        pytest.param(lambda body: body["payments"][0].update(amount=Decimal("10.01")), id="amount"),
        pytest.param(lambda body: body["payments"].reverse(), id="order"),
        pytest.param(lambda body: body["payments"].pop(), id="fewer payments"),
    ],
)
def test_the_same_key_with_other_content_is_409_and_creates_nothing(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls, email: str, change: Any
) -> None:
    body = paylist(payment(email, "10.00"), payment(email, "20.00"))
    created = post_json(api, PAYLISTS, body).json()
    process(controls)  # settled now, so nothing changes by itself during the test
    before = snapshot(api, controls, sandbox.client_id)
    change(body)
    problem = assert_problem(post_json(api, PAYLISTS, body), 409, body["idempotence_key"])
    assert str(created["id"]) in problem["detail"]
    assert snapshot(api, controls, sandbox.client_id) == before


def test_keys_are_unique_per_client_only(
    api: httpx.Client, other_api: httpx.Client, controls: Controls, email: str
) -> None:
    key = new_key()
    mine = post_json(api, PAYLISTS, paylist(payment(email), key=key)).json()
    other_email = active_worker(other_api, controls)[1]
    theirs = post_json(other_api, PAYLISTS, paylist(payment(other_email, "99"), key=key))
    assert theirs.status_code == 200
    assert theirs.json()["id"] != mine["id"]


def test_another_clients_paylist_is_404_as_a_missing_one(
    api: httpx.Client, other_api: httpx.Client, email: str
) -> None:
    created = post_json(api, PAYLISTS, paylist(payment(email))).json()
    mine = api.get(f"{PAYLISTS}/{created['id']}/payments")
    assert mine.status_code == 200
    theirs = assert_problem(other_api.get(f"{PAYLISTS}/{created['id']}/payments"), 404)
    missing = assert_problem(other_api.get(f"{PAYLISTS}/{created['id'] + 1}/payments"), 404)
    assert theirs["detail"].replace(str(created["id"]), "N") == missing["detail"].replace(
        str(created["id"] + 1), "N"
    )


def test_a_paylist_replayed_after_a_dropped_connection_is_created_once(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls, email: str
) -> None:
    body = paylist(payment(email, "1.00"), payment(email, "2.00"))
    controls.set_faults(drop_rate=1.0)
    with pytest.raises(httpx.TransportError):
        post_json(api, PAYLISTS, body)
    controls.set_faults()
    replay = post_json(api, PAYLISTS, body)
    assert replay.status_code == 200
    paylist_ids = {p["paylist_id"] for p in _all_payments(api)}
    assert paylist_ids == {replay.json()["id"]}
    assert len(_all_payments(api)) == 2
    posts = [(e["status"], e["dropped"]) for e in controls.requests() if e["path"] == PAYLISTS]
    assert posts == [(200, True), (200, False)]


def _all_payments(api: httpx.Client) -> list[dict[str, Any]]:
    answer = api.get("/payment-agent/payments", params={"endDate": "9999-01-01", "size": 200})
    return list(answer.json()["content"])


def test_the_paylist_payments_page_has_the_full_envelope(api: httpx.Client, email: str) -> None:
    items = [payment(email, str(n)) for n in range(1, 6)]
    created = post_json(api, PAYLISTS, paylist(*items)).json()
    page = paylist_payments(api, created["id"], page=2, size=2)  # one-indexed: the second
    assert [p["amount"] for p in page["content"]] == [Decimal(3), Decimal(4)]
    assert {key: page[key] for key in page if key != "content"} == {
        "pageable": {
            "sort": {"empty": False, "sorted": True, "unsorted": False},
            "offset": 2,
            "pageNumber": 1,
            "pageSize": 2,
            "paged": True,
            "unpaged": False,
        },
        "last": False,
        "totalPages": 3,
        "totalElements": 5,
        "first": False,
        "size": 2,
        "number": 1,
        "sort": {"empty": False, "sorted": True, "unsorted": False},
        "numberOfElements": 2,
        "empty": False,
    }
    assert paylist_payments(api, created["id"], size=500)["size"] == 200


@pytest.mark.parametrize(
    ("path", "status"),
    [("abc/payments", 400), ("0/payments", 404), ("99999999999999999999/payments", 404)],
)
def test_a_bad_paylist_id_is_400_or_404(api: httpx.Client, path: str, status: int) -> None:
    assert_problem(api.get(f"{PAYLISTS}/{path}"), status)


# --- refused bodies: each a 400 (or 413) problem+json that names the place, nothing created ---

LONG = "x" * 256


def _bad_cases() -> list[Any]:
    """(change to a valid body, status, words the problem must say)."""

    def item(**fields: Any) -> Any:
        return lambda body, email: body["payments"][0].update(fields)

    def top(**fields: Any) -> Any:
        return lambda body, email: body.update(fields)

    def drop(name: str) -> Any:
        return lambda body, email: body["payments"][0].pop(name)

    cases = [
        ("negative amount", item(amount=Decimal("-5.00")), "amount"),
        ("zero amount", item(amount=Decimal("0")), "amount"),
        ("three decimals", item(amount=Decimal("10.005")), "two decimal places"),
        ("amount as a string that is no number", item(amount="ten"), "must be a number"),
        ("amount true", item(amount=True), "must be a number"),
        ("amount missing", drop("amount"), "amount"),
        ("huge amount", item(amount=Decimal("1e30")), "amount"),
        ("31-character key", top(idempotence_key="k" * 31), "exactly 32"),
        ("33-character key", top(idempotence_key="k" * 33), "exactly 32"),
        ("key missing", top(idempotence_key=None), "idempotence_key"),
        ("key a number", top(idempotence_key=12), "idempotence_key"),
        ("unknown email", item(worker_email="nobody@example.com"), "not an active worker"),
        ("email not a string", item(worker_email=["a"]), "worker_email"),
        ("huge description", item(description="d" * 100_000), "at most 255"),
        ("256-character description", item(description=LONG), "at most 255"),
        ("blank description", item(description="   "), "description"),
        ("empty description", item(description=""), "description"),
        ("paylist description too long", top(description=LONG), "at most 255"),
        ("paylist description missing", top(description=None), "description"),
        ("no payments", top(payments=[]), "payments"),
        ("payments not an array", top(payments={"a": 1}), "payments"),
        ("payment not an object", top(payments=[3]), "object"),
        ("unknown item field", item(currency="EUR"), "currency"),
        ("unknown body field", top(status="NEW"), "status"),
        ("client_id a string that is no number", top(client_id="one"), "client_id"),
    ]
    return [pytest.param(change, words, id=name) for name, change, words in cases]


@pytest.mark.parametrize(("change", "words"), _bad_cases())
def test_a_bad_paylist_is_400_and_changes_nothing(
    sandbox: SandboxServer,
    api: httpx.Client,
    controls: Controls,
    email: str,
    change: Any,
    words: str,
) -> None:
    body = paylist(payment(email, "1.00"), payment(email, "2.00"))
    change(body, email)
    body = {key: value for key, value in body.items() if value is not None}
    before = snapshot(api, controls, sandbox.client_id)
    assert_problem(post_json(api, PAYLISTS, body), 400, words)
    assert snapshot(api, controls, sandbox.client_id) == before


def test_every_bad_item_is_listed_with_its_index_and_field(api: httpx.Client, email: str) -> None:
    body = paylist(
        payment(email, "1.00"),
        payment(email, "-1"),
        payment("nobody@example.com", "1.00"),
        payment(email, "2.001", description=""),
    )
    problem = assert_problem(post_json(api, PAYLISTS, body), 400)
    assert [(e.get("index"), e.get("field")) for e in problem["errors"]] == [
        (1, "amount"),
        (3, "description"),
        (3, "amount"),
    ]
    # The workers are checked once the body is well formed.
    body["payments"] = body["payments"][:1] + body["payments"][2:3]
    problem = assert_problem(post_json(api, PAYLISTS, body), 400)
    assert [(e["index"], e["field"]) for e in problem["errors"]] == [(1, "worker_email")]


def test_the_same_payment_twice_in_one_paylist_is_400(api: httpx.Client, email: str) -> None:
    twice = payment(email, "10.00")
    again = dict(twice, amount=Decimal("10"), worker_email=email.upper())
    problem = assert_problem(post_json(api, PAYLISTS, paylist(twice, again)), 400, "repeats item 0")
    assert problem["errors"][0]["index"] == 1
    other_description = dict(twice, description="Invoice 1b")
    assert post_json(api, PAYLISTS, paylist(twice, other_description)).status_code == 200


@pytest.mark.parametrize("status", ["INVITATION_SENT", "VERIFICATION_PENDING", "ENDED"])
def test_a_worker_who_is_not_active_cannot_be_paid(
    api: httpx.Client, controls: Controls, status: str
) -> None:
    agreement_id, email = active_worker(api, controls)
    controls.move_agreement(agreement_id, status)
    assert_problem(post_json(api, PAYLISTS, paylist(payment(email))), 400, "not an active worker")


def test_an_inactivated_worker_cannot_be_paid(api: httpx.Client, controls: Controls) -> None:
    agreement_id, email = active_worker(api, controls)
    api.post(
        f"/contract-server/v2/general/worker/agreements/{agreement_id}/status",
        json={"status": "inactivated"},
    )
    assert_problem(post_json(api, PAYLISTS, paylist(payment(email))), 400, "not an active worker")


def test_another_clients_worker_cannot_be_paid(
    api: httpx.Client, other_api: httpx.Client, controls: Controls
) -> None:
    theirs = active_worker(other_api, controls)[1]
    assert_problem(post_json(api, PAYLISTS, paylist(payment(theirs))), 400, "not an active worker")


def test_1000_payments_are_accepted_and_1001_are_413(
    sandbox: SandboxServer, api: httpx.Client, controls: Controls, email: str
) -> None:
    items = [payment(email, "0.01", description=f"Line {n}") for n in range(1001)]
    before = snapshot(api, controls, sandbox.client_id)
    assert_problem(post_json(api, PAYLISTS, paylist(*items)), 413, "1001", "1000")
    assert snapshot(api, controls, sandbox.client_id) == before
    created = post_json(api, PAYLISTS, paylist(*items[:1000]))
    assert created.status_code == 200
    assert paylist_payments(api, created.json()["id"])["totalElements"] == 1000


def test_concurrent_posts_of_one_paylist_create_it_once(
    sandbox: SandboxServer, api: httpx.Client, email: str
) -> None:
    body = paylist(payment(email, "1.00"), payment(email, "2.00"))
    answers: list[httpx.Response] = []

    def post() -> None:
        with service_client(sandbox.base_url, sandbox.token) as client:
            answers.append(post_json(client, PAYLISTS, body))

    threads = [threading.Thread(target=post) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {(a.status_code, a.json()["id"]) for a in answers} == {(200, answers[0].json()["id"])}
    assert len(_all_payments(api)) == 2
