"""The log of service requests (not `/_sandbox/`), so tests can assert what was sent."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import asdict, dataclass

#: Enough for any test or demo; the oldest entries go first past it.
MAX_ENTRIES = 100_000


@dataclass(slots=True)
class RequestRecord:
    """One service request; `seq` is given when it completes, so `since` never skips one."""

    at: str
    method: str
    path: str
    query: str
    seq: int = 0
    status: int | None = None
    client_id: int | None = None
    dropped: bool = False


class RequestLog:
    """Completed service requests, in completion order, numbered from 1."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: deque[RequestRecord] = deque(maxlen=MAX_ENTRIES)
        self._seq = 0

    def append(self, record: RequestRecord) -> None:
        with self._lock:
            self._seq += 1
            record.seq = self._seq
            self._entries.append(record)

    def since(self, seq: int) -> list[dict[str, object]]:
        """Every entry numbered above `seq`, oldest first."""
        with self._lock:
            return [asdict(entry) for entry in self._entries if entry.seq > seq]

    def clear(self) -> None:
        """Forget the entries; numbering goes on, so an old `since` still means what it did."""
        with self._lock:
            self._entries.clear()
