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
    generation: int = 0  # the log's, when the request came: a reset since makes it foreign


class RequestLog:
    """Completed service requests, in completion order, numbered from 1."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: deque[RequestRecord] = deque(maxlen=MAX_ENTRIES)
        self._seq = 0
        self.generation = 0  # how many resets: a request that came before one is not logged

    def append(self, record: RequestRecord) -> None:
        with self._lock:
            if record.generation != self.generation:
                return  # it came before a reset, and ended after it: not this log's
            self._seq += 1
            record.seq = self._seq
            self._entries.append(record)

    def since(self, seq: int) -> list[dict[str, object]]:
        """Every entry numbered above `seq`, oldest first."""
        with self._lock:
            return [asdict(entry) for entry in self._entries if entry.seq > seq]

    def clear(self) -> None:
        """Forget the entries, and every request still under way; numbering goes on, so an
        old `since` still means what it did."""
        with self._lock:
            self._entries.clear()
            self.generation += 1
