"""A payrun's `period`: the payments it computes, once the account's agreements are read.

Pure: the desired state, the agreements (`AgreementIndex`), the live paylists and the plan's
date in; the units to decide out (`reconciler.plan.payruns.Unit`). A period payrun pays every
managed worker with `pay` whose agreement is ACTIVE at the plan, at its pay, described as the
payrun, after its written payments: ordinary payments from here on, so every later check (the
pre-flight, the wallet, `policy.maxPayout`, identity, paid before), the saved plan and the apply
see them as written ones. A worker with `pay` that is not ACTIVE is named in the payrun's notes,
with why; so is a period more than a month from the plan's date (a risk for review).

A period already paid (a paylist of the account holds its key) is not computed again: what was
paid is the payrun (`payruns._paid_period`), so a rate changed since pays nothing again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date

from reconciler.desired.model import DesiredState, DesiredWorker, Payrun, PayrunPayment
from reconciler.plan.agreements import AgreementIndex
from reconciler.plan.payruns import (
    TO_PAY,
    LivePaylist,
    PayrunDecision,
    Unit,
    paylist_key,
    units_of,
)
from reconciler.plan.variance import Variance, variance_of
from reconciler.service.models import WorkerStatus
from reconciler.words import plural

ACTIVE = WorkerStatus.ACTIVE


def period_units(
    desired: DesiredState,
    index: AgreementIndex,
    paylists: Sequence[LivePaylist],
    today: date,
) -> list[Unit]:
    """The units of the files' payruns, each period's payments computed (unless paid)."""
    if all(payrun.period is None for payrun in desired.payruns):
        return units_of(desired.payruns)
    keys = {paylist.idempotence_key for paylist in paylists}
    paid_workers = [worker for worker in desired.workers if worker.pay is not None]
    units: list[Unit] = []
    for payrun in desired.payruns:
        if payrun.period is None or _paid(payrun, keys):
            units += units_of((payrun,))
            continue
        computed, notes = _computed(payrun, paid_workers, index)
        notes = (*_far(payrun.period, today), *notes)
        made = units_of((replace(payrun, payments=(*payrun.payments, *computed)),))
        units += [replace(made[0], notes=notes), *made[1:]]
    return units


def _paid(payrun: Payrun, keys: set[str]) -> bool:
    """Whether a paylist holds the period's key, unsplit or as its first part."""
    return any(paylist_key(payrun.id, part, payrun.period) in keys for part in (None, 1))


def _computed(
    payrun: Payrun, workers: Sequence[DesiredWorker], index: AgreementIndex
) -> tuple[tuple[PayrunPayment, ...], tuple[str, ...]]:
    """The period's payments (in the files' order of workers) and who is not paid, and why."""
    payments: list[PayrunPayment] = []
    unpaid: list[str] = []
    for worker in workers:
        assert worker.pay is not None
        agreements = index.by_id.get(worker.external_id, ())
        if any(agreement.status == ACTIVE for agreement in agreements):
            payments.append(
                PayrunPayment(
                    worker.worker_email, worker.pay, payrun.description, worker.external_id
                )
            )
            continue
        if not agreements:
            why = "no agreement yet (invited by this plan: paid once its agreement is ACTIVE)"
        else:
            shown = ", ".join(f"{a.agreement_id} {a.status}" for a in agreements)
            why = f"its agreement is not ACTIVE ({shown})"
        unpaid.append(f"not paid: {worker.external_id} ({worker.worker_email}): {why}")
    if unpaid:
        unpaid.insert(
            0,
            f"{plural(len(unpaid), 'worker')} with `pay` not paid by period {payrun.period}:",
        )
    return tuple(payments), tuple(unpaid)


def months_between(period: str, today: date) -> int:
    """How many months `period` (YYYY-MM) is after `today`'s month (negative: before)."""
    year, month = (int(part) for part in period.split("-"))
    return (year * 12 + month) - (today.year * 12 + today.month)


def _far(period: str, today: date) -> tuple[str, ...]:
    """A risk note when the period is more than a month from the plan's date."""
    months = months_between(period, today)
    if abs(months) <= 1:
        return ()
    side = "after" if months > 0 else "before"
    return (
        f"risk: period {period} is {plural(abs(months), 'month')} {side} the plan's date "
        f"({today.isoformat()}): check that this month is meant",
    )


def with_variance(
    decisions: Sequence[PayrunDecision], paylists: Sequence[LivePaylist]
) -> tuple[PayrunDecision, ...]:
    """The decisions, each payrun to pay's first paylist with what changed since the payrun
    paid before it (`reconciler.plan.variance`), when the account paid one."""
    if not paylists or not any(d.state == TO_PAY for d in decisions):
        return tuple(decisions)
    by_key = {paylist.idempotence_key: paylist for paylist in paylists}
    newest = max(paylists, key=lambda paylist: paylist.paylist_id)
    groups: dict[str, list[PayrunDecision]] = {}
    for decision in decisions:
        if decision.state == TO_PAY:
            groups.setdefault(decision.payrun_id, []).append(decision)
    found: dict[int, Variance] = {}
    for group in groups.values():
        payments = [p for decision in group for p in decision.payments]
        variance = variance_of(group[0].period, payments, by_key, newest)
        if variance is not None:
            found[id(group[0])] = variance
    return tuple(replace(d, variance=found[id(d)]) if id(d) in found else d for d in decisions)


def with_saved_variance(
    decisions: Sequence[PayrunDecision], saved: Mapping[str, Variance | None]
) -> tuple[PayrunDecision, ...]:
    """The decisions of a resumed plan, each payrun to pay with the variance its saved plan
    kept (`saved`, by address: what the reviewer saw), not one read again from the account,
    which may have paid another payrun since."""
    return tuple(
        replace(d, variance=saved.get(d.address)) if d.state == TO_PAY else d for d in decisions
    )
