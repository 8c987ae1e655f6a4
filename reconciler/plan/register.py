"""The payroll register: what the account asked, paid, failed and still holds pending, by month.

Pure: the account's paylists with their payments (`LivePaylist`), and with the files the units
their payruns ask for (`units_of`), in; a `Register` out. The rules:

| question | answer |
| --- | --- |
| a payment's month | the month (UTC) its money moved: settled, its update time; else its creation |
| paid | SUCCESS |
| failed | FAILED, counted by the service's cause |
| pending | every other status: not settled yet, so it may still be paid |
| requested | all of them: paid + failed + pending |
| a paylist's payrun | the files' payrun whose key and content it holds (`traced_units`) |
| with the files | only the paylists their payruns paid; the others counted, the unpaid named |
| `since` / `until` | months, both included; a payment moved outside them is left out |

A paylist whose payments settled in two months is in both, each with its own payments. A
payrun's period (`periods`, by payrun id) and the record of the merge that paid a paylist
(`merges`, by paylist id: commit, pull request, author, approvers) are shown beside it when
given; without a record the register is the service's side alone (`Register.merges_read`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from operator import attrgetter
from typing import Any, NamedTuple

from reconciler.payee import payee_key
from reconciler.plan.payruns import LivePaylist, Unit, traced_units
from reconciler.service.models import Payment

_ZERO = Decimal("0.00")
_MONTH = re.compile(r"(\d{4})-(0[1-9]|1[0-2])")
#: The month of a payment the service gave no time for: after every dated month.
UNDATED = "undated"
PAID, FAILED, PENDING = "paid", "failed", "pending"


def month_problem(text: str) -> str | None:
    """Why `text` is not a month written YYYY-MM (None: it is one)."""
    if _MONTH.fullmatch(text):
        return None
    return f"{text!r} is not a month: write YYYY-MM, such as 2027-01"


def month_of(moment: datetime | None) -> str:
    """A moment's month, YYYY-MM in UTC (a naive time is taken as UTC)."""
    if moment is None:
        return UNDATED
    if moment.tzinfo is not UTC and moment.utcoffset() is not None:
        moment = moment.astimezone(UTC)
    return f"{moment.year:04d}-{moment.month:02d}"


def bucket(status: str) -> str:
    """Paid (SUCCESS), failed (FAILED) or pending (any other status: not settled)."""
    return PAID if status == "SUCCESS" else FAILED if status == "FAILED" else PENDING


def moved_at(payment: Payment) -> datetime | None:
    """When the payment's money moved: settled, its update time; pending, its creation."""
    if bucket(str(payment.status)) == PENDING:
        return payment.created_at
    return payment.updated_at or payment.created_at


@dataclass(frozen=True, slots=True)
class Sums:
    """What was requested, paid, failed and is pending: counts and amounts."""

    requested: Decimal = _ZERO
    paid: Decimal = _ZERO
    failed: Decimal = _ZERO
    pending: Decimal = _ZERO
    requested_count: int = 0
    paid_count: int = 0
    failed_count: int = 0
    pending_count: int = 0


def combined(sums: Iterable[Sums]) -> Sums:
    """The sums of several rows as one."""
    tally = _Tally()
    for one in sums:
        for kind, amount, count in (
            (PAID, one.paid, one.paid_count),
            (FAILED, one.failed, one.failed_count),
            (PENDING, one.pending, one.pending_count),
        ):
            tally.amounts[kind] += amount
            tally.counts[kind] += count
    return tally.sums()


class _Tally:
    """A running `Sums`, with the failed payments by cause."""

    __slots__ = ("amounts", "causes", "counts")

    def __init__(self) -> None:
        self.amounts = {PAID: _ZERO, FAILED: _ZERO, PENDING: _ZERO}
        self.counts = {PAID: 0, FAILED: 0, PENDING: 0}
        self.causes: dict[str, list[Any]] = {}

    def add(self, kind: str, amount: Decimal, cause: str | None) -> None:
        self.amounts[kind] += amount
        self.counts[kind] += 1
        if kind == FAILED:
            found = self.causes.setdefault(cause or "unknown", [0, _ZERO])
            found[0] += 1
            found[1] += amount

    def sums(self) -> Sums:
        amounts, counts = self.amounts, self.counts
        return Sums(
            requested=amounts[PAID] + amounts[FAILED] + amounts[PENDING],
            paid=amounts[PAID],
            failed=amounts[FAILED],
            pending=amounts[PENDING],
            requested_count=counts[PAID] + counts[FAILED] + counts[PENDING],
            paid_count=counts[PAID],
            failed_count=counts[FAILED],
            pending_count=counts[PENDING],
        )

    def by_cause(self) -> tuple[Cause, ...]:
        """The failed payments by cause, the largest amount first (no cause: `unknown`)."""
        causes = [Cause(cause, count, amount) for cause, (count, amount) in self.causes.items()]
        return tuple(sorted(causes, key=lambda c: (-c.amount, c.cause)))


@dataclass(frozen=True, slots=True)
class MergeRecord:
    """The record of the merge that paid a paylist: what the forge says of it."""

    commit: str
    pull_request: str | None = None
    author: str | None = None
    approvers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Cause:
    """The failed payments of one cause: the service's word for why."""

    cause: str
    count: int
    amount: Decimal


@dataclass(frozen=True, slots=True)
class PaylistRow:
    """One paylist's payments that moved in one month."""

    month: str
    paylist_id: int
    description: str
    sums: Sums
    causes: tuple[Cause, ...] = ()
    payrun_id: str | None = None
    part: int | None = None
    period: str | None = None
    merge: MergeRecord | None = None


@dataclass(frozen=True, slots=True)
class Month:
    month: str
    sums: Sums
    paylists: tuple[PaylistRow, ...]


@dataclass(frozen=True, slots=True)
class PayeeRow:
    """One payee's payments of the register (the payee as the service keys its mailbox)."""

    payee: str
    sums: Sums
    months: int


class PaymentRow(NamedTuple):
    """One payment of the register, with its paylist's payrun, period and merge record (a
    tuple: a year of payroll makes tens of thousands, and a frozen dataclass is slow to make)."""

    month: str
    paylist_id: int
    payment_id: int
    payee: str
    amount: Decimal
    status: str
    cause: str | None
    description: str
    created_at: datetime | None
    updated_at: datetime | None
    payrun_id: str | None = None
    part: int | None = None
    period: str | None = None
    merge: MergeRecord | None = None


@dataclass(frozen=True, slots=True)
class Register:
    months: tuple[Month, ...]
    payees: tuple[PayeeRow, ...]
    payments: tuple[PaymentRow, ...]
    totals: Sums
    since: str | None = None
    until: str | None = None
    #: Whether the files' payruns chose the paylists (PATH given).
    files: bool = False
    #: With the files: the account's paylists that no payrun of theirs paid (not shown).
    left_out: tuple[int, ...] = ()
    #: With the files: their payruns no paylist of the account holds (with their content).
    unpaid: tuple[str, ...] = ()
    #: Whether a record of the merges was read: without one, the service's side alone.
    merges_read: bool = False
    #: The failed payments of the register by cause.
    causes: tuple[Cause, ...] = ()


def build_register(
    paylists: Sequence[LivePaylist],
    units: Sequence[Unit] | None = None,
    *,
    since: str | None = None,
    until: str | None = None,
    periods: Mapping[str, str] | None = None,
    merges: Mapping[int, MergeRecord] | None = None,
) -> Register:
    """The register of `paylists` (the whole account, or with `units` the files' payruns'),
    of the months from `since` to `until` (YYYY-MM, both included; None: no bound)."""
    traced = None if units is None else traced_units(units, paylists)
    periods, records = periods or {}, merges or {}
    chosen = [p for p in paylists if traced is None or p.paylist_id in traced]
    left_out = (
        ()
        if traced is None
        else tuple(p.paylist_id for p in paylists if p.paylist_id not in traced)
    )
    rows: list[PaymentRow] = []
    for live in chosen:
        unit = None if traced is None else traced[live.paylist_id]
        payrun_id = None if unit is None else unit.payrun_id
        part = None if unit is None else unit.part
        period = None if payrun_id is None else periods.get(payrun_id)
        merge = records.get(live.paylist_id)
        for payment in live.payments:
            month = month_of(moved_at(payment))
            if _within(month, since, until):
                rows.append(
                    PaymentRow(
                        month,
                        live.paylist_id,
                        payment.id,
                        payment.worker_email,
                        payment.amount,
                        str(payment.status),
                        payment.cause,
                        payment.description,
                        payment.created_at,
                        payment.updated_at,
                        payrun_id,
                        part,
                        period,
                        merge,
                    )
                )
    rows.sort(key=attrgetter("month", "paylist_id", "payment_id"))  # `undated` sorts last
    total = _Tally()
    by_month: dict[str, tuple[_Tally, dict[int, _Tally]]] = {}
    by_payee: dict[str, tuple[str, _Tally, set[str]]] = {}
    for row in rows:
        kind = bucket(row.status)
        total.add(kind, row.amount, row.cause)
        if (of_month := by_month.get(row.month)) is None:
            of_month = by_month[row.month] = (_Tally(), {})
        of_month[0].add(kind, row.amount, row.cause)
        paylists_of = of_month[1]
        if (paylist := paylists_of.get(row.paylist_id)) is None:
            paylist = paylists_of[row.paylist_id] = _Tally()
        paylist.add(kind, row.amount, row.cause)
        key = payee_key(row.payee)
        if (of_payee := by_payee.get(key)) is None:
            of_payee = by_payee[key] = (row.payee, _Tally(), set())
        of_payee[1].add(kind, row.amount, row.cause)
        of_payee[2].add(row.month)
    lives = {live.paylist_id: live for live in chosen}
    first = {(row.month, row.paylist_id): row for row in reversed(rows)}
    return Register(
        months=tuple(
            Month(
                name,
                month.sums(),
                tuple(
                    _paylist_row(first[(name, paylist_id)], lives[paylist_id], tally)
                    for paylist_id, tally in paylists_of.items()
                ),
            )
            for name, (month, paylists_of) in by_month.items()
        ),
        payees=tuple(
            sorted(
                (
                    PayeeRow(shown, tally.sums(), len(months))
                    for shown, tally, months in by_payee.values()
                ),
                key=lambda p: (-p.sums.requested, p.payee),
            )
        ),
        payments=tuple(rows),
        totals=total.sums(),
        since=since,
        until=until,
        files=units is not None,
        left_out=left_out,
        unpaid=_unpaid(units, traced),
        merges_read=merges is not None,
        causes=total.by_cause(),
    )


def _unpaid(units: Sequence[Unit] | None, traced: Mapping[int, Unit] | None) -> tuple[str, ...]:
    """The payruns of `units` (by id, in file order) none of whose paylists was traced."""
    if units is None or traced is None:
        return ()
    paid = {unit.payrun_id for unit in traced.values()}
    return tuple(dict.fromkeys(u.payrun_id for u in units if u.payrun_id not in paid))


def _paylist_row(first: PaymentRow, live: LivePaylist, tally: _Tally) -> PaylistRow:
    """A paylist's payments of one month (`first`: the first of them, which names its payrun)."""
    return PaylistRow(
        month=first.month,
        paylist_id=live.paylist_id,
        description=live.description,
        sums=tally.sums(),
        causes=tally.by_cause(),
        payrun_id=first.payrun_id,
        part=first.part,
        period=first.period,
        merge=first.merge,
    )


def _within(month: str, since: str | None, until: str | None) -> bool:
    if month == UNDATED:
        return since is None and until is None
    return (since is None or month >= since) and (until is None or month <= until)
