"""The service's timestamp formats, from one clock of integer nanoseconds since the epoch."""

from __future__ import annotations

import time
from datetime import UTC, datetime

_NS_PER_S = 1_000_000_000


def now_ns() -> int:
    """The current time in nanoseconds since the epoch (UTC)."""
    return time.time_ns()


def _split(ns: int) -> tuple[str, int]:
    seconds, fraction = divmod(ns, _NS_PER_S)
    whole = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return whole, fraction


def iso_ms_offset(ns: int) -> str:
    """`2025-03-14T09:26:53.589+00:00`: the worker list's workerCreationDate."""
    whole, fraction = _split(ns)
    return f"{whole}.{fraction // 1_000_000:03d}+00:00"


def iso_us(ns: int) -> str:
    """`2025-03-14T09:26:53.589793Z`: webhook, payment, wallet and journal timestamps."""
    whole, fraction = _split(ns)
    return f"{whole}.{fraction // 1_000:06d}Z"


def iso_ns(ns: int) -> str:
    """`2025-03-14T09:26:53.589793238Z`: a paylist's creation_date."""
    whole, fraction = _split(ns)
    return f"{whole}.{fraction:09d}Z"
