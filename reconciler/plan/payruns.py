"""What a plan decides for each payrun: pay, paid, conflict or refused, and the wallet check.

Pure: the desired payruns, the live paylists (with their payments), the live workers, the wallet
and the plan's own worker changes in; decisions out. A payrun's paylist is found by its
idempotence key, derived from the payrun's id (and part number: more than 1,000 payments are
paid as several paylists of at most 1,000, in file order), so the same payrun gives the same
key on every machine and every run, and is paid once.

| live | file | decision |
| --- | --- | --- |
| no paylist with the key | present | pay (unless a pre-flight check refuses it) |
| the key, same content | present | paid, with its outcome counts |
| the key, other content | present | conflict: a paid payrun cannot change |
| the key | removed | nothing: money is never un-paid |
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from reconciler.desired.model import Payrun, PayrunPayment
from reconciler.identity import email_key
from reconciler.money import grouped, two_places
from reconciler.service.models import Payment, Wallet, Worker, WorkerStatus

MAX_PAYMENTS = 1000
TO_PAY, PAID, CONFLICT, REFUSED = "to_pay", "paid", "conflict", "refused"
_KEY_LABEL = "reconciler payrun v1"


def paylist_key(payrun_id: str, part: int | None = None) -> str:
    """The paylist's idempotence key: 32 hexadecimal characters, the same everywhere."""
    text = f"{_KEY_LABEL}\0{payrun_id}\0{part or 0}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class LivePaylist:
    """A paylist of the account, with its key and payments (read only when payruns exist)."""

    paylist_id: int
    idempotence_key: str
    description: str
    payments: tuple[Payment, ...] = ()


@dataclass(frozen=True, slots=True)
class PayrunDecision:
    """One paylist of a payrun (a split payrun has several, numbered from 1) and its fate."""

    payrun_id: str
    part: int | None
    key: str
    description: str
    payments: tuple[PayrunPayment, ...]
    state: str
    reasons: tuple[str, ...] = ()
    outcomes: dict[str, int] = field(default_factory=dict)
    paylist_id: int | None = None
    #: Payees (as written) no paylist of the account has paid before: a reviewer's first question.
    new_payees: tuple[str, ...] = ()

    @property
    def address(self) -> str:
        base = f'paylist["{self.payrun_id}"]'
        return base if self.part is None else f"{base}[{self.part}]"

    @property
    def total(self) -> Decimal:
        return sum((payment.amount for payment in self.payments), Decimal("0.00"))


@dataclass(frozen=True, slots=True)
class WalletCheck:
    """The wallet before and after the payruns to pay, and why an apply would refuse them."""

    balance: Decimal
    over_draft_limit: Decimal
    enabled: bool
    total_to_pay: Decimal
    problems: tuple[str, ...] = ()

    @property
    def balance_after(self) -> Decimal:
        return self.balance - self.total_to_pay


def parts(payrun: Payrun) -> list[tuple[int | None, tuple[PayrunPayment, ...]]]:
    """The payrun's paylists: one (part None), or parts 1.. of at most 1,000 payments."""
    payments = payrun.payments
    if len(payments) <= MAX_PAYMENTS:
        return [(None, payments)]
    return [
        (number + 1, payments[start : start + MAX_PAYMENTS])
        for number, start in enumerate(range(0, len(payments), MAX_PAYMENTS))
    ]


def _content(payments: Iterable[tuple[str, Decimal, str]]) -> Counter[tuple[str, Decimal, str]]:
    return Counter(
        (email_key(email), amount, description) for email, amount, description in payments
    )


@dataclass(frozen=True, slots=True)
class Unit:
    """One paylist of a payrun: what a plan (or a saved plan) asks to be paid."""

    payrun_id: str
    part: int | None
    description: str
    payments: tuple[PayrunPayment, ...]


def units_of(payruns: Sequence[Payrun]) -> list[Unit]:
    """Every paylist the payruns ask for (a split payrun's parts in order)."""
    return [
        Unit(payrun.id, part, payrun.description, payments)
        for payrun in payruns
        for part, payments in parts(payrun)
    ]


def decide_units(
    units: Sequence[Unit],
    paylists: Sequence[LivePaylist],
    workers: Sequence[Worker],
    wallet: Wallet | None,
    *,
    inactivated_emails: Iterable[str] = (),
    max_payout: Decimal | None = None,
) -> tuple[tuple[PayrunDecision, ...], WalletCheck | None]:
    """Each paylist's decision against the live account, and the wallet check."""
    by_key = {paylist.idempotence_key: paylist for paylist in paylists}
    active = {email_key(w.email) for w in workers if w.status is WorkerStatus.ACTIVE}
    leaving = {email_key(email) for email in inactivated_emails}
    succeeded = {
        (email_key(p.worker_email), p.amount, p.description): p.paylist_id
        for paylist in paylists
        for p in paylist.payments
        if str(p.status) == "SUCCESS"
    }
    paid_before = {email_key(p.worker_email) for paylist in paylists for p in paylist.payments}
    decisions = []
    for unit in units:
        key = paylist_key(unit.payrun_id, unit.part)
        common = (unit.payrun_id, unit.part, key, unit.description, unit.payments)
        live = by_key.get(key)
        if live is not None:
            decisions.append(_against_live(common, live))
            continue
        reasons = _preflight(unit.payments, active, leaving, succeeded, wallet)
        new = dict.fromkeys(p.email for p in unit.payments if email_key(p.email) not in paid_before)
        decisions.append(
            PayrunDecision(*common, REFUSED if reasons else TO_PAY, reasons, new_payees=tuple(new))
        )
    return tuple(decisions), _wallet_check(decisions, wallet, max_payout)


def _against_live(
    common: tuple[str, int | None, str, str, tuple[PayrunPayment, ...]], live: LivePaylist
) -> PayrunDecision:
    description, payments = common[3], common[4]
    mine = _content((p.email, p.amount, p.description) for p in payments)
    theirs = _content((p.worker_email, p.amount, p.description) for p in live.payments)
    outcomes = dict(Counter(str(p.status) for p in live.payments))
    if mine == theirs and description == live.description:
        return PayrunDecision(*common, PAID, (), outcomes, live.paylist_id)
    reason = (
        f"paylist {live.paylist_id} was paid with this payrun's key and other content: a paid "
        "payrun cannot change; add a new payrun for a correction"
    )
    return PayrunDecision(*common, CONFLICT, (reason,), outcomes, live.paylist_id)


def _preflight(
    payments: Sequence[PayrunPayment],
    active: set[str],
    leaving: set[str],
    succeeded: dict[tuple[str, Decimal, str], int],
    wallet: Wallet | None,
) -> tuple[str, ...]:
    """Why the service would refuse or fail this paylist's payments, before it is sent."""
    reasons: list[str] = []
    if wallet is not None and not wallet.enabled:
        reasons.append("the wallet is disabled")
    for number, payment in enumerate(payments, start=1):
        who = f"payment {number} ({two_places(payment.amount)} to {payment.email})"
        key = email_key(payment.email)
        if key in leaving:
            reasons.append(f"{who}: this plan inactivates the payee")
        elif key not in active:
            reasons.append(f"{who}: the payee has no ACTIVE agreement")
        paid_in = succeeded.get((key, payment.amount, payment.description))
        if paid_in is not None:
            reasons.append(
                f"{who}: paid already in paylist {paid_in} with the same amount, email and "
                "description (the service would fail it as DUPLICATE_PAYMENT)"
            )
    return tuple(reasons)


def _wallet_check(
    decisions: Sequence[PayrunDecision], wallet: Wallet | None, max_payout: Decimal | None
) -> WalletCheck | None:
    if wallet is None:
        return None
    total = sum((d.total for d in decisions if d.state == TO_PAY), Decimal("0.00"))
    problems = []
    available = wallet.balance + wallet.over_draft_limit
    if total > available:
        problems.append(
            f"the payruns to pay total {grouped(total)}, more than the wallet's "
            f"{grouped(available)} (balance and over-draft limit)"
        )
    if max_payout is not None and total > max_payout:
        problems.append(
            f"the payruns to pay total {grouped(total)}, "
            f"over policy.maxPayout {grouped(max_payout)}"
        )
    return WalletCheck(
        balance=wallet.balance,
        over_draft_limit=wallet.over_draft_limit,
        enabled=wallet.enabled,
        total_to_pay=total,
        problems=tuple(problems),
    )
