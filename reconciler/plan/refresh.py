"""The refresh: read the live account (every agreement in every status, and the webhook).

The reader is passed in (the read-only `ServiceClient` in the CLI), so this module speaks no
HTTP itself; `on_progress` lets the edge draw a progress bar without the core knowing of one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Protocol

from reconciler.plan.agreements import AgreementIndex
from reconciler.plan.model import LiveState
from reconciler.plan.money import MoneyWindow
from reconciler.plan.paylist_reads import MoneyReading, PaylistReader
from reconciler.service.models import Webhook, Worker

#: How many agreements pass between two progress reports.
PROGRESS_EVERY = 1000


class LiveReader(Protocol):
    """What the refresh needs of a service client."""

    def iter_workers(self) -> Iterator[Worker]: ...

    def get_webhook(self) -> Webhook | None: ...


def refresh(
    reader: LiveReader,
    on_progress: Callable[[int], None] | None = None,
    *,
    payruns: bool = False,
    money: MoneyWindow | None = None,
    parallelism: int = 8,
    index: AgreementIndex | None = None,
) -> LiveState:
    """Every agreement (all statuses, INACTIVATED included) and the webhook, None when absent;
    with `payruns`, also every paylist with its key and payments, and the wallet; with a
    `money` window, what the money report needs of it (`paylist_reads`). The agreements are
    added to `index` (a new one if None) as they are read. The money is read while the workers
    are; an error of the workers' read is the one raised first."""
    reading = start_money(reader, payruns=payruns, money=money, parallelism=parallelism)
    try:
        live = _workers_and_webhook(
            reader, on_progress, AgreementIndex() if index is None else index
        )
    except BaseException:
        if reading is not None:
            reading.stop()
        raise
    return with_money(live, reading)


def start_money(
    reader: object, *, payruns: bool, money: MoneyWindow | None, parallelism: int
) -> MoneyReading | None:
    """The money reads the file decides, started now (None: nothing of the money to read)."""
    if not payruns and money is None:
        return None
    if not isinstance(reader, PaylistReader):
        raise TypeError("reading payruns needs a reader of paylists and the wallet")
    return MoneyReading(reader, payruns=payruns, window=money, parallelism=parallelism)


def with_money(live: LiveState, reading: MoneyReading | None) -> LiveState:
    """`live` with what `reading` read (waiting for it), or as it is without one."""
    if reading is None:
        return live
    read = reading.result()
    return replace(live, paylists=read.paylists, wallet=read.wallet, money=read.money)


def _workers_and_webhook(
    reader: LiveReader, on_progress: Callable[[int], None] | None, index: AgreementIndex
) -> LiveState:
    add, workers = index.add, index.agreements
    for worker in reader.iter_workers():
        add(worker)
        if on_progress is not None and len(workers) % PROGRESS_EVERY == 0:
            on_progress(len(workers))
    if on_progress is not None:
        on_progress(len(workers))
    # After the workers: a reader that fetched the webhook meanwhile answers it at once.
    return LiveState(workers=index.freeze(), webhook=reader.get_webhook(), index=index)
