"""Paying the payruns of a plan, once, and following them until they settle.

After the worker changes and the webhook: each paylist is created with its derived idempotence
key; a 5xx, a timeout or a dropped connection is sent again (by the client) with the same key
and content, so the service answers the original paylist and nothing is paid twice; 409 means
another paylist holds the key: failed, with the reason. When the retries could not settle a
creation (a lost answer), the paylist is read back by its key before anything is written:
found with the payrun's content, it is followed like any other (a key is only a claim: with other
content it is failed, untraced money); absent, nothing was paid (failed, apply again); and only
when the read fails too is its outcome "unknown, run plan to see", never "failed" for a paylist
the service may hold. A part of a split payrun that is not paid stops the payrun's later parts:
a payrun is paid whole or not at all. A read that fails while settling writes "unknown: run
plan" for that paylist: the ledger of what was sent always survives. Then the payments are
followed until
none is PENDING (or `settle_timeout` passes), and each is written in the ledger: applied (paid),
or failed with its cause. A refused payrun (pre-flight, wallet, maxPayout without `--force`)
is written as failed with every reason, and the other changes of the plan are not held back.

Immediately before each paylist is created, the account's payments are read again
(`PaidMeanwhile`): a payment of the payrun that another apply, or anyone with the service's API,
paid since the plan was judged (SUCCESS, or in flight, by the reconciler's identity rule) refuses
the payrun, nothing of it paid. The account lock (`reconciler.apply.lock`) keeps a second apply
on this machine out; this read is what stops the rest (another machine, the service's screens).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Protocol

from reconciler.apply.ledger import PAY as PAY  # the action of a payment (tests name it here)
from reconciler.apply.ledger import Ledger, Outcome, payment_entry, payrun_entry
from reconciler.identity import description_key, payment_key
from reconciler.plan.model import Plan
from reconciler.plan.payrun_checks import paid_reason, payment_label
from reconciler.plan.payruns import (
    REFUSED,
    TO_PAY,
    WAITING,
    PayrunDecision,
    paid_payments,
    same_payments,
)
from reconciler.service.errors import (
    AmbiguousOutcome,
    Conflict,
    ServerError,
    ServiceError,
    TransportFailure,
    UnexpectedResponse,
)
from reconciler.service.models import Paylist, PaylistSummary, Payment, PaymentItem

POLL_S = 0.25


class PayService(Protocol):
    def create_paylist(
        self,
        description: str,
        payments: Sequence[PaymentItem],
        *,
        idempotence_key: str | None = None,
        client_id: int | None = None,
    ) -> Paylist: ...

    def list_paylist_payments(self, paylist_id: int) -> list[Payment]: ...

    def iter_paylists(
        self, since: datetime | None = None, until: datetime | None = None
    ) -> Iterator[PaylistSummary]: ...

    def get_paylist(self, paylist_id: int) -> Paylist: ...

    def iter_payments(
        self, since: datetime | None = None, until: datetime | None = None
    ) -> Iterator[Payment]: ...


#: How far before a creation the read-back looks, for clocks that differ a little.
READ_BACK_MARGIN = timedelta(minutes=10)
UNKNOWN = "unknown: the paylist may have been created; run `reconciler plan` to see"
_WHOLE = (
    "not sent: an earlier part of this payrun was not paid (above), and a payrun is paid "
    "whole or not at all"
)


def pay(
    service: PayService,
    plan: Plan,
    ledger: Ledger,
    *,
    force: bool = False,
    wait: bool = True,
    settle_timeout: float = 600.0,
    phase: Callable[[str, int], None] | None = None,
) -> None:
    """Create every paylist the plan pays, then write each payment's outcome in the ledger."""
    for decision in plan.payruns:
        if decision.state == REFUSED:
            _refused(ledger, decision, decision.reasons)
        elif decision.state == WAITING:  # held for its approvals: nothing of it is sent
            waits = "; ".join(decision.reasons)  # what it needs, then each approval not counted
            ledger.add_payment(payrun_entry(decision, Outcome.WAITING, waits))
    to_pay = plan.to_pay
    blocked = plan.wallet.problems if plan.wallet is not None and not force else ()
    if blocked:
        for decision in to_pay:
            _refused(ledger, decision, (*blocked, "apply with --force to pay anyway"))
        return
    if phase is not None and to_pay:
        phase("paying", len(to_pay))
    created: list[tuple[PayrunDecision, int]] = []
    stopped: set[str] = set()  # payruns a part of which was not paid: no later part is sent
    meanwhile = PaidMeanwhile(service)
    for number, decision in enumerate(to_pay):
        if decision.payrun_id in stopped:
            _refused(ledger, decision, (_WHOLE,))
            continue
        # This part and the payrun's later ones: before its first part, the whole payrun.
        rest = [d for d in to_pay[number:] if d.payrun_id == decision.payrun_id]
        paid = meanwhile.reasons(rest)
        if paid:
            _refused(ledger, decision, paid)
            stopped.add(decision.payrun_id)
            continue
        paylist_id = _create(service, decision, ledger)
        if paylist_id is None:
            stopped.add(decision.payrun_id)
        else:
            meanwhile.ours.add(paylist_id)
            created.append((decision, paylist_id))
    if phase is not None and created:
        phase("settling" if wait else "accepted", sum(len(d.payments) for d, _ in created))
    deadline = time.monotonic() + settle_timeout
    for decision, paylist_id in created:
        _settle(service, decision, paylist_id, ledger, wait=wait, deadline=deadline)


class PaidMeanwhile:
    """The account's payments, read again immediately before each paylist is created.

    The first read takes every payment (a payrun's payment paid before in any paylist is a
    duplicate, as the plan judged it); each later one only those created since the read before
    (less `READ_BACK_MARGIN`, for clocks that differ). A payment counts as paid as the plan
    counts it (`paid_payments`: SUCCESS, or in flight); the paylists this apply created are its
    own and are not counted against its later payruns."""

    def __init__(self, service: PayService) -> None:
        self._service = service
        self._since: datetime | None = None
        self._payments: dict[int, Payment] = {}
        self.ours: set[int] = set()

    def reasons(self, decisions: Sequence[PayrunDecision]) -> tuple[str, ...]:
        """Why the payrun of `decisions` (its parts still to send) must not be sent now: a
        payment of it is paid already, or the payments could not be read again."""
        started = datetime.now(UTC)
        try:
            for live in self._service.iter_payments(since=self._since):
                self._payments[live.id] = live
        except ServiceError as error:
            return (
                f"the account's payments could not be read again just before paying "
                f"({error.message}): nothing of this payrun was paid, so never twice; apply "
                "again",
            )
        self._since = started - READ_BACK_MARGIN
        paid = paid_payments(p for p in self._payments.values() if p.paylist_id not in self.ours)
        found = []
        for decision in decisions:
            for number, payment in enumerate(decision.payments, start=1):
                before = paid.get(payment_key(payment.email, payment.amount, payment.description))
                if before is not None:
                    who = payment_label(number, payment)
                    if decision.part is not None:
                        who = f"part {decision.part}, {who}"
                    found.append(paid_reason(who, before))
        if not found:
            return ()
        return (
            "read again just before paying, the account shows this payrun paid since it was "
            "planned (by another apply, or outside the files)",
            *found,
            "nothing of this payrun was paid",
        )


def progress_steps(plan: Plan, *, force: bool) -> int:
    """How many ledger rows paying `plan` writes: one per payment paid, one per refusal."""
    blocked = plan.wallet is not None and bool(plan.wallet.problems) and not force
    return sum(
        1 if decision.state in (REFUSED, WAITING) or blocked else len(decision.payments)
        for decision in plan.payruns
        if decision.state in (REFUSED, TO_PAY, WAITING)
    )


def _create(service: PayService, decision: PayrunDecision, ledger: Ledger) -> int | None:
    """Create the paylist; the client retries a 5xx, a timeout or a dropped connection itself,
    each time with the same key and content (a paylist creation is safe to repeat), so the
    service answers the original paylist and nothing is paid twice. When the retries could not
    settle it, the paylist is read back by its key: the service's word, not the error, says
    whether it exists."""
    items = [PaymentItem(p.description, p.amount, p.email) for p in decision.payments]
    started = datetime.now(UTC)
    try:
        return service.create_paylist(decision.description, items, idempotence_key=decision.key).id
    except Conflict as conflict:
        reason = f"another paylist holds this payrun's key: {conflict.message}"
        _refused(ledger, decision, (reason,))
    except (ServerError, TransportFailure, AmbiguousOutcome, UnexpectedResponse) as unsettled:
        if isinstance(unsettled, TransportFailure) and unsettled.surely_not_sent:
            _refused(ledger, decision, (unsettled.message,))
            return None
        return _read_back(service, decision, ledger, since=started - READ_BACK_MARGIN)
    except ServiceError as refused:
        _refused(ledger, decision, (refused.message,))
    return None


def _read_back(
    service: PayService, decision: PayrunDecision, ledger: Ledger, *, since: datetime
) -> int | None:
    """The paylist the service holds under the payrun's key, if any; unknown when the read
    fails too (never "failed": the paylist may exist)."""
    try:
        for summary in service.iter_paylists(since=since):
            found = service.get_paylist(summary.paylist_id)
            if found.idempotence_key == decision.key:
                payments = service.list_paylist_payments(found.id)
                if not _ours(decision, found.description, payments, ledger, found.id):
                    return None
                return found.id
    except ServiceError as error:
        ledger.add_payment(payrun_entry(decision, Outcome.SKIPPED, f"{UNKNOWN} ({error.message})"))
        return None
    reason = (
        "the service did not confirm the paylist, and holds none with this payrun's key "
        "(read back): nothing was paid; apply again to pay it"
    )
    _refused(ledger, decision, (reason,))
    return None


def _settle(
    service: PayService,
    decision: PayrunDecision,
    paylist_id: int,
    ledger: Ledger,
    *,
    wait: bool,
    deadline: float,
) -> None:
    """Follow the paylist's payments until none is PENDING (or the deadline), and write each;
    a paylist whose payments are not the payrun's is written as such, and a failed read as
    unknown: the ledger of what was sent is always written."""
    try:
        payments = service.list_paylist_payments(paylist_id)
        if not _ours(decision, decision.description, payments, ledger, paylist_id):
            return
        while wait and any(str(p.status) == "PENDING" for p in payments):
            if time.monotonic() > deadline:
                break
            time.sleep(POLL_S)
            payments = service.list_paylist_payments(paylist_id)
    except ServiceError as error:
        unknown = (
            f"unknown: paylist {paylist_id} was created, but reading how its payments settle "
            f"failed ({error.message}): run `reconciler plan` to see"
        )
        ledger.add_payment(payrun_entry(decision, Outcome.SKIPPED, unknown, paylist_id))
        return
    for number, payment in enumerate(payments, start=1):
        status = str(payment.status)
        if status == "SUCCESS" or (not wait and status == "PENDING"):
            detail = "accepted; settles later (--no-wait)" if status == "PENDING" else None
            ledger.add_payment(payment_entry(decision, number, payment, Outcome.APPLIED, detail))
        elif status == "PENDING":
            note = f"still PENDING at the --settle-timeout (paylist {paylist_id})"
            ledger.add_payment(payment_entry(decision, number, payment, Outcome.SKIPPED, note))
        else:
            cause = payment.cause or status
            retry = "to retry, add a new payrun with this payment"
            detail = f"{status}: {cause}; {retry}"
            ledger.add_payment(payment_entry(decision, number, payment, Outcome.FAILED, detail))


def _ours(
    decision: PayrunDecision,
    description: str,
    payments: Sequence[Payment],
    ledger: Ledger,
    paylist_id: int,
) -> bool:
    """Whether the paylist under the payrun's key holds the payrun's content (its description
    and payments, as `same_payments` compares them); else it is written as failed: a key is
    only a claim, and that paylist is untraced money."""
    if same_payments(decision.payments, payments) and description_key(
        description
    ) == description_key(decision.description):
        return True
    reason = (
        f"paylist {paylist_id} holds this payrun's key but other content (payees, amounts or "
        "descriptions) than the payrun reviewed: a key is only a claim, so nothing of this "
        f"payrun was paid, and paylist {paylist_id} is untraced money (see `reconciler drift`)"
    )
    _refused(ledger, decision, (reason,))
    return False


def _refused(ledger: Ledger, decision: PayrunDecision, reasons: Sequence[str]) -> None:
    ledger.add_payment(payrun_entry(decision, Outcome.FAILED, "; ".join(reasons)))
