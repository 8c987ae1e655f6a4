"""The refresh: read the live account (every agreement in every status, and the webhook).

The reader is passed in (the read-only `ServiceClient` in the CLI), so this module speaks no
HTTP itself; `on_progress` lets the edge draw a progress bar without the core knowing of one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol

from reconciler.plan.model import LiveState
from reconciler.service.models import Webhook, Worker

#: How many agreements pass between two progress reports.
PROGRESS_EVERY = 1000


class LiveReader(Protocol):
    """What the refresh needs of a service client."""

    def iter_workers(self) -> Iterator[Worker]: ...

    def get_webhook(self) -> Webhook | None: ...


def refresh(reader: LiveReader, on_progress: Callable[[int], None] | None = None) -> LiveState:
    """Every agreement (all statuses, INACTIVATED included) and the webhook, None when absent."""
    webhook = reader.get_webhook()
    workers: list[Worker] = []
    for worker in reader.iter_workers():
        workers.append(worker)
        if on_progress is not None and len(workers) % PROGRESS_EVERY == 0:
            on_progress(len(workers))
    if on_progress is not None:
        on_progress(len(workers))
    return LiveState(workers=tuple(workers), webhook=webhook)
