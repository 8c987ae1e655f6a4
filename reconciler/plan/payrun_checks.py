"""What would stop a payrun's payments before any is sent: each payment's pre-flight checks
(its payee, paid before, paid twice in one plan, the wallet enabled) and the wallet check of the
total to pay (the balance and over-draft limit, `policy.maxPayout`).

A payee is a mailbox as the service keys it (`reconciler.payee`): found among the ACTIVE
agreements by `payee_key`, refused when this plan closes its agreement, and flagged for review
when another ACTIVE mailbox looks like it. A saved plan names the agreement it judged for each
payment; at apply only that agreement, ACTIVE at the very email reviewed, is paid.

Pure, like `payruns`, which decides each payrun and asks these of the ones it would pay.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

from reconciler.desired.model import PayrunPayment
from reconciler.identity import payment_key
from reconciler.money import grouped, two_places
from reconciler.payee import look_alike_key, payee_key
from reconciler.service.models import Payment, Wallet, Worker, WorkerStatus


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


class Payees:
    """Who a payment may be paid to: the account's ACTIVE agreements by `payee_key` (the
    mailbox as the service keys it), every agreement by id (a saved plan names the one it
    judged), the ACTIVE mailboxes that look alike, and the agreements this plan closes
    (inactivates, or replaces: `reconciler.plan.changes.closed_agreements`)."""

    def __init__(self, workers: Iterable[Worker], closing: Collection[int] = ()) -> None:
        self.by_id: dict[int, Worker] = {}
        self.active: dict[str, list[Worker]] = {}
        self._looks: dict[str, set[str]] = {}
        for worker in workers:
            self.by_id[worker.agreement_id] = worker
            if worker.status is WorkerStatus.ACTIVE:
                self.active.setdefault(payee_key(worker.email), []).append(worker)
                self._looks.setdefault(look_alike_key(worker.email), set()).add(worker.email)
        self.closing = frozenset(closing)

    def look_alikes(self, email: str) -> list[str]:
        """The ACTIVE mailboxes that look like `email` and are others (`look_alike_key`)."""
        own = payee_key(email)
        return sorted(e for e in self._looks.get(look_alike_key(email), ()) if payee_key(e) != own)


@dataclass(frozen=True, slots=True)
class Checked:
    """A paylist's payments as they would be sent (each at its payee's exact email), the
    agreement each is paid to, why any would be refused, and the payees a reviewer should
    check because another ACTIVE mailbox looks like theirs (`(payee, look-alike)`)."""

    payments: tuple[PayrunPayment, ...]
    agreements: tuple[int | None, ...]
    reasons: tuple[str, ...]
    look_alikes: tuple[tuple[str, str], ...]


def preflight(
    payments: Sequence[PayrunPayment],
    payees: Payees,
    succeeded: Mapping[tuple[str, Decimal, str], Payment],
    wallet: Wallet | None,
    planned: dict[tuple[str, Decimal, str], str],
    payrun_id: str,
    reviewed: Sequence[int] | None = None,
) -> Checked:
    """The payments as they would be sent (each to its payee's email as the service knows it)
    and why the service would refuse or fail them, before anything is sent. `planned`: the
    payments of the payruns judged before this one in this plan (a payment in two payruns is
    a retry of one that FAILED: it is paid once, by the first). `reviewed`: the agreement each
    payment was judged to pay when a saved plan was made; then only that agreement is paid,
    while it is ACTIVE at the very email reviewed."""
    reasons: list[str] = []
    if wallet is not None and not wallet.enabled:
        reasons.append("the wallet is disabled")
    sent, agreements, looks = [], [], []
    for number, payment in enumerate(payments, start=1):
        who = payment_label(number, payment)
        if reviewed is None:
            payee, problem = _payee(payment, payees)
        else:
            payee, problem = _reviewed_payee(payment, reviewed[number - 1], payees)
        if payee is not None and payee.email != payment.email:  # another form of one mailbox
            payment = replace(payment, email=payee.email)
        if problem is None and payee is not None and payee.agreement_id in payees.closing:
            problem = (
                f"this plan inactivates the payee (agreement {payee.agreement_id}, inactivated "
                "or replaced)"
            )
        if problem is not None:
            reasons.append(f"{who}: {problem}")
        looks += [(payment.email, other) for other in payees.look_alikes(payment.email)]
        reasons += _paid(who, payment, succeeded, planned, payrun_id)
        sent.append(payment)
        agreements.append(None if payee is None else payee.agreement_id)
    return Checked(tuple(sent), tuple(agreements), tuple(reasons), tuple(dict.fromkeys(looks)))


def _payee(payment: PayrunPayment, payees: Payees) -> tuple[Worker | None, str | None]:
    """The one ACTIVE agreement of the payment's mailbox (`payee_key`), or why there is none."""
    known = payees.active.get(payee_key(payment.email), [])
    if len(known) == 1:
        return known[0], None
    if len(known) > 1:
        names = ", ".join(sorted(show(w.email) for w in known))
        return None, (
            f"the account has an ACTIVE worker at each of {names}, one mailbox written two "
            "ways (a domain and its IDNA form): no address tells them apart, so neither is "
            "paid; end the agreement that is not the payee's"
        )
    alike = payees.look_alikes(payment.email)
    hint = f" ({', '.join(map(show, alike))} only looks alike: another mailbox)" if alike else ""
    return None, f"the payee has no ACTIVE agreement{hint}"


def _reviewed_payee(
    payment: PayrunPayment, agreement_id: int, payees: Payees
) -> tuple[Worker | None, str | None]:
    """The agreement the saved plan was reviewed paying, if it is still ACTIVE at the very
    email reviewed; else why the payrun is refused, naming the reviewed payee and the live one."""
    live = payees.by_id.get(agreement_id)
    if live is not None and live.status is WorkerStatus.ACTIVE and live.email == payment.email:
        return live, None
    reviewed = f"the plan was reviewed paying agreement {agreement_id} at {show(payment.email)}"
    if live is None:
        now = "which no longer exists"
    elif live.status is not WorkerStatus.ACTIVE:
        now = f"which is {live.status} now"
    else:
        now = f"which is at {show(live.email)} now"
    others = [w for w in payees.active.get(payee_key(payment.email), []) if w is not live]
    others += [
        w for e in payees.look_alikes(payment.email) for w in payees.active.get(payee_key(e), [])
    ]
    also = "".join(
        f"; agreement {w.agreement_id} at {show(w.email)} is another payee" for w in others
    )
    return None, f"{reviewed}, {now}{also}: nothing of this payrun is paid; plan again"


def _paid(
    who: str,
    payment: PayrunPayment,
    succeeded: Mapping[tuple[str, Decimal, str], Payment],
    planned: dict[tuple[str, Decimal, str], str],
    payrun_id: str,
) -> list[str]:
    """Why the payment is paid already: before (SUCCESS or in flight), or by another payrun of
    this plan."""
    reasons = []
    identity = payment_key(payment.email, payment.amount, payment.description)
    paid = succeeded.get(identity)
    other = planned.setdefault(identity, payrun_id)
    if other != payrun_id:
        reasons.append(
            f"{who}: payrun {other!r} of this plan pays the same payment (the same "
            "amount, email and description, as people read them): it is paid once"
        )
    if paid is not None:
        reasons.append(paid_reason(who, paid))
    return reasons


def payment_label(number: int, payment: PayrunPayment) -> str:
    """'payment 1 (100.00 to ada@example.com)': how a reason names a payment of a paylist."""
    return f"payment {number} ({two_places(payment.amount)} to {show(payment.email)})"


def paid_reason(who: str, paid: Payment) -> str:
    """Why a payment is paid already: `paid` (SUCCESS, or in flight) is the same payment."""
    if str(paid.status) == "SUCCESS":
        return (
            f"{who}: paid already in paylist {paid.paylist_id} with the same amount, email "
            "and description, as people read them (the service would fail it as "
            "DUPLICATE_PAYMENT, or pay it twice if its bytes differ)"
        )
    return (
        f"{who}: paid already in paylist {paid.paylist_id} with the same amount, email "
        f"and description, as people read them, and still {paid.status}: a payment in "
        "flight counts as paid (if it fails, pay it again in a new payrun)"
    )


def show(email: str) -> str:
    """An email as a reason quotes it: as it is in printable ASCII, else as a JSON string in
    ASCII, every other character escaped (`"jan.gro\\u00dfe@..."`), so two mailboxes that look
    alike are seen to differ."""
    return (
        email if email.isascii() and email.isprintable() else json.dumps(email, ensure_ascii=True)
    )


def wallet_check(
    total: Decimal, wallet: Wallet | None, max_payout: Decimal | None
) -> WalletCheck | None:
    """The wallet before and after paying `total` (the payruns to pay), and what is wrong
    with paying it: more than the wallet holds, or over `policy.maxPayout`."""
    if wallet is None:
        return None
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
