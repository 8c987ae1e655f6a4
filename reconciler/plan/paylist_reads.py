"""The money half of the refresh: paylists with their keys and payments, the wallet, top-ups.

Read the cheapest way the API allows, and concurrently: the paylists listing (paged) names the
paylists; each one's key is only on the paylist by id, so those reads run `parallelism` at a
time; every payment comes from the one paged payments listing, which carries `paylist_id`,
instead of a listing per paylist. The wallet and the journal's top-ups are read meanwhile.

What is read: every paylist when the files have payruns (a payrun's paylist may be of any age,
and a payment paid before in any paylist is a duplicate), else only the money window's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from reconciler.plan.money import LiveMoney, MoneyWindow, WindowPaylist
from reconciler.plan.payruns import LivePaylist
from reconciler.service.models import JournalEntry, Paylist, PaylistSummary, Payment, Wallet


@runtime_checkable
class PaylistReader(Protocol):
    """What reading the money needs of a service client."""

    def iter_paylists(
        self, since: datetime | None = None, until: datetime | None = None
    ) -> Iterator[PaylistSummary]: ...

    def get_paylist(self, paylist_id: int) -> Paylist: ...

    def iter_payments(
        self, since: datetime | None = None, until: datetime | None = None
    ) -> Iterator[Payment]: ...

    def get_wallet(self) -> Wallet: ...

    def iter_transactions_since(self, since: datetime) -> Iterator[JournalEntry]: ...


@dataclass(frozen=True, slots=True)
class MoneyRead:
    """The paylists for the payrun decisions (all of them, or none), the wallet, the report's
    reads (None without a window)."""

    paylists: tuple[LivePaylist, ...]
    wallet: Wallet
    money: LiveMoney | None


def read_money(
    reader: PaylistReader, *, payruns: bool, window: MoneyWindow | None, parallelism: int
) -> MoneyRead:
    """Read what the payruns (every paylist) and the money window (its paylists) need."""
    read_at = datetime.now(UTC)
    since = None if payruns or window is None else window.since
    with ThreadPoolExecutor(max_workers=parallelism, thread_name_prefix="money-read") as pool:
        wallet = pool.submit(reader.get_wallet)
        top_ups: Future[list[JournalEntry]] | None = None
        if window is not None:
            top_ups = pool.submit(_top_ups, reader, window.since)
        # The payments are listed once the paylists are: a paylist just made is then never
        # listed without its payments.
        summaries = list(reader.iter_paylists(since))
        payments = pool.submit(lambda: list(reader.iter_payments(since)))
        headers = list(pool.map(reader.get_paylist, [s.paylist_id for s in summaries]))
        by_paylist: dict[int, list[Payment]] = defaultdict(list)
        for payment in payments.result():
            by_paylist[payment.paylist_id].append(payment)
        paylists = tuple(
            LivePaylist(
                paylist_id=summary.paylist_id,
                idempotence_key=header.idempotence_key,
                description=header.description,
                payments=tuple(by_paylist.get(summary.paylist_id, ())),
            )
            for summary, header in zip(summaries, headers, strict=True)
        )
        money = None
        if window is not None and top_ups is not None:
            money = LiveMoney(
                window=window,
                read_at=read_at,
                paylists=tuple(
                    WindowPaylist(
                        paylist_id=summary.paylist_id,
                        idempotence_key=header.idempotence_key,
                        description=header.description,
                        total=summary.total,
                        created_at=header.created_at,
                    )
                    for summary, header in zip(summaries, headers, strict=True)
                ),
                payments=tuple(p for live in paylists for p in live.payments),
                top_ups=tuple(top_ups.result()),
                wallet=wallet.result(),
            )
        return MoneyRead(paylists if payruns else (), wallet.result(), money)


def _top_ups(reader: PaylistReader, since: datetime) -> list[JournalEntry]:
    return [
        entry
        for entry in reader.iter_transactions_since(since)
        if str(entry.operation) == "DEPOSIT" and str(entry.reason) == "TOP_UP"
    ]
