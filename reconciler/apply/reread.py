"""What the executor reads back when a write's outcome is unclear: whether a failed request
may still have taken effect, and one re-read of the workers shared by every thread that asks.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from reconciler.apply.converge import LiveAgreements
from reconciler.service.errors import AmbiguousOutcome, ServerError, ServiceError, TransportFailure
from reconciler.service.models import Worker

#: How many times a re-read after an ambiguous outcome is tried (each with the client's retries).
REREAD_ATTEMPTS = 3


class SharedReread:
    """Re-reads of the workers, shared between threads.

    A thread that needs to know what landed after its request failed at time T may use any
    read that started after T; so when several batches come back ambiguous together, one read
    answers them all instead of one read each.
    """

    def __init__(self, read: Callable[[], list[Worker]]) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._latest: tuple[float, LiveAgreements] | None = None

    def after(self, moment: float) -> LiveAgreements:
        """The agreements as read by a read that started after `moment` (monotonic time)."""
        with self._lock:
            if self._latest is not None and self._latest[0] > moment:
                return self._latest[1]
            error: ServiceError | None = None
            for _ in range(REREAD_ATTEMPTS):
                started = time.monotonic()
                try:
                    agreements = LiveAgreements.of(self._read())
                except ServiceError as failure:
                    error = failure
                    continue
                self._latest = (started, agreements)
                return agreements
            assert error is not None
            raise error


def may_have_landed(error: ServiceError) -> bool:
    """Whether a request that failed so may still have taken effect."""
    if isinstance(error, AmbiguousOutcome | ServerError):
        return True
    return isinstance(error, TransportFailure) and not error.surely_not_sent
