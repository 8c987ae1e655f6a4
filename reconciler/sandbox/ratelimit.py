"""Failed logins per email: five within 60 s, and logins for that email wait (429)."""

from __future__ import annotations

import math
import threading
import time
from collections import defaultdict, deque

MAX_FAILURES = 5
FAILURE_WINDOW_S = 60.0


class FailedLogins:
    """Failed logins per email (case ignored), for the 429 after five within 60 s."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: dict[str, deque[float]] = defaultdict(deque)

    def retry_after(self, email: str) -> int | None:
        """Seconds until a login for `email` is taken again, or None when it is now."""
        with self._lock:
            failures = self._recent(email)
            if len(failures) < MAX_FAILURES:
                return None
            return max(1, math.ceil(failures[0] + FAILURE_WINDOW_S - time.monotonic()))

    def failed(self, email: str) -> None:
        with self._lock:
            self._recent(email).append(time.monotonic())

    def _recent(self, email: str) -> deque[float]:
        failures = self._failures[email.casefold()]
        while failures and failures[0] <= time.monotonic() - FAILURE_WINDOW_S:
            failures.popleft()
        return failures
