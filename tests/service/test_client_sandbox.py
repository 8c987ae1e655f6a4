"""Every worker and webhook method against the sandbox, over real HTTP."""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import pytest

from reconciler.secrets import Secret
from reconciler.service.errors import (
    InvalidRequest,
    NotFound,
    ReadOnlyViolation,
    Unauthorized,
)
from reconciler.service.models import WebhookHeader, WorkerStatus
from tests.service.helpers import client_for, control, invitation, request_log


def test_invite_list_and_read_back_every_field(sandbox: Any) -> None:
    with client_for(sandbox) as client:
        results = client.invite_workers(
            [
                invitation(1),
                invitation(
                    2,
                    type_of_worker="Business",
                    worker_legal_name="Acme Consulting Ltd",
                    country_iso="KR",
                    external_id=None,
                    worker_email_text="Welcome",
                ),
            ]
        )
        assert [(r.worker_email, r.external_id, r.status) for r in results] == [
            ("worker1@example.com", "T-000001", WorkerStatus.INVITATION_SENT),
            ("worker2@example.com", None, WorkerStatus.INVITATION_SENT),
        ]
        workers = client.list_workers()
    assert [w.agreement_id for w in workers] == [r.agreement_id for r in results]
    first = workers[0]
    assert (first.email, first.job_title, first.external_id) == (
        "worker1@example.com",
        "Engineer",
        "T-000001",
    )
    # Unanswered invitations show no names and no country yet.
    assert (first.first_name, first.last_name, first.country, first.country_iso) == (
        None,
        None,
        None,
        None,
    )
    assert first.created_at.tzinfo is not None
    assert abs((datetime.now(UTC) - first.created_at).total_seconds()) < 600


def test_country_names_come_back_as_iso_codes(sandbox: Any) -> None:
    with client_for(sandbox) as client:
        [gb, kr] = client.invite_workers([invitation(1), invitation(2, country_iso="KR")])
        for result in (gb, kr):
            control(sandbox, f"agreements/{result.agreement_id}/status", {"status": "ACTIVE"})
        workers = {w.agreement_id: w for w in client.list_workers(WorkerStatus.ACTIVE)}
    assert (workers[gb.agreement_id].country, workers[gb.agreement_id].country_iso) == (
        "United Kingdom",
        "GB",
    )
    assert (workers[kr.agreement_id].country, workers[kr.agreement_id].country_iso) == (
        "Korea, Republic of",
        "KR",
    )
    assert workers[gb.agreement_id].first_name == "Worker1"


def test_status_filter_by_the_service_and_by_the_client(sandbox: Any) -> None:
    with client_for(sandbox) as client:
        results = client.invite_workers([invitation(n) for n in range(1, 5)])
        ids = [r.agreement_id for r in results]
        control(sandbox, f"agreements/{ids[0]}/status", {"status": "ACTIVE"})
        control(sandbox, f"agreements/{ids[1]}/status", {"status": "VERIFICATION_PENDING"})
        client.inactivate_agreement(ids[2])
        by_status = {
            status: [w.agreement_id for w in client.list_workers(status)] for status in WorkerStatus
        }
    assert by_status == {
        WorkerStatus.ACTIVE: [ids[0]],
        WorkerStatus.VERIFICATION_PENDING: [ids[1]],
        WorkerStatus.INACTIVATED: [ids[2]],
        WorkerStatus.INVITATION_SENT: [ids[3]],
        WorkerStatus.ENDED: [],
    }


def test_inactivation_reports_whether_it_changed_anything(sandbox: Any) -> None:
    with client_for(sandbox) as client:
        [result] = client.invite_workers([invitation(1)])
        first = client.inactivate_agreement(result.agreement_id)
        again = client.inactivate_agreement(result.agreement_id)
        [worker] = client.list_workers()
    assert (first.agreement_id, first.status, first.status_id, first.changed) == (
        result.agreement_id,
        WorkerStatus.INACTIVATED,
        5,
        True,
    )
    assert again.changed is False
    assert worker.status == WorkerStatus.INACTIVATED


def test_another_clients_agreement_is_not_found(sandbox: Any) -> None:
    other = control(sandbox, "clients", {"name": "Other Co"})
    with client_for(sandbox, token=other["token"]) as stranger:
        [theirs] = stranger.invite_workers([invitation(1)])
    with client_for(sandbox) as client, pytest.raises(NotFound) as caught:
        client.inactivate_agreement(theirs.agreement_id)
    assert caught.value.status == 404
    assert f"/agreements/{theirs.agreement_id}/status failed: 404 Not Found" in str(caught.value)


def test_a_refused_batch_names_each_item(sandbox: Any) -> None:
    with client_for(sandbox) as client, pytest.raises(InvalidRequest) as caught:
        client.invite_workers(
            [invitation(1), invitation(2, worker_email="not-an-email"), invitation(3)]
        )
    error = caught.value
    assert error.status == 400
    assert [(item.index, item.field) for item in error.item_errors] == [(1, "workerEmail")]
    assert "item 1, workerEmail:" in str(error)
    with client_for(sandbox) as client:
        assert client.list_workers() == []  # all or nothing


def test_an_invalid_batch_size_is_refused_before_sending(sandbox: Any) -> None:
    with client_for(sandbox) as client:
        with pytest.raises(ValueError, match="1 to 100"):
            client.invite_workers([invitation(n) for n in range(101)])
        with pytest.raises(ValueError, match="1 to 100"):
            client.invite_workers([])
    assert request_log(sandbox) == []


def test_unauthorized_names_the_tokens_source_never_the_token(sandbox: Any) -> None:
    token = "wrong-Qx7Lm2Vz9Pk4Rt8W"
    with (
        client_for(sandbox, token=token, token_source="the token file /run/token") as client,
        pytest.raises(Unauthorized) as caught,
    ):
        client.list_workers()
    message = str(caught.value)
    assert "refused the token from the token file /run/token" in message
    assert token not in message and token not in repr(caught.value)
    assert caught.value.status == 401


def test_webhook_create_read_and_replace(sandbox: Any) -> None:
    with client_for(sandbox) as client:
        assert client.get_webhook() is None
        created = client.set_webhook(
            "https://hooks.example.com/workforce",
            [WebhookHeader("X-Webhook-Token", Secret("hv-Jd8s7Fh2Kq"))],
            ["KYC"],
        )
        replaced = client.set_webhook(
            "https://hooks.example.com/v2", [], ["KYC", "PAYMENT"], enabled=False
        )
        read = client.get_webhook()
    assert created.url == "https://hooks.example.com/workforce"
    assert created.headers == (WebhookHeader("X-Webhook-Token", Secret("hv-Jd8s7Fh2Kq")),)
    assert created.enabled and created.client_id == sandbox.client_id
    assert created.created_at is not None and created.created_at.tzinfo is not None
    assert read == replaced
    assert (read.url, read.enabled, read.event_types, read.headers) == (
        "https://hooks.example.com/v2",
        False,
        ("KYC", "PAYMENT"),
        (),
    )
    assert read.created_at == created.created_at
    assert read.updated_at is not None and read.updated_at >= created.created_at


def test_a_bad_webhook_is_refused_with_the_services_reason(sandbox: Any) -> None:
    with client_for(sandbox) as client, pytest.raises(InvalidRequest) as caught:
        client.set_webhook("http://hooks.example.com/x", [], ["KYC"])
    assert caught.value.status == 400
    assert "POST /webhooks/clients failed: 400 Bad Request" in str(caught.value)


def test_read_only_refuses_before_a_byte_is_sent(sandbox: Any) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    try:
        with client_for(sandbox, base_url=f"http://127.0.0.1:{port}", read_only=True) as client:
            refusals = [
                lambda: client.inactivate_agreement(1),
                lambda: client.invite_workers([invitation(1)]),
                lambda: client.set_webhook("https://hooks.example.com", [], ["KYC"]),
                lambda: client.create_paylist("March", []),
            ]
            for refuse in refusals:
                with pytest.raises(ReadOnlyViolation, match="read-only"):
                    refuse()
        with pytest.raises(TimeoutError):
            listener.accept()  # nobody ever connected
    finally:
        listener.close()
    with client_for(sandbox, read_only=True) as client:
        with pytest.raises(ReadOnlyViolation):
            client.inactivate_agreement(1)
        assert client.list_workers() == []
    assert [entry["method"] for entry in request_log(sandbox)] == ["GET"]


def test_one_client_serves_many_threads_at_once(sandbox: Any) -> None:
    batches = [[invitation(n) for n in range(first, first + 10)] for first in range(1, 81, 10)]
    with client_for(sandbox, parallelism=4) as client, ThreadPoolExecutor(8) as pool:
        results = [r for batch in pool.map(client.invite_workers, batches) for r in batch]
        workers = client.list_workers()
    assert sorted(r.worker_email for r in results) == sorted(
        f"worker{n}@example.com" for n in range(1, 81)
    )
    assert sorted(w.agreement_id for w in workers) == sorted(r.agreement_id for r in results)
