"""What would stop a payrun's payments before any is sent: each payment's pre-flight checks
(its payee, paid before, paid twice in one plan, the wallet enabled) and the wallet check of the
total to pay (the balance and over-draft limit, `policy.maxPayout`).

Pure, like `payruns`, which decides each payrun and asks these of the ones it would pay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

from reconciler.desired.model import PayrunPayment
from reconciler.identity import email_key, payment_key
from reconciler.money import grouped, two_places
from reconciler.service.models import Payment, Wallet


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


def preflight(
    payments: Sequence[PayrunPayment],
    payees: Mapping[str, set[str]],
    leaving: set[str],
    succeeded: Mapping[tuple[str, Decimal, str], Payment],
    wallet: Wallet | None,
    planned: dict[tuple[str, Decimal, str], str],
    payrun_id: str,
) -> tuple[tuple[PayrunPayment, ...], tuple[str, ...]]:
    """The payments as they would be sent (each to its payee's email as the service knows it)
    and why the service would refuse or fail them, before anything is sent. `planned`: the
    payments of the payruns judged before this one in this plan (a payment in two payruns is
    a retry of one that FAILED: it is paid once, by the first)."""
    reasons: list[str] = []
    if wallet is not None and not wallet.enabled:
        reasons.append("the wallet is disabled")
    sent = []
    for number, payment in enumerate(payments, start=1):
        who = f"payment {number} ({two_places(payment.amount)} to {payment.email})"
        key = email_key(payment.email)
        known = payees.get(key, set())
        if len(known) == 1:
            (email,) = known
            if email != payment.email:  # the same mailbox written in another form
                payment = replace(payment, email=email)
        if key in leaving:
            reasons.append(f"{who}: this plan inactivates the payee")
        elif not known:
            reasons.append(f"{who}: the payee has no ACTIVE agreement")
        elif len(known) > 1:
            names = ", ".join(sorted(known))
            reasons.append(
                f"{who}: the account has an ACTIVE worker at each of {names}, which "
                "this address matches alike: write the email exactly"
            )
        identity = payment_key(payment.email, payment.amount, payment.description)
        paid = succeeded.get(identity)
        other = planned.setdefault(identity, payrun_id)
        if other != payrun_id:
            reasons.append(
                f"{who}: payrun {other!r} of this plan pays the same payment (the same "
                "amount, email and description, as people read them): it is paid once"
            )
        if paid is not None and str(paid.status) == "SUCCESS":
            reasons.append(
                f"{who}: paid already in paylist {paid.paylist_id} with the same amount, email "
                "and description, as people read them (the service would fail it as "
                "DUPLICATE_PAYMENT, or pay it twice if its bytes differ)"
            )
        elif paid is not None:
            reasons.append(
                f"{who}: paid already in paylist {paid.paylist_id} with the same amount, email "
                f"and description, as people read them, and still {paid.status}: a payment in "
                "flight counts as paid (if it fails, pay it again in a new payrun)"
            )
        sent.append(payment)
    return tuple(sent), tuple(reasons)


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
