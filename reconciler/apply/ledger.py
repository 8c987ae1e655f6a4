"""The ledger: how every change of a plan ended (applied, failed or skipped), and why.

The executor's threads record outcomes as they settle; the ledger is the run's answer, printed
as a table or JSON at the end, and the test of success: a run is complete only when every
change was applied.
"""

from __future__ import annotations

import enum
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from reconciler.payee import payee_key
from reconciler.plan.changes import (
    Change,
    Inactivate,
    Invite,
    Replace,
    WebhookCreate,
    WebhookUpdate,
)
from reconciler.plan.payruns import PayrunDecision
from reconciler.service.models import Payment
from reconciler.words import counted

#: The `format_version` of the ledger's JSON document (1.1: a `pay` row's payee, amount and
#: paylist id).
LEDGER_FORMAT_VERSION = "1.1"

#: The action of a payment of a payrun (and of a payrun refused or unknown as a whole).
PAY = "pay"

_ACTIONS: dict[type, str] = {
    Invite: "invite",
    Inactivate: "inactivate",
    Replace: "replace",
    WebhookCreate: "webhook_create",
    WebhookUpdate: "webhook_update",
}


class Outcome(enum.StrEnum):
    """How a change ended."""

    APPLIED = "applied"
    FAILED = "failed"  # with the service's reason
    SKIPPED = "skipped"  # not attempted, or nothing left to do; with why
    #: A payrun held for its approvals (dual control): nothing of it sent, and no failure:
    #: a later merge whose approvals cover it pays it. Counted only where there is one.
    WAITING = "waiting"


#: The outcomes every summary counts, zero or not (WAITING is counted where there is one).
_ALWAYS = (Outcome.APPLIED, Outcome.FAILED, Outcome.SKIPPED)


def counted_outcomes(counts: Counter[Outcome]) -> tuple[Outcome, ...]:
    """The outcomes a summary names: applied, failed and skipped, and waiting when any."""
    return _ALWAYS + ((Outcome.WAITING,) if counts.get(Outcome.WAITING) else ())


def action_of(change: Change) -> str:
    """The change's action in the ledger's (and the saved plan's) words."""
    return _ACTIONS[type(change)]


@dataclass(frozen=True, slots=True)
class Entry:
    """One change's line in the ledger.

    `detail` says why for failed and skipped, and carries a note for an applied change that
    took an unusual road (already inactivated, landed although the answer was lost).
    `agreement_id` is the agreement inactivated or created, when the service said it. A `pay`
    row names its `payee` (the externalId it was written with, else its email), its `amount`
    (a whole payrun's total on a row for the payrun) and its `paylist_id` once there is one.
    """

    address: str
    action: str
    outcome: Outcome
    detail: str | None = None
    agreement_id: int | None = None
    payee: str | None = None
    amount: Decimal | None = None
    paylist_id: int | None = None
    #: A payment's own facts as the service holds them, for the evidence records (dual
    #: control); not in the ledger's JSON, whose shape stays.
    payment_id: int | None = None
    email: str | None = None
    description: str | None = None
    status: str | None = None

    def as_dict(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "address": self.address,
            "action": self.action,
            "outcome": str(self.outcome),
            "detail": self.detail,
            "agreement_id": self.agreement_id,
        }
        if self.action == PAY:
            amount = None if self.amount is None else f"{self.amount:.2f}"
            row |= {"payee": self.payee, "amount": amount, "paylist_id": self.paylist_id}
        return row


def payrun_entry(
    decision: PayrunDecision, outcome: Outcome, detail: str, paylist_id: int | None = None
) -> Entry:
    """The row of a payrun as a whole (refused, or its outcome unknown): its total."""
    return Entry(
        decision.address, PAY, outcome, detail, amount=decision.total, paylist_id=paylist_id
    )


def payment_entry(
    decision: PayrunDecision,
    number: int,
    payment: Payment,
    outcome: Outcome,
    detail: str | None = None,
) -> Entry:
    """The row of payment `number` (from 1) of a payrun's paylist, as the service holds it:
    its payee by the externalId the payrun wrote it with (else its email), amount, paylist."""
    written = {payee_key(p.email): p.worker for p in decision.payments if p.worker}
    return Entry(
        f"{decision.address}.payments[{number}]",
        PAY,
        outcome,
        detail,
        payee=written.get(payee_key(payment.worker_email)) or payment.worker_email,
        amount=payment.amount,
        paylist_id=payment.paylist_id,
        payment_id=payment.id,
        email=payment.worker_email,
        description=payment.description,
        status=str(payment.status),
    )


class Ledger:
    """The outcome of each change of one apply, in the plan's order; safe to record from threads.

    Each change settles once: a second `record` for the same change is a bug in the executor
    and raises, because a ledger that could say "applied" twice could hide a double invitation.
    """

    def __init__(
        self, changes: Iterable[Change], on_settle: Callable[[Entry], None] | None = None
    ) -> None:
        self._changes = tuple(changes)
        self._entries: dict[int, Entry] = {}
        self._lock = threading.Lock()
        self._on_settle = on_settle
        self._payments: list[Entry] = []  # payruns: one entry per payment, after the changes
        self.interrupted = False

    @property
    def changes(self) -> tuple[Change, ...]:
        return self._changes

    def record(
        self,
        index: int,
        outcome: Outcome,
        detail: str | None = None,
        *,
        agreement_id: int | None = None,
    ) -> Entry:
        """Settle change number `index` of the plan."""
        change = self._changes[index]
        entry = Entry(change.address, action_of(change), outcome, detail, agreement_id)
        with self._lock:
            if index in self._entries:
                raise RuntimeError(f"{change.address} was already settled: {self._entries[index]}")
            self._entries[index] = entry
        if self._on_settle is not None:
            self._on_settle(entry)
        return entry

    def is_settled(self, index: int) -> bool:
        with self._lock:
            return index in self._entries

    def settle_the_rest(self, detail: str, outcome: Outcome = Outcome.SKIPPED) -> None:
        """Mark every change not settled yet (as skipped, by default), saying why: an
        interrupt, a stop. A change another thread settles meanwhile keeps its outcome."""
        for index in range(len(self._changes)):
            with self._lock:
                if index in self._entries:
                    continue
            try:
                self.record(index, outcome, detail)
            except RuntimeError:  # settled by its own thread between the check and now
                continue

    def add_payment(self, entry: Entry) -> None:
        """Write one payment of a payrun (paid, failed with its cause, or skipped)."""
        with self._lock:
            self._payments.append(entry)
        if self._on_settle is not None:
            self._on_settle(entry)

    @property
    def entries(self) -> list[Entry]:
        """The settled entries, in the plan's order, then the payments of its payruns."""
        with self._lock:
            return [self._entries[index] for index in sorted(self._entries)] + self._payments

    def counts(self) -> Counter[Outcome]:
        return Counter(entry.outcome for entry in self.entries)

    @property
    def complete(self) -> bool:
        """Whether every change of the plan was applied (the only exit status 0); a payrun
        waiting for its approvals is no failure of the apply (the rest of it went)."""
        entries = self.entries
        return len(entries) == len(self._changes) + len(self._payments) and all(
            entry.outcome in (Outcome.APPLIED, Outcome.WAITING) for entry in entries
        )

    def as_dict(self) -> dict[str, Any]:
        """The ledger as the JSON document `apply --format json` prints."""
        counts = self.counts()
        return {
            "format_version": LEDGER_FORMAT_VERSION,
            "complete": self.complete,
            "interrupted": self.interrupted,
            "summary": {
                str(outcome): counts.get(outcome, 0) for outcome in counted_outcomes(counts)
            },
            "changes": [entry.as_dict() for entry in self.entries],
        }

    def summary_line(self) -> str:
        """'Apply complete: 4 applied.' or 'Apply incomplete: 2 applied, 1 failed, 1 skipped.'"""
        counts = self.counts()
        parts = [
            f"{counted(counts.get(outcome, 0))} {outcome}" for outcome in counted_outcomes(counts)
        ]
        if not self._changes and not self._payments:
            return "Apply complete: nothing to do."
        if self.complete:
            waiting = counts.get(Outcome.WAITING, 0)
            held = f", {counted(waiting)} waiting for approvals" if waiting else ""
            return f"Apply complete: {parts[0]}{held}."
        state = "interrupted" if self.interrupted else "incomplete"
        line = f"Apply {state}: {', '.join(parts)}."
        unsettled = [e for e in self.entries if e.outcome not in (Outcome.APPLIED, Outcome.WAITING)]
        if any(entry.action != "pay" for entry in unsettled) or self.interrupted:
            line += " Run apply again to converge."
        if any(entry.action == "pay" for entry in unsettled):
            line += " Payments are never retried by apply: each row says what to do."
        return line
