"""How hard the client tries again (`RetryPolicy`, which the settings hold), what a retry
tells the person waiting, which connection failures are not worth one, and how long a caller
that sends again itself (an invitation, after its re-read) waits first.

Parallel requests to a service that cannot be reached all fail the same way at the same time:
their retries are announced once per attempt, not once per request. A connection refused by
this machine (a loopback address) is not transient the way a remote 503 is: nothing listens
on that port, so it is reported at once rather than retried for seconds.
"""

from __future__ import annotations

import email.utils
import errno
import ipaddress
import random
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

import stamina

from reconciler import logs

_log = logs.get_logger("reconciler.service")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How hard to try again after a transient failure (429, 5xx, connection trouble).

    Backoff is exponential from `wait_initial` up to `wait_max`, plus up to `wait_jitter` of
    random jitter; a Retry-After from the service replaces the computed wait. A request gives up
    after `attempts` tries or once `total_seconds` have passed, whichever comes first.
    """

    attempts: int = 6
    total_seconds: float = 60.0
    wait_initial: float = 0.25
    wait_max: float = 10.0
    wait_jitter: float = 0.5


#: How long an announced retry stays announced: the same failure at the same attempt within
#: this many seconds (another request, in parallel) is not announced again.
_SAME_RETRY_SECONDS = 30.0

#: What every failure to connect says to do.
CONNECT_HINT = (
    "is the service running at that address, and is the address right? Set it with "
    "--base-url or RECONCILER_BASE_URL (or try the embedded sandbox: --sandbox)"
)


def announce_retries(attempts: int) -> None:
    """One readable event per retry (what failed, why, attempt n of m, when), instead of
    stamina's raw `retry_scheduled` line; above the progress bar on a terminal, a JSON line
    in CI, like every log event. The same failure at the same attempt, from requests sent in
    parallel, is announced once (once per account: the key holds the log's context)."""
    lock = threading.Lock()
    announced: dict[tuple[int, str, tuple[tuple[str, str], ...]], float] = {}

    def announce(details: stamina.instrumentation.RetryDetails) -> None:
        what = str(details.caused_by).splitlines()[0] if str(details.caused_by) else ""
        what = what or type(details.caused_by).__name__
        attempt = details.retry_num + 1
        now = time.monotonic()
        with lock:
            for key in [k for k, at in announced.items() if now - at > _SAME_RETRY_SECONDS]:
                del announced[key]
            key = (attempt, what, logs.context())
            if key in announced:
                return
            announced[key] = now
        _log.warning(
            f"retrying in {details.wait_for:.1f} s (attempt {attempt} of {attempts}): {what}",
            attempt=attempt,
            attempts=attempts,
            wait_s=round(details.wait_for, 2),
        )

    stamina.instrumentation.set_on_retry_hooks([announce])


def retry_after_seconds(value: str | None) -> float | None:
    """A `Retry-After` header in seconds, from a number or an HTTP date (a negative number or
    a date past: 0); None when there is none, or it is neither."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if seconds == seconds else None  # NaN: no number
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def resend_wait(policy: RetryPolicy, retry: int, asked: float | None) -> float:
    """How long to wait before sending again for the `retry`-th time (1: the first): at least
    what the service asked for (`Retry-After`), else exponential from the policy's first wait
    up to its longest; plus up to the policy's jitter, so parallel senders do not return at
    once. The same waits as the client's own retries."""
    computed = min(policy.wait_max, policy.wait_initial * 2 ** max(0, retry - 1))
    return (computed if asked is None else asked) + random.uniform(0, policy.wait_jitter)


def wait_to_resend(
    stop: threading.Event,
    policy: RetryPolicy,
    retry: int,
    asked: float | None,
    *,
    failed_at: float,
    deadline: float,
) -> bool:
    """Wait `resend_wait` from the failure (`failed_at`, monotonic) before sending again, or
    until `stop` is set; False, without waiting, when the wait would end after `deadline`."""
    until = failed_at + resend_wait(policy, retry, asked)
    if until > deadline:
        return False
    stop.wait(max(0.0, until - time.monotonic()))
    return True


def is_loopback(url: str) -> bool:
    """Whether `url`'s host is this machine (127.0.0.0/8, ::1 or localhost)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def refused(error: BaseException) -> bool:
    """Whether a connection error is a refusal (nothing listens), under httpx's wrapping."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, ConnectionRefusedError) or (
            isinstance(current, OSError) and current.errno == errno.ECONNREFUSED
        ):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return "connection refused" in str(error).lower()
