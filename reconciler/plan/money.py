"""Money drift: every paylist of the window traced to a payrun of the files, or reported.

Pure: the paylist keys the files' payruns derive, the paylists and payments read for the window,
the journal's top-ups, the wallet and the time of the read in; a `MoneyReport` out. The rules:

| live | report |
| --- | --- |
| a paylist whose money moved in the window, its key derived by no payrun | untraced |
| a paylist under a payrun's key, other content than that payrun's | untraced (a claim, not proof) |
| a paylist of `history.paylists` (by id) with the total written there | known history: nothing |
| a payment FAILED (a payrun's or an untraced paylist's), not paid again since | failed |
| a payrun's payment PENDING for longer than the threshold | stuck |

A paylist is of the window when its money moved in it: the paylist or one of its payments was
made or settled in it (the payments' dates), or the journal shows one of its payments paid in
it; a paylist made 36 days ago and settled today is in a 35-day window. A paylist's key is
public (anyone may send it): only a paylist whose content equals its payrun's
(`traced_paylists`) is paid through payruns. A FAILED payment stays reported until a payrun of
the files pays that same payment, as `reconciler.identity` compares payments: a later SUCCESS
of the same payee and amount under another description is another payment, and settles nothing.

Each payment that needs action says what to do. Nothing reported is ever touched.
Untraced, failed and stuck money is what `drift --strict` exits 2 for.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from reconciler.identity import payment_key
from reconciler.money import grouped
from reconciler.plan.payruns import LivePaylist
from reconciler.plan.register import FAILED, PAID, PENDING, bucket, month_of, moved_at
from reconciler.service.models import JournalEntry, Payment, Wallet
from reconciler.words import plural

#: A month of payroll and a few days of slack: last month's run is still inside the window.
DEFAULT_WINDOW = timedelta(days=35)
#: The sandbox settles in a second and the service within hours; a day PENDING is stuck.
DEFAULT_STUCK_AFTER = timedelta(hours=24)

_ZERO = Decimal("0.00")

#: What to do about a FAILED payment, by its cause.
_FAILED_ACTIONS = {
    "INSUFFICIENT_FUNDS": (
        "top up the wallet, then pay the same payment (payee, amount and description) in a new "
        "payrun"
    ),
    "WALLET_DISABLED": (
        "have the wallet enabled again, then pay the same payment (payee, amount and "
        "description) in a new payrun"
    ),
    "DUPLICATE_PAYMENT": (
        "the same amount, payee and description was paid before: nothing is owed unless it was "
        "meant twice (then pay it in a new payrun with another description)"
    ),
}
_FAILED_OTHERWISE = (
    "fix the cause, then pay the same payment (payee, amount and description) in a new payrun"
)


@dataclass(frozen=True, slots=True)
class MoneyWindow:
    """What money is watched: paylists made since `since`, payments PENDING past `stuck_after`."""

    since: datetime
    stuck_after: timedelta = DEFAULT_STUCK_AFTER
    #: How the window was given, for outputs that must not change from day to day
    #: ("the last 35 days"); None: a fixed date, shown as such.
    relative: str | None = None
    #: Whether the journal's top-ups are read: `drift`'s money summary has them; a plan shows
    #: the money as counts (untraced, failed, stuck) and reads no journal.
    top_ups: bool = True


@dataclass(frozen=True, slots=True)
class WindowPaylist:
    """A paylist made within the window, as the listing and the paylist by id show it."""

    paylist_id: int
    idempotence_key: str
    description: str
    total: Decimal
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class LiveMoney:
    """What was read for the money report (`payments`: at least the window's; `top_ups`:
    None when the journal was not read)."""

    window: MoneyWindow
    read_at: datetime
    paylists: tuple[WindowPaylist, ...] = ()
    payments: tuple[Payment, ...] = ()
    top_ups: tuple[JournalEntry, ...] | None = ()
    wallet: Wallet | None = None
    #: The payments (by id, as the journal's payment_order_id names them) the journal shows
    #: paid within the window: their paylists moved money in it, whenever they were made.
    paid_in_window: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Untraced:
    """A paylist no payrun of the files accounts for."""

    paylist_id: int
    created_at: datetime | None
    description: str
    payments: int
    total: Decimal


@dataclass(frozen=True, slots=True)
class PaymentAlert:
    """A payment of a files' payrun that needs someone: FAILED, or PENDING too long."""

    payment_id: int
    paylist_id: int
    email: str
    amount: Decimal
    status: str
    cause: str | None
    created_at: datetime | None
    action: str


@dataclass(frozen=True, slots=True)
class Figure:
    """One row of the money summary: how many, and how much."""

    count: int = 0
    total: Decimal = _ZERO


@dataclass(frozen=True, slots=True)
class MonthMoney:
    """What moved in one month of the window, every paylist of it (traced or not): each
    payment in the month its money moved (`reconciler.plan.register.moved_at`), as the payroll
    register counts it."""

    month: str
    paid: Decimal = _ZERO
    failed: Decimal = _ZERO
    pending: Decimal = _ZERO


@dataclass(frozen=True, slots=True)
class MoneyReport:
    """The money of the window: traced, untraced, needing action, and the wallet."""

    since: datetime
    relative: str | None
    paid: Figure
    untraced: tuple[Untraced, ...]
    failed: tuple[PaymentAlert, ...]
    stuck: tuple[PaymentAlert, ...]
    pending: Figure
    top_ups: Figure | None  # None: the journal was not read (a plan's report)
    balance: Decimal | None
    #: The window's paylists `history.paylists` names with their totals: known, not untraced.
    known: tuple[Untraced, ...] = ()
    #: The window's months, oldest first, for the drift issue's chart (a saved plan keeps none:
    #: only `drift` draws them).
    months: tuple[MonthMoney, ...] = ()

    @property
    def needs_action(self) -> bool:
        """Untraced, failed or stuck money: what `drift --strict` exits 2 for."""
        return bool(self.untraced or self.failed or self.stuck)

    @property
    def untraced_figure(self) -> Figure:
        return _figure(item.total for item in self.untraced)

    @property
    def failed_figure(self) -> Figure:
        return _figure(item.amount for item in self.failed)

    def line(self) -> str:
        """'2 untraced paylists (1,250.00), 1 failed payment (20.00), 0 stuck payments'."""
        untraced, failed = self.untraced_figure, self.failed_figure
        return (
            f"{plural(untraced.count, 'untraced paylist')} ({grouped(untraced.total)}), "
            f"{plural(failed.count, 'failed payment')} ({grouped(failed.total)}), "
            f"{plural(len(self.stuck), 'stuck payment')}"
        )


def money_report(
    live: LiveMoney, traced: Collection[int], known: Mapping[int, Decimal] | None = None
) -> MoneyReport:
    """The report of `live` against `traced`: the ids of the paylists a payrun of the files
    made, with that payrun's content (`reconciler.plan.payruns.traced_paylists`), and `known`:
    the account's history (`history.paylists`, id to total), paylists that are neither untraced
    nor failed while the service shows that total. An untraced paylist counts what moved (its
    payments but the FAILED ones); its FAILED payments are failed money, as a payrun's are."""
    known = known or {}
    since = live.window.since
    by_paylist: dict[int, list[Payment]] = defaultdict(list)
    for payment in live.payments:
        by_paylist[payment.paylist_id].append(payment)

    def moved_in_window(paylist: WindowPaylist) -> bool:
        if paylist.created_at is None or paylist.created_at >= since:
            return True
        return any(
            _at_or_after(payment.created_at, since)
            or _at_or_after(payment.updated_at, since)
            or str(payment.id) in live.paid_in_window
            for payment in by_paylist[paylist.paylist_id]
        )

    in_window = [p for p in live.paylists if moved_in_window(p)]
    traced_ids = {p.paylist_id for p in live.paylists if p.paylist_id in traced}
    theirs_in_window = [p for p in in_window if p.paylist_id not in traced_ids]
    untraced = tuple(
        _untraced(p, by_paylist[p.paylist_id])
        for p in theirs_in_window
        if known.get(p.paylist_id) != p.total
    )
    known_in_window = tuple(
        _untraced(p, by_paylist[p.paylist_id])
        for p in theirs_in_window
        if known.get(p.paylist_id) == p.total
    )
    untraced_ids = {item.paylist_id for item in untraced}
    traced_in_window = [p.paylist_id for p in in_window if p.paylist_id in traced_ids]
    paid = [
        payment.amount
        for paylist_id in traced_in_window
        for payment in by_paylist[paylist_id]
        if str(payment.status) == "SUCCESS"
    ]
    ours = sorted(
        (payment for payment in live.payments if payment.paylist_id in traced_ids),
        key=lambda payment: payment.id,
    )
    pending = [payment for payment in ours if str(payment.status) == "PENDING"]
    # An untraced paylist's failures are failed money too; only a payrun's payment settles a
    # payrun's failure (a paylist made by hand is no payrun's), so each is judged on its own.
    theirs = sorted(
        (payment for payment in live.payments if payment.paylist_id in untraced_ids),
        key=lambda payment: payment.id,
    )
    failed = sorted((*_failed(ours), *_failed(theirs)), key=lambda alert: alert.payment_id)
    stuck_before = live.read_at - live.window.stuck_after
    return MoneyReport(
        since=since,
        relative=live.window.relative,
        paid=Figure(len(traced_in_window), sum(paid, _ZERO)),
        untraced=untraced,
        failed=tuple(failed),
        stuck=tuple(
            _alert(payment, _stuck_action(payment))
            for payment in pending
            if payment.created_at is not None and payment.created_at < stuck_before
        ),
        pending=_figure(payment.amount for payment in pending),
        top_ups=None
        if live.top_ups is None
        else _figure(
            entry.amount
            for entry in live.top_ups
            if entry.created_at is None or entry.created_at >= since
        ),
        balance=None if live.wallet is None else live.wallet.balance,
        known=known_in_window,
        months=_months((payment for p in in_window for payment in by_paylist[p.paylist_id]), since),
    )


def _months(payments: Iterable[Payment], since: datetime) -> tuple[MonthMoney, ...]:
    """Paid, failed and pending by the month the money moved, of the payments that moved in
    the window (or whose time the service did not give: `undated`, last)."""
    sums: dict[str, dict[str, Decimal]] = {}
    for payment in payments:
        moment = moved_at(payment)
        if moment is not None and moment < since:
            continue
        of_month = sums.setdefault(month_of(moment), {PAID: _ZERO, FAILED: _ZERO, PENDING: _ZERO})
        of_month[bucket(str(payment.status))] += payment.amount
    return tuple(
        MonthMoney(month, of[PAID], of[FAILED], of[PENDING]) for month, of in sorted(sums.items())
    )


def known_lines(report: MoneyReport, at_base: Collection[int] | None = None) -> list[str]:
    """A plan's risk lines for the known history that hides money of the window now: a pull
    request adding a paylist to `history.paylists` shows it so, for its reviewers. `at_base`:
    the ids the files held at the pull request's base, which it does not add (None: unknown,
    every known paylist of the window is named)."""
    base = frozenset(at_base or ())
    return [
        f"history.paylists: paylist {item.paylist_id} ({grouped(item.total)}, "
        f"{item.description!r}) is known history, not untraced money: only the account's own "
        "past belongs there"
        for item in report.known
        if item.paylist_id not in base
    ]


def _untraced(paylist: WindowPaylist, payments: Sequence[Payment]) -> Untraced:
    """An untraced paylist, counting what moved: its payments but the FAILED ones (those are
    failed money); the paylist's own total when its payments were not read."""
    moved = [payment.amount for payment in payments if str(payment.status) != "FAILED"]
    total = sum(moved, _ZERO) if payments else paylist.total
    count = len(moved) if payments else 0
    return Untraced(paylist.paylist_id, paylist.created_at, paylist.description, count, total)


def window_paylists(live: LiveMoney) -> list[LivePaylist]:
    """The paylists read for the report, each with its payments (to compare with a payrun)."""
    by_paylist: dict[int, list[Payment]] = defaultdict(list)
    for payment in live.payments:
        by_paylist[payment.paylist_id].append(payment)
    return [
        LivePaylist(p.paylist_id, p.idempotence_key, p.description, tuple(by_paylist[p.paylist_id]))
        for p in live.paylists
    ]


def _at_or_after(moment: datetime | None, since: datetime) -> bool:
    return moment is not None and moment >= since


def _failed(ours: Sequence[Payment]) -> tuple[PaymentAlert, ...]:
    """FAILED payments of the window's paylists (the files' payruns' and the untraced ones)
    that none of them paid since: the same
    payment (`payment_key`: payee, amount and description as people read them) SUCCESS, or in
    flight, in another of their paylists. A SUCCESS of the same payee and amount under another
    description is another payment: it settles nothing."""
    paid = {
        payment_key(payment.worker_email, payment.amount, payment.description)
        for payment in ours
        if str(payment.status) != "FAILED"
    }
    return tuple(
        _alert(payment, _FAILED_ACTIONS.get(payment.cause or "", _FAILED_OTHERWISE))
        for payment in ours
        if str(payment.status) == "FAILED"
        and payment_key(payment.worker_email, payment.amount, payment.description) not in paid
    )


def _stuck_action(payment: Payment) -> str:
    return (
        f"the service has not settled it: ask its support about paylist {payment.paylist_id}, "
        "and do not pay it again while it is PENDING"
    )


def _alert(payment: Payment, action: str) -> PaymentAlert:
    return PaymentAlert(
        payment_id=payment.id,
        paylist_id=payment.paylist_id,
        email=payment.worker_email,
        amount=payment.amount,
        status=str(payment.status),
        cause=payment.cause,
        created_at=payment.created_at,
        action=action,
    )


def _figure(amounts: Iterable[Decimal]) -> Figure:
    values = list(amounts)
    return Figure(len(values), sum(values, _ZERO))
