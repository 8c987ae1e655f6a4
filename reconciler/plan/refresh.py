"""The refresh: read the live account (every agreement in every status, and the webhook).

The reader is passed in (the read-only `ServiceClient` in the CLI), so this module speaks no
HTTP itself; `on_progress` lets the edge draw a progress bar without the core knowing of one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Protocol, runtime_checkable

from reconciler.plan.model import LiveState
from reconciler.plan.payruns import LivePaylist
from reconciler.service.models import Paylist, PaylistSummary, Payment, Wallet, Webhook, Worker

#: How many agreements pass between two progress reports.
PROGRESS_EVERY = 1000


class LiveReader(Protocol):
    """What the refresh needs of a service client."""

    def iter_workers(self) -> Iterator[Worker]: ...

    def get_webhook(self) -> Webhook | None: ...


@runtime_checkable
class PayrunReader(LiveReader, Protocol):
    """And for payruns: the paylists (by id, for their keys), their payments, the wallet."""

    def iter_paylists(self) -> Iterator[PaylistSummary]: ...

    def get_paylist(self, paylist_id: int) -> Paylist: ...

    def list_paylist_payments(self, paylist_id: int) -> list[Payment]: ...

    def get_wallet(self) -> Wallet: ...


def refresh(
    reader: LiveReader,
    on_progress: Callable[[int], None] | None = None,
    *,
    payruns: bool = False,
) -> LiveState:
    """Every agreement (all statuses, INACTIVATED included) and the webhook, None when absent;
    with `payruns`, also every paylist with its key and payments, and the wallet."""
    live = _workers_and_webhook(reader, on_progress)
    return refresh_payruns(reader, live) if payruns else live


def refresh_payruns(reader: LiveReader, live: LiveState) -> LiveState:
    """`live` with every paylist (its key and payments) and the wallet: the part of the refresh
    that only a file with payruns needs, so it can follow a refresh of the workers."""
    if not isinstance(reader, PayrunReader):
        raise TypeError("reading payruns needs a reader of paylists and the wallet")
    paying = reader
    paylists = tuple(
        LivePaylist(
            paylist_id=summary.paylist_id,
            idempotence_key=(header := paying.get_paylist(summary.paylist_id)).idempotence_key,
            description=header.description,
            payments=tuple(paying.list_paylist_payments(summary.paylist_id)),
        )
        for summary in paying.iter_paylists()
    )
    return replace(live, paylists=paylists, wallet=paying.get_wallet())


def _workers_and_webhook(
    reader: LiveReader, on_progress: Callable[[int], None] | None
) -> LiveState:
    workers: list[Worker] = []
    for worker in reader.iter_workers():
        workers.append(worker)
        if on_progress is not None and len(workers) % PROGRESS_EVERY == 0:
            on_progress(len(workers))
    if on_progress is not None:
        on_progress(len(workers))
    # After the workers: a reader that fetched the webhook meanwhile answers it at once.
    return LiveState(workers=tuple(workers), webhook=reader.get_webhook())
