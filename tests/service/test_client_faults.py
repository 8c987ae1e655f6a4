"""Retries and ambiguous outcomes, with faults injected by the sandbox, over real HTTP."""

from __future__ import annotations

import socket
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from reconciler.sandbox import SandboxServer
from reconciler.service.errors import (
    AmbiguousOutcome,
    RateLimited,
    ServerError,
    TransportFailure,
)
from reconciler.service.models import WorkerStatus
from tests.service.helpers import (
    FAST_RETRY,
    client_for,
    control,
    invitation,
    invite_many,
    last_seq,
    request_log,
)

INVITE_PATH = "/contract/workers/inviteWorkersBulkLocked"
REFRESH_SIZE = 5_000


@pytest.fixture(scope="module")
def crowded() -> Iterator[SandboxServer]:
    """A sandbox holding 5,000 workers (25 pages of 200), shared by the refresh tests."""
    with SandboxServer(process_delay_ms=50, event_retry_base_ms=10) as server:
        with client_for(server) as client:
            invite_many(client, REFRESH_SIZE)
        yield server


@pytest.mark.parametrize(
    ("faults", "status"),
    [
        ({"error_rate": 0.19, "error_status": 503, "seed": 11}, 503),
        ({"rate_limit_per_s": 12}, 429),
        ({"drop_rate": 0.19, "seed": 5}, None),
    ],
    ids=["503s", "429s with Retry-After", "dropped connections"],
)
def test_a_full_refresh_rides_out_faults(
    crowded: SandboxServer, faults: dict[str, Any], status: int | None
) -> None:
    since = last_seq(crowded)
    control(crowded, "faults", faults)
    try:
        with client_for(crowded) as client:
            workers = client.list_workers()
    finally:
        control(crowded, "faults", {})
    ids = [worker.agreement_id for worker in workers]
    assert len(ids) == REFRESH_SIZE
    assert len(set(ids)) == REFRESH_SIZE
    assert ids == sorted(ids)
    log = request_log(crowded, since)
    faulted = (
        [e for e in log if e["status"] == status] if status else [e for e in log if e["dropped"]]
    )
    assert faulted, "the fault never struck: the test proves nothing"


def test_a_rate_limited_request_waits_as_long_as_the_service_asks(sandbox: Any) -> None:
    control(sandbox, "faults", {"rate_limit_per_s": 1})
    with client_for(sandbox) as client:
        client.list_workers()
        started = time.monotonic()
        client.list_workers()
        waited = time.monotonic() - started
    statuses = [entry["status"] for entry in request_log(sandbox)]
    assert statuses == [200, 429, 200]
    assert waited >= 0.9  # Retry-After is in whole seconds, at least 1


def test_a_wait_longer_than_the_time_left_is_not_attempted(sandbox: Any) -> None:
    control(sandbox, "faults", {"rate_limit_per_s": 1})
    short = replace(FAST_RETRY, total_seconds=0.5)
    with client_for(sandbox, retry=short) as client:
        client.list_workers()
        with pytest.raises(RateLimited) as caught:
            client.list_workers()
    assert caught.value.status == 429
    assert caught.value.retry_after is not None and caught.value.retry_after >= 1
    assert [entry["status"] for entry in request_log(sandbox)] == [200, 429]


def test_retries_are_bounded(sandbox: Any) -> None:
    control(sandbox, "faults", {"error_rate": 1.0, "error_status": 502})
    with (
        client_for(sandbox, retry=replace(FAST_RETRY, attempts=3)) as client,
        pytest.raises(ServerError) as caught,
    ):
        client.get_webhook()
    assert caught.value.status == 502
    assert len(request_log(sandbox)) == 3


def test_inactivation_is_retried_because_it_is_safe(sandbox: Any) -> None:
    with client_for(sandbox) as client:
        [result] = client.invite_workers([invitation(1)])
        since = last_seq(sandbox)
        control(sandbox, "faults", {"drop_rate": 0.6, "seed": 3})
        try:
            outcome = client.inactivate_agreement(result.agreement_id)
        finally:
            control(sandbox, "faults", {})
    assert outcome.status == WorkerStatus.INACTIVATED
    attempts = request_log(sandbox, since)
    assert len(attempts) > 1 and attempts[0]["dropped"]


@pytest.mark.parametrize(
    "faults",
    [{"drop_rate": 1.0}, {"error_rate": 1.0, "error_status": 503}],
    ids=["dropped connection", "503"],
)
def test_an_invitation_is_never_repeated_after_it_may_have_landed(
    sandbox: Any, faults: dict[str, Any]
) -> None:
    control(sandbox, "faults", faults)
    with client_for(sandbox) as client, pytest.raises(AmbiguousOutcome) as caught:
        client.invite_workers([invitation(1), invitation(2)])
    control(sandbox, "faults", {})
    assert "may or may not have taken effect" in str(caught.value)
    sent = [entry for entry in request_log(sandbox) if entry["path"] == INVITE_PATH]
    assert len(sent) == 1


def test_an_invitation_without_an_answer_in_time_is_ambiguous_and_not_repeated(
    sandbox: Any,
) -> None:
    control(sandbox, "faults", {"latency_ms": 4000})
    started = time.monotonic()
    with client_for(sandbox, timeout=0.3) as client, pytest.raises(AmbiguousOutcome) as caught:
        client.invite_workers([invitation(1)])
    assert time.monotonic() - started < 3.5  # it did not wait for the 4 s answer
    assert "no answer in time" in str(caught.value)
    # The sandbox logs the request once its (delayed) handling ends: wait for it, then count
    # (the client has given up, so no retry can come after).
    deadline, sent = time.monotonic() + 30, []
    while not sent and time.monotonic() < deadline:
        time.sleep(0.1)
        sent = [entry for entry in request_log(sandbox) if entry["path"] == INVITE_PATH]
    assert len(sent) == 1, sent


def test_after_a_dropped_invitation_a_re_read_shows_what_landed(sandbox: Any) -> None:
    control(sandbox, "faults", {"drop_rate": 1.0})
    with client_for(sandbox) as client:
        with pytest.raises(AmbiguousOutcome):
            client.invite_workers([invitation(1)])
        control(sandbox, "faults", {})
        [worker] = client.list_workers()
    assert worker.email == "worker1@example.com"  # the drop came after the work was done


def test_a_rate_limited_invitation_is_sent_again(sandbox: Any) -> None:
    control(sandbox, "faults", {"rate_limit_per_s": 1})
    with client_for(sandbox) as client:
        client.invite_workers([invitation(1)])
        client.invite_workers([invitation(2)])
        assert len(client.list_workers()) == 2
    invites = [entry["status"] for entry in request_log(sandbox) if entry["path"] == INVITE_PATH]
    assert invites == [200, 429, 200]


def test_an_invitation_that_could_not_connect_is_a_transport_failure(sandbox: Any) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: the connection is refused, nothing is sent
    with (
        client_for(sandbox, base_url=f"http://127.0.0.1:{port}") as client,
        pytest.raises(TransportFailure) as caught,
    ):
        client.invite_workers([invitation(1)])
    assert not isinstance(caught.value, AmbiguousOutcome)
    assert caught.value.surely_not_sent
    assert "could not connect" in str(caught.value)


def test_faults_never_make_a_read_return_a_partial_list(sandbox: Any) -> None:
    with client_for(sandbox) as client:
        invite_many(client, 450)
    control(sandbox, "faults", {"error_rate": 1.0})
    with (
        client_for(sandbox, retry=replace(FAST_RETRY, attempts=2)) as client,
        pytest.raises(ServerError),
    ):
        client.list_workers()
    control(sandbox, "faults", {})
    counts = Counter(entry["status"] for entry in request_log(sandbox))
    assert counts[503] >= 2
