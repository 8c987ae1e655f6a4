"""One client, every kind of service: pages from 0 or from 1, errors as problem+json or as
Spring Boot writes them. The same reads give the same results, and each error the same facts."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from reconciler.service.errors import InvalidRequest, NotFound, Unauthorized
from reconciler.service.models import Invitation
from tests.service.helpers import client_for

KINDS = [(zero, style) for zero in (False, True) for style in ("problem", "spring")]


@pytest.fixture(params=KINDS, ids=[f"{'zero' if z else 'one'}-based-{s}" for z, s in KINDS])
def service(request: pytest.FixtureRequest) -> Iterator[SandboxServer]:
    zero_based, style = request.param
    with SandboxServer(zero_based_pages=zero_based, error_style=style) as server:
        yield server


def _invitation(number: int, **fields: str) -> Invitation:
    values = {
        "worker_name": "Ada",
        "worker_surname": "Lovelace",
        "type_of_worker": "Worker",
        "worker_email": f"kind{number}@example.com",
        "country_iso": "GB",
        "external_id": f"KIND-{number}",
    }
    return Invitation(**{**values, **fields})  # type: ignore[arg-type]


def test_the_same_reads_and_the_same_refusals(service: SandboxServer) -> None:
    with client_for(service, page_size=2) as client:
        created = client.invite_workers([_invitation(n) for n in range(5)])
        listed = client.list_workers()
        assert [w.agreement_id for w in listed] == [r.agreement_id for r in created]
        with pytest.raises(InvalidRequest) as refused:
            client.invite_workers([_invitation(9, worker_email="not an email")])
        (item,) = refused.value.item_errors
        assert (item.index, item.field) == (0, "workerEmail")
        assert "email" in item.message
        with pytest.raises(NotFound, match="paylist 999 not found"):
            client.list_paylist_payments(999)
    with (
        client_for(service, token="no-such-token") as stranger,
        pytest.raises(Unauthorized, match="invalid token"),
    ):
        stranger.list_workers()


def test_spring_errors_have_spring_boot_s_shape() -> None:
    with SandboxServer(error_style="spring") as server:
        answer = httpx.post(
            f"{server.base_url}/contract/workers/inviteWorkersBulkLocked",
            headers={"Authorization": f"Bearer {server.token}"},
            json=[{"workerEmail": "x"}, {"workerEmail": "not an email"}],
        )
        assert answer.status_code == 400
        assert answer.headers["content-type"] == "application/json"
        body = answer.json()
        assert set(body) == {"timestamp", "status", "error", "message", "path", "errors"}
        assert body["path"] == "/contract/workers/inviteWorkersBulkLocked"
        assert {"field": "[1].workerEmail"}.items() <= {
            **next(e for e in body["errors"] if e["field"] == "[1].workerEmail")
        }.items()
        control = httpx.post(f"{server.base_url}/_sandbox/faults", json={"error_rate": "x"})
        assert set(json.loads(control.text)) >= {"timestamp", "status", "message", "path"}


def test_numbers_sent_as_strings_are_read_as_numbers(sandbox: SandboxServer) -> None:
    headers = {"Authorization": f"Bearer {sandbox.token}"}
    config = {"url": "https://hooks.example.com/h", "headers": [], "event_types": ["KYC"]}
    same = httpx.post(
        f"{sandbox.base_url}/webhooks/clients",
        headers=headers,
        json={**config, "client_id": str(sandbox.client_id)},
    )
    assert same.status_code == 201, same.text
    other = httpx.post(
        f"{sandbox.base_url}/webhooks/clients", headers=headers, json={**config, "client_id": "x1"}
    )
    assert other.status_code == 400
    topped = httpx.post(
        f"{sandbox.base_url}/_sandbox/clients/{sandbox.client_id}/top-up", json={"amount": "10.50"}
    )
    assert topped.is_success, topped.text
