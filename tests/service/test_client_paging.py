"""Paging against services numbered from 0 and from 1, with full and partial envelopes.

A tiny real HTTP service (tests/service/paged_service.py) stands in for a service that pages
unlike the sandbox; the client must return every item exactly once either way, and not wander
far past the last page.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import pytest

from reconciler.secrets import Secret
from reconciler.service.client import ServiceClient
from reconciler.service.config import ClientConfig
from reconciler.service.errors import ServerError
from tests.service.helpers import FAST_RETRY
from tests.service.paged_service import PagedService, serving

PAGE_SIZE = 10


@pytest.fixture(scope="module", params=[False, True], ids=["zero-indexed", "one-indexed"])
def indexing(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture(scope="module")
def service(indexing: bool) -> Iterator[tuple[PagedService, str]]:
    fake = PagedService(count=0, one_indexed=indexing)
    with serving(fake.app()) as base_url:
        yield fake, base_url


def _client(base_url: str, *, parallelism: int = 3) -> ServiceClient:
    config = ClientConfig(
        base_url=base_url,
        token=Secret("paging-test-token"),
        token_source="the test",
        page_size=PAGE_SIZE,
        parallelism=parallelism,
        retry=FAST_RETRY,
    )
    return ServiceClient(config, read_only=True)


READS: dict[str, tuple[str, Callable[[ServiceClient], list[int]]]] = {
    "full envelope (workers)": (
        "/contract/workers/list",
        lambda client: [worker.agreement_id for worker in client.iter_workers()],
    ),
    "content, pageable, totalElements (date-range payments)": (
        "/payment-agent/payments",
        lambda client: [payment.id for payment in client.iter_payments()],
    ),
    "content only (wallet journal)": (
        "/client-wallet/clients/transactions",
        lambda client: [entry.journal_id for entry in client.iter_transactions()],
    ),
}


@pytest.mark.parametrize("read", list(READS))
@pytest.mark.parametrize("count", [0, 1, 9, 10, 11, 20, 47, 100])
def test_every_item_once(service: tuple[PagedService, str], read: str, count: int) -> None:
    fake, base_url = service
    fake.count = count
    fake.requests.clear()
    path, ids_of = READS[read]
    with _client(base_url) as client:
        ids = ids_of(client)
    assert ids == list(range(1, count + 1))
    pages_needed = max(1, math.ceil(count / PAGE_SIZE))
    asked = [page for asked_path, page in fake.requests if asked_path == path]
    assert asked[0] == 1  # the first page of a one-indexed service, as the real one is
    # The pages, page 0 when page 1 did not say it was the first, and at most one empty page
    # past the end.
    assert len(asked) <= pages_needed + 2, asked
    assert len(asked) == len(set(asked)), f"a page was asked twice: {asked}"
    if read.startswith("full envelope"):  # number, totalPages and last leave nothing to guess
        expected = pages_needed if fake.one_indexed or count == 0 else max(pages_needed, 2)
        assert len(asked) == expected, asked


def test_pages_after_the_first_are_fetched_concurrently(service: tuple[PagedService, str]) -> None:
    fake, base_url = service
    fake.count = 300
    fake.requests.clear()
    with _client(base_url, parallelism=4) as client:
        assert len(client.list_workers()) == 300
    asked = [page for path, page in fake.requests if path == "/contract/workers/list"]
    first = 1 if fake.one_indexed else 0
    assert sorted(asked) == list(range(first, first + 30))


def test_a_service_that_clamps_the_size_lower_still_gives_everything(
    service: tuple[PagedService, str],
) -> None:
    fake, base_url = service
    fake.count, fake.max_size = 35, 4
    try:
        with _client(base_url) as client:
            assert [w.agreement_id for w in client.iter_workers()] == list(range(1, 36))
            assert [p.id for p in client.iter_payments()] == list(range(1, 36))
    finally:
        fake.max_size = 200


def test_a_page_that_keeps_failing_fails_the_whole_read(service: tuple[PagedService, str]) -> None:
    fake, base_url = service
    fake.count, fake.failing_pages = 95, {4}
    fake.requests.clear()
    try:
        with _client(base_url) as client, pytest.raises(ServerError) as caught:
            client.list_workers()
    finally:
        fake.failing_pages = set()
    assert caught.value.status == 503
    assert "a non-JSON answer (text/plain): upstream unavailable" in str(caught.value)
    asked = [page for path, page in fake.requests if path == "/contract/workers/list"]
    assert asked.count(4 + fake.one_indexed) == FAST_RETRY.attempts


def test_a_later_read_asks_each_page_once_from_the_services_first_page(
    service: tuple[PagedService, str],
) -> None:
    fake, base_url = service
    fake.count = 35
    with _client(base_url) as client:
        assert len(client.list_workers()) == 35
        fake.requests.clear()
        assert [w.agreement_id for w in client.iter_workers()] == list(range(1, 36))
        assert [p.id for p in client.iter_payments()] == list(range(1, 36))
        assert [e.journal_id for e in client.iter_transactions()] == list(range(1, 36))
    first = 1 if fake.one_indexed else 0
    for path in READS.values():
        asked = [page for asked_path, page in fake.requests if asked_path == path[0]]
        assert sorted(asked) == list(range(first, first + 4)), (path[0], asked)
