"""Re-reads after ambiguous outcomes are shared between threads, but never stale."""

from __future__ import annotations

import time

import pytest

from reconciler.apply.reread import REREAD_ATTEMPTS, SharedReread
from reconciler.service.errors import ServerError
from reconciler.service.models import Worker
from tests.plan.factories import agreement


class Reader:
    """Counts reads; fails the first `failures` of them."""

    def __init__(self, failures: int = 0) -> None:
        self.reads = 0
        self.failures = failures

    def __call__(self) -> list[Worker]:
        self.reads += 1
        if self.reads <= self.failures:
            raise ServerError("503 Service Unavailable", status=503)
        return [agreement(self.reads, f"ENG-{self.reads:03d}", "INVITATION_SENT")]


def test_a_failure_seen_before_a_read_started_shares_that_read() -> None:
    reader = Reader()
    reread = SharedReread(reader)
    failed_at = time.monotonic()
    first = reread.after(failed_at)
    assert reread.after(failed_at) is first
    assert reader.reads == 1


def test_a_failure_seen_after_the_last_read_started_gets_a_new_read() -> None:
    reader = Reader()
    reread = SharedReread(reader)
    reread.after(time.monotonic())
    later = reread.after(time.monotonic())
    assert reader.reads == 2
    assert "ENG-002" in later.by_external_id


@pytest.mark.parametrize(
    ("failures", "reads", "raises"),
    [
        (0, 1, False),
        (REREAD_ATTEMPTS - 1, REREAD_ATTEMPTS, False),
        (REREAD_ATTEMPTS, REREAD_ATTEMPTS, True),
    ],
)
def test_a_failed_read_is_tried_again_then_reported(
    failures: int, reads: int, raises: bool
) -> None:
    reader = Reader(failures)
    reread = SharedReread(reader)
    if raises:
        with pytest.raises(ServerError):
            reread.after(time.monotonic())
    else:
        reread.after(time.monotonic())
    assert reader.reads == reads
