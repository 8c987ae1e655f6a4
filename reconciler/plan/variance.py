"""What changed since the last payrun paid: the review a month's payroll gets (issue 47).

Pure: the plan's payrun decisions and the account's paylists in; each payrun to pay with its
variance against the payrun paid before it out. A period payrun is compared with the last
period paid before its own (the nearest earlier month whose paylist key the account holds, up
to two years back); a written payrun with the account's newest paylist. Payees are compared as
payments are (`reconciler.payee`); a payment that FAILED was not paid, so it is not counted.
The variance rides on the payrun's first paylist (its part 1, or its only one:
`periods.with_variance`). A saved plan keeps it as reviewed (`variance_record`, signed with
the rest), so its apply and its comment show what the reviewer saw, even once the account has
paid another payrun since (`periods.with_saved_variance`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from reconciler.desired.model import PayrunPayment
from reconciler.money import two_places
from reconciler.payee import payee_key
from reconciler.plan.payrun_keys import LivePaylist, paylist_key

#: How many months before a period a last paid period is looked for.
MONTHS_BACK = 24


@dataclass(frozen=True, slots=True)
class Variance:
    """A payrun to pay beside the payrun paid before it: payees added, no longer paid, and
    amounts changed (`(payee, before, after)`), and both totals."""

    before: str  #: what it is compared with: "period 2026-11 (paylist 7)", "paylist 9"
    added: tuple[tuple[str, Decimal], ...]
    removed: tuple[tuple[str, Decimal], ...]
    changed: tuple[tuple[str, Decimal, Decimal], ...]
    before_total: Decimal
    after_total: Decimal


def variance_of(
    period: str | None,
    payments: Iterable[PayrunPayment],
    by_key: Mapping[str, LivePaylist],
    newest: LivePaylist | None,
) -> Variance | None:
    """A payrun's `payments` beside the payrun paid before it: for a period, the last period
    paid before it; for a written payrun, the account's `newest` paylist. None: none paid."""
    if period is not None:
        found = _last_period(period, by_key)
        if found is None:
            return None
        name, previous = found
        paylists = ", ".join(str(paylist.paylist_id) for paylist in previous)
        label = f"period {name} (paylist {paylists})"
    elif newest is not None:
        label, previous = f"paylist {newest.paylist_id}", [newest]
    else:
        return None
    paid = (
        (p.worker_email, p.amount)
        for paylist in previous
        for p in paylist.payments
        if str(p.status) != "FAILED"
    )
    return _variance(label, paid, ((p.email, p.amount) for p in payments))


def _last_period(
    period: str, by_key: Mapping[str, LivePaylist]
) -> tuple[str, list[LivePaylist]] | None:
    """The nearest period before `period` the account paid, with its paylists."""
    year, month = (int(part) for part in period.split("-"))
    index = year * 12 + month - 1
    for back in range(1, MONTHS_BACK + 1):
        earlier = index - back
        name = f"{earlier // 12:04d}-{earlier % 12 + 1:02d}"
        paid = by_key.get(paylist_key("", None, name))
        if paid is not None:
            return name, [paid]
        parts: list[LivePaylist] = []
        while (part := by_key.get(paylist_key("", len(parts) + 1, name))) is not None:
            parts.append(part)
        if parts:
            return name, parts
    return None


def _variance(
    label: str,
    before: Iterable[tuple[str, Decimal]],
    after: Iterable[tuple[str, Decimal]],
) -> Variance:
    old, new = _by_payee(before), _by_payee(after)
    return Variance(
        label,
        tuple((email, amount) for key, (email, amount) in new.items() if key not in old),
        tuple((email, amount) for key, (email, amount) in old.items() if key not in new),
        tuple(
            (email, old[key][1], amount)
            for key, (email, amount) in new.items()
            if key in old and old[key][1] != amount
        ),
        sum((amount for _, amount in old.values()), Decimal("0.00")),
        sum((amount for _, amount in new.values()), Decimal("0.00")),
    )


def _by_payee(payments: Iterable[tuple[str, Decimal]]) -> dict[str, tuple[str, Decimal]]:
    """Each payee's email (as first written) and the sum paid to it, in the payments' order."""
    found: dict[str, tuple[str, Decimal]] = {}
    for email, amount in payments:
        key = payee_key(email)
        shown, total = found.get(key, (email, Decimal("0.00")))
        found[key] = (shown, total + amount)
    return found


def variance_record(variance: Variance | None) -> dict[str, Any] | None:
    """The variance as the saved plan keeps it (amounts two-place strings; None: none)."""
    if variance is None:
        return None
    return {
        "before": variance.before,
        "added": [{"email": e, "amount": two_places(a)} for e, a in variance.added],
        "removed": [{"email": e, "amount": two_places(a)} for e, a in variance.removed],
        "changed": [
            {"email": e, "before": two_places(b), "after": two_places(a)}
            for e, b, a in variance.changed
        ],
        "before_total": two_places(variance.before_total),
        "after_total": two_places(variance.after_total),
    }


def variance_from(record: dict[str, Any] | None) -> Variance | None:
    """`variance_record` read back."""
    if record is None:
        return None
    return Variance(
        record["before"],
        tuple((item["email"], Decimal(item["amount"])) for item in record["added"]),
        tuple((item["email"], Decimal(item["amount"])) for item in record["removed"]),
        tuple(
            (item["email"], Decimal(item["before"]), Decimal(item["after"]))
            for item in record["changed"]
        ),
        Decimal(record["before_total"]),
        Decimal(record["after_total"]),
    )
