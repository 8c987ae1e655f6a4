"""The money half of the refresh: paylists with their keys and payments, the wallet, top-ups.

Read the cheapest way the API allows, and all at once: the paylists listing (paged) names the
paylists, and each one's key (only on the paylist by id) is asked as soon as the listing's page
naming it has come; every payment comes from the one paged payments listing, which carries
`paylist_id`, instead of a listing per paylist; the wallet and, for `drift`'s money summary, the
journal's top-ups are read meanwhile. No read waits for another it does not need: they start
together (`MoneyReading`), and the client's connections bound what is on the wire.

The two listings are read side by side, so a paylist made meanwhile may be listed without the
payments the payments listing had already passed: a listed paylist whose payments do not add up
to its listed total has them read from the paylist itself, so no paylist is ever priced short.

What is read: every paylist when the files have payruns (a payrun's paylist may be of any age,
and a payment paid before in any paylist is a duplicate), else only the money window's: then the
listings are by creation date, so when the journal (read for `drift`) names a payment paid in
the window that they did not hold, the payments listing is read whole once, and that payment's
paylist by id (`_moved_earlier`): its money moved in the window.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Protocol, runtime_checkable

from reconciler import threads
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

    def iter_paylist_payments(self, paylist_id: int) -> Iterator[Payment]: ...

    def iter_payments(
        self, since: datetime | None = None, until: datetime | None = None
    ) -> Iterator[Payment]: ...

    def get_wallet(self) -> Wallet: ...

    def iter_transactions_since(self, since: datetime) -> Iterator[JournalEntry]: ...

    def abandon(self) -> None:
        """Send nothing more: what is not sent yet, or waits to be retried, fails at once."""


@dataclass(frozen=True, slots=True)
class MoneyRead:
    """The paylists for the payrun decisions (all of them, or none), the wallet (None when not
    asked for: the register's reads), the report's reads (None without a window)."""

    paylists: tuple[LivePaylist, ...]
    wallet: Wallet | None
    money: LiveMoney | None


#: The reads that hold a thread of their own while their pages come (the client's page
#: fetchers read them): the two listings, the journal, the wallet.
_HELD = 4


class MoneyReading:
    """The money reads, started together when made; `result()` waits for them."""

    def __init__(
        self,
        reader: PaylistReader,
        *,
        payruns: bool,
        window: MoneyWindow | None,
        parallelism: int,
        wallet: bool = True,
    ) -> None:
        self._reader = reader
        self._payruns = payruns
        self._window = window
        self._read_at = datetime.now(UTC)
        since = None if payruns or window is None else window.since
        # The keys by id get `parallelism` threads beside the reads that hold one.
        self._pool = threads.Pool(max_workers=parallelism + _HELD, thread_name_prefix="money-read")
        submit = self._pool.submit
        self._paylists = submit(self._list_paylists, since)
        self._payments = submit(lambda: list(reader.iter_payments(since)))
        self._wallet = submit(reader.get_wallet) if wallet else None
        self._top_ups: Future[list[JournalEntry]] | None = None
        if window is not None and window.top_ups:
            self._top_ups = submit(_top_ups, reader, window.since)

    def _list_paylists(
        self, since: datetime | None
    ) -> list[tuple[PaylistSummary, Future[Paylist]]]:
        """The listing, each paylist's read by id asked as soon as its page has come."""
        return [
            (summary, self._pool.submit(self._reader.get_paylist, summary.paylist_id))
            for summary in self._reader.iter_paylists(since)
        ]

    def add_window(self, window: MoneyWindow | None) -> None:
        """The money report's window, for reads started for payruns before the file was known
        (they read every paylist whatever the window): the journal's top-ups are read now."""
        assert self._payruns and self._window is None, "only reads of every paylist"
        self._window = window
        if window is not None and window.top_ups:
            self._top_ups = self._pool.submit(_top_ups, self._reader, window.since)

    def close(self) -> None:
        """Ask nothing more, and wait for what is under way (read, or failed)."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def stop(self) -> None:
        """The money is not needed any more (the workers' refresh failed): the reader sends
        nothing more, so no read under way waits out its retries, and they are waited for."""
        self._reader.abandon()
        self.close()

    def result(self) -> MoneyRead:
        """What was read. An error is raised in the order the reads were once made one after
        another: the paylists listing, their keys, the payments, the journal, the wallet."""
        try:
            listed = self._paylists.result()
            headers = [header.result() for _, header in listed]
            summaries = [summary for summary, _ in listed]
            paylists = self._live_paylists(summaries, headers, self._payments.result())
            journal = None if self._top_ups is None else self._top_ups.result()
            wallet = None if self._wallet is None else self._wallet.result()
            paid_in_window = _paid_in(journal or [])
            if not self._payruns:  # only the window's paylists were listed
                summaries, headers, paylists = self._moved_earlier(
                    summaries, headers, paylists, paid_in_window
                )
        finally:
            self.close()
        top_ups = None if journal is None else [e for e in journal if _is_top_up(e)]
        money = None
        if self._window is not None:
            money = LiveMoney(
                window=self._window,
                read_at=self._read_at,
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
                top_ups=None if top_ups is None else tuple(top_ups),
                wallet=wallet,
                paid_in_window=frozenset(paid_in_window),
            )
        return MoneyRead(paylists if self._payruns else (), wallet, money)

    def _moved_earlier(
        self,
        summaries: list[PaylistSummary],
        headers: list[Paylist],
        paylists: tuple[LivePaylist, ...],
        paid_in_window: set[str],
    ) -> tuple[list[PaylistSummary], list[Paylist], tuple[LivePaylist, ...]]:
        """The window's paylists, and those made before it whose payments the journal shows
        paid within it (the listings are by creation date): read only when there are any."""
        known = {str(p.id) for live in paylists for p in live.payments}
        if not paid_in_window - known:
            return summaries, headers, paylists
        listed = {summary.paylist_id for summary in summaries}
        earlier: dict[int, list[Payment]] = defaultdict(list)
        for payment in self._reader.iter_payments():
            earlier[payment.paylist_id].append(payment)
        moved = [
            paylist_id
            for paylist_id, payments in earlier.items()
            if paylist_id not in listed and any(str(p.id) in paid_in_window for p in payments)
        ]
        more_headers = [self._reader.get_paylist(paylist_id) for paylist_id in moved]
        more = [
            PaylistSummary(
                paylist_id=header.id,
                flow_stage="",
                description=header.description,
                total=sum((p.amount for p in earlier[header.id]), Decimal(0)),
            )
            for header in more_headers
        ]
        extra = tuple(
            LivePaylist(h.id, h.idempotence_key, h.description, tuple(earlier[h.id]))
            for h in more_headers
        )
        return summaries + more, headers + more_headers, paylists + extra

    def _live_paylists(
        self, summaries: list[PaylistSummary], headers: list[Paylist], payments: list[Payment]
    ) -> tuple[LivePaylist, ...]:
        by_paylist: dict[int, list[Payment]] = defaultdict(list)
        for payment in payments:
            by_paylist[payment.paylist_id].append(payment)
        paylists = []
        for summary, header in zip(summaries, headers, strict=True):
            own = by_paylist.get(summary.paylist_id, [])
            if sum((p.amount for p in own), Decimal(0)) != summary.total:
                # Made while the payments were listed: its own listing has them all.
                own = list(self._reader.iter_paylist_payments(summary.paylist_id))
            paylists.append(
                LivePaylist(
                    paylist_id=summary.paylist_id,
                    idempotence_key=header.idempotence_key,
                    description=header.description,
                    payments=tuple(own),
                )
            )
        return tuple(paylists)


def _top_ups(reader: PaylistReader, since: datetime) -> list[JournalEntry]:
    """The journal since the window's start: its top-ups, and the payments paid in it."""
    return list(reader.iter_transactions_since(since))


def _is_top_up(entry: JournalEntry) -> bool:
    return str(entry.operation) == "DEPOSIT" and str(entry.reason) == "TOP_UP"


def _paid_in(journal: list[JournalEntry]) -> set[str]:
    """The payments (by id) the journal shows paid: its PAYMENT withdrawals."""
    return {
        entry.payment_order_id
        for entry in journal
        if str(entry.reason) == "PAYMENT" and entry.payment_order_id is not None
    }
