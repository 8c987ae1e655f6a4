"""The service's timestamp formats, from one clock of integer nanoseconds since the epoch."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache

_NS_PER_S = 1_000_000_000


def now_ns() -> int:
    """The current time in nanoseconds since the epoch (UTC)."""
    return time.time_ns()


def _split(ns: int) -> tuple[str, int]:
    seconds, fraction = divmod(ns, _NS_PER_S)
    return _whole_seconds(seconds), fraction


@lru_cache(maxsize=4096)
def _whole_seconds(seconds: int) -> str:
    # A page of a list shows rows made in a few seconds: each second is formatted once.
    # isoformat, unlike strftime's %Y, writes every year with four digits.
    return datetime.fromtimestamp(seconds, UTC).isoformat()[:19]


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


_ISO = re.compile(
    r"(?P<date>\d{4}-\d\d-\d\d)"
    r"(?:T(?P<time>\d\d:\d\d(?::\d\d)?)(?:\.(?P<fraction>\d{1,9}))?)?"
    r"(?P<offset>Z|z|[+-]\d\d:?\d\d)?"
)


def parse_iso(text: str) -> int:
    """Nanoseconds since the epoch of an ISO 8601 timestamp; ValueError when it is not one.

    Any fraction of 0 to 9 digits, `Z` or a numeric offset; without an offset it is UTC, and a
    date alone is its midnight (UTC).
    """
    match = _ISO.fullmatch(text.strip())
    if match is None:
        raise ValueError("is not an ISO 8601 timestamp (like 2025-03-14T09:26:53.589Z)")
    clock = match["time"] or "00:00"
    offset = match["offset"] or "Z"
    offset = "+00:00" if offset in ("Z", "z") else offset
    whole = datetime.fromisoformat(f"{match['date']}T{clock}{offset}")  # checks the ranges
    fraction = int((match["fraction"] or "0").ljust(9, "0"))
    return int(whole.timestamp()) * _NS_PER_S + fraction


def unix_seconds(ns: int) -> Decimal:
    """`1698708987.544633693`: Unix seconds with the nanosecond fraction, exactly."""
    return Decimal(ns).scaleb(-9)
