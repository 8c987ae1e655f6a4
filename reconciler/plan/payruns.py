"""What a plan decides for each payrun: pay, paid, conflict or refused, and the wallet check.

Pure: the desired payruns, the live paylists (with their payments), the live workers, the wallet
and the plan's own worker changes in; decisions out. A payrun's paylist is found by its
idempotence key, derived from the payrun's identity (its id, or its period: `payrun_keys`) and
part number (more than 1,000 payments are paid as several paylists of at most 1,000, in file
order), so the same payrun gives the same
key on every machine and every run, and is paid once. Its identity does not depend on its
size: a payrun is paid when any paylist holds any key it may have had (unsplit, or any part),
and then judged whole, so a paid payrun that grows past 1,000 payments or shrinks is a conflict.

| live | file | decision |
| --- | --- | --- |
| no paylist with any of its keys | present | pay (unless a pre-flight check refuses it) |
| every part's key, same content | present | paid, with its outcome counts |
| some of its parts' keys, same content, the others absent | present | conflict: paid in part |
| any of its keys, other content or other parts | present | conflict, every part |
| any of its keys | removed | nothing: money is never un-paid |

A key is a claim, never proof: a paylist under it is the payrun's only with the payrun's content
(`same_payments`, payees by `reconciler.payee`). A payrun to pay is paid whole or not at all: a
part the pre-flight refuses refuses every part.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal

from reconciler.desired.model import PayrunPayment
from reconciler.identity import description_key, payment_key
from reconciler.money import grouped
from reconciler.payee import payee_key
from reconciler.plan.payrun_checks import Payees, WalletCheck, preflight, wallet_check
from reconciler.plan.payrun_keys import MAX_PAYMENTS as MAX_PAYMENTS
from reconciler.plan.payrun_keys import LivePaylist as LivePaylist
from reconciler.plan.payrun_keys import Unit as Unit
from reconciler.plan.payrun_keys import parts as parts
from reconciler.plan.payrun_keys import paylist_key as paylist_key
from reconciler.plan.payrun_keys import payrun_identity as payrun_identity
from reconciler.plan.payrun_keys import units_of as units_of
from reconciler.plan.variance import Variance
from reconciler.service.models import Payment, Wallet, Worker
from reconciler.words import counted, plural

TO_PAY, PAID, CONFLICT, REFUSED = "to_pay", "paid", "conflict", "refused"
#: A payrun to pay whose approvals do not cover it (`reconciler.plan.approvals`): nothing of it
#: is sent, the rest of the plan goes, and a later merge whose approvals cover it pays it.
WAITING = "waiting"


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
    #: The agreement each payment is paid to (None: no payee), as the plan judged it.
    agreements: tuple[int | None, ...] = ()
    #: Payees another ACTIVE mailbox looks like (`(payee, look-alike)`): for review.
    look_alikes: tuple[tuple[str, str], ...] = ()
    #: The payrun's `period` (YYYY-MM), when it has one.
    period: str | None = None
    #: What a reviewer of a period payrun is told beside it: a period far from the plan's
    #: date, each worker with `pay` not paid and why (`reconciler.plan.periods`).
    notes: tuple[str, ...] = ()
    #: What changed since the payrun paid before it (on a payrun to pay's first paylist).
    variance: Variance | None = None

    @property
    def address(self) -> str:
        base = f'paylist["{self.payrun_id}"]'
        return base if self.part is None else f"{base}[{self.part}]"

    @property
    def total(self) -> Decimal:
        return sum((payment.amount for payment in self.payments), Decimal("0.00"))


def parts_of(decisions: Sequence[PayrunDecision]) -> dict[str, int]:
    """How many paylists each payrun is paid as (1, or its number of parts), by payrun id."""
    counts: dict[str, int] = {}
    for decision in decisions:
        counts[decision.payrun_id] = max(counts.get(decision.payrun_id, 1), decision.part or 1)
    return counts


def to_pay_phrase(decisions: Sequence[PayrunDecision]) -> str:
    """'1 payrun to pay (1,750.00)', '1 payrun of 2 parts to pay (2,500.00)', '' for none;
    a refused payrun is counted after it. A split payrun is one payrun, whatever its parts."""
    counts = parts_of(decisions)
    to_pay = [d for d in decisions if d.state == TO_PAY]
    paying = dict.fromkeys(d.payrun_id for d in to_pay)
    refused = dict.fromkeys(d.payrun_id for d in decisions if d.state == REFUSED)
    waiting = dict.fromkeys(d.payrun_id for d in decisions if d.state == WAITING)
    phrases = []
    if paying:
        total = sum((d.total for d in to_pay), Decimal("0.00"))
        paylists = sum(counts[payrun_id] for payrun_id in paying)
        if paylists == len(paying):
            shape = ""
        elif len(paying) == 1:
            shape = f" of {paylists} parts"
        else:
            shape = f" ({paylists} paylists)"
        phrases.append(f"{plural(len(paying), 'payrun')}{shape} to pay ({grouped(total)})")
    if refused:
        phrases.append(f"{plural(len(refused), 'payrun')} refused")
    if waiting:
        phrases.append(f"{plural(len(waiting), 'payrun')} waiting for approvals")
    return ", ".join(phrases)


def _content(payments: Iterable[tuple[str, Decimal, str]]) -> Counter[tuple[str, Decimal, str]]:
    return Counter(
        payment_key(email, amount, description) for email, amount, description in payments
    )


def decide_units(
    units: Sequence[Unit],
    paylists: Sequence[LivePaylist],
    workers: Sequence[Worker],
    wallet: Wallet | None,
    *,
    closing: Collection[int] = (),
    max_payout: Decimal | None = None,
) -> tuple[tuple[PayrunDecision, ...], WalletCheck | None]:
    """Each paylist's decision against the live account, and the wallet check. `closing`: the
    agreements this plan inactivates or replaces (`closed_agreements`); their payees are refused.

    A payrun is judged whole: when any paylist of the account holds one of its possible keys
    (unsplit, or any part), it was paid, and it is paid as it stands (every part there with
    the same content) or in conflict, every part of it, so nothing of an edited payrun is sent.
    A payrun to pay is checked whole too: a part refused refuses every part (`_whole`).
    """
    by_key = {paylist.idempotence_key: paylist for paylist in paylists}
    payees = Payees(workers, closing)
    succeeded = paid_before(paylists)
    known_payees = {payee_key(p.worker_email) for paylist in paylists for p in paylist.payments}
    decisions: list[PayrunDecision] = []
    planned: dict[tuple[str, Decimal, str], str] = {}  # the payments this plan pays, by payrun
    for group, possible in _payruns_with_keys(units, by_key):
        found = {part: by_key[key] for part, key in enumerate(possible) if key in by_key}
        if found:
            decisions += _against_live(group, found)
            continue
        judged = []
        for unit in group:
            key = unit.key
            checked = preflight(
                unit.payments, payees, succeeded, wallet, planned, unit.payrun_id, unit.agreements
            )
            payments = checked.payments
            reasons = checked.reasons
            if not unit.payments:  # a period that found no ACTIVE worker with `pay`
                reasons = (*reasons, "nothing to pay: no worker with `pay` is ACTIVE")
            new = dict.fromkeys(p.email for p in payments if payee_key(p.email) not in known_payees)
            judged.append(
                PayrunDecision(
                    unit.payrun_id,
                    unit.part,
                    key,
                    unit.description,
                    payments,
                    REFUSED if reasons else TO_PAY,
                    reasons,
                    new_payees=tuple(new),
                    agreements=checked.agreements,
                    look_alikes=checked.look_alikes,
                    period=unit.period,
                    notes=unit.notes,
                )
            )
        decisions += _whole(judged)
    total = sum((d.total for d in decisions if d.state == TO_PAY), Decimal("0.00"))
    return tuple(decisions), wallet_check(total, wallet, max_payout)


def _whole(parts: list[PayrunDecision]) -> list[PayrunDecision]:
    """A payrun is paid whole or not at all: when any part is refused, every part is, the
    others saying which part stops them."""
    refused = [d.part for d in parts if d.state == REFUSED]
    if not refused or len(parts) == 1:
        return parts
    which = ", ".join(str(part) for part in refused)
    reason = (
        f"part {which} of this payrun is refused (its reasons are listed there): a payrun is "
        "paid whole or not at all, so no part of it is paid"
    )
    return [
        d if d.state == REFUSED else replace(d, state=REFUSED, reasons=(reason,)) for d in parts
    ]


def paid_before(paylists: Sequence[LivePaylist]) -> dict[tuple[str, Decimal, str], Payment]:
    """Every payment of the account that counts as paid, by `payment_key`: SUCCESS, and in
    flight too (PENDING, or any status but FAILED): a payment the service has not settled yet
    may still succeed, so paying it again would pay it twice. The earliest one for each key."""
    return paid_payments(p for paylist in paylists for p in paylist.payments)


def paid_payments(payments: Iterable[Payment]) -> dict[tuple[str, Decimal, str], Payment]:
    """`paid_before` of payments however read (apply reads them again before each paylist)."""
    found: dict[tuple[str, Decimal, str], Payment] = {}
    for p in payments:
        if str(p.status) != "FAILED":
            key = payment_key(p.worker_email, p.amount, p.description)
            if key not in found or str(found[key].status) != "SUCCESS":
                found[key] = p
    return found


def _payruns_with_keys(
    units: Sequence[Unit], account_keys: Collection[str]
) -> list[tuple[list[Unit], list[str]]]:
    """Each payrun's units (grouped by its id as identities compare) with every key it may
    have had, by part number (`_possible_keys`)."""
    groups: dict[str, list[Unit]] = {}
    for unit in units:
        groups.setdefault(unit.identity, []).append(unit)
    # Keys of the account no unit asks for: only these can be parts a payrun had before it
    # grew or shrank, so only as many more parts as there are of them are worth deriving.
    asked = {unit.key for unit in units}
    unexplained = sum(1 for key in account_keys if key not in asked)
    return [(group, _possible_keys(group, unexplained)) for group in groups.values()]


def _possible_keys(group: Sequence[Unit], unexplained: int) -> list[str]:
    """Every key a payrun may have had, by part number: unsplit (part 0) and parts 1 up to its
    present count plus the account's paylists no unit asks for."""
    first = group[0]
    last = max(unit.part or 0 for unit in group) + unexplained
    return [paylist_key(first.payrun_id, number, first.period) for number in range(last + 1)]


def traced_paylists(units: Sequence[Unit], paylists: Iterable[LivePaylist]) -> set[int]:
    """The paylists a payrun of the files paid: under the key of one of its paylists (as the
    payrun is split now) and with that paylist's content (`_same_content`). A key is a claim
    anyone may make (it is derived from the payrun's public id): a paylist under it with other
    content, a resized payrun's included, is not money paid through payruns."""
    return set(traced_units(units, paylists))


def traced_units(units: Sequence[Unit], paylists: Iterable[LivePaylist]) -> dict[int, Unit]:
    """The unit (payrun and part) each traced paylist paid, by paylist id (`traced_paylists`)."""
    asked = {unit.key: unit for unit in units}
    return {
        live.paylist_id: unit
        for live in paylists
        if (unit := asked.get(live.idempotence_key)) is not None
        and (_same_content(unit, live) if unit.period is None else _paid_with(unit, live))
    }


def _paid_with(unit: Unit, live: LivePaylist) -> bool:
    """A period's paylist is the payrun's when it holds the payrun's description and its
    written payments (`_paid_period`: what the period computed then is what it paid)."""
    if description_key(unit.description) != description_key(live.description):
        return False
    written = _content((p.email, p.amount, p.description) for p in unit.payments)
    return not written - _content((p.worker_email, p.amount, p.description) for p in live.payments)


def _against_live(group: Sequence[Unit], found: dict[int, LivePaylist]) -> list[PayrunDecision]:
    """A paid payrun: paid when every part is there with the same content, else all in conflict.
    A period's is compared with what was paid (`_paid_period`)."""
    if group[0].period is not None:
        return _paid_period(group, found)
    asked = {unit.part or 0: unit for unit in group}
    same_parts = found.keys() == asked.keys()
    changed = [
        live.paylist_id
        for number, live in found.items()
        if number in asked and not _same_content(asked[number], live)
    ]
    if same_parts and not changed:
        reason = None
    elif changed:
        reason = (
            f"paylist {', '.join(map(str, changed))} was paid with this payrun's key and other "
            "content: a paid payrun cannot change; add a new payrun for a correction"
        )
    elif found.keys() < asked.keys():
        missing = sorted(asked.keys() - found.keys())
        reason = (
            f"this payrun was paid in part: {_shape(found)} (paylist "
            f"{', '.join(str(live.paylist_id) for live in found.values())}) paid, "
            f"{_shape(dict.fromkeys(missing))} never: an apply before payruns were paid whole "
            "stopped between its parts, or parts were added after it was paid (a paid payrun "
            "cannot change, and the two cannot be told apart); nothing more of it is paid: to "
            "pay the rest, add a new payrun with the payments of the missing part, and keep "
            "this one as it is"
        )
    else:
        reason = (
            f"this payrun was paid as {_shape(found)} (paylist "
            f"{', '.join(str(live.paylist_id) for live in found.values())}) and now asks for "
            f"{_shape(asked)} of at most {MAX_PAYMENTS:,} payments: a paid "
            "payrun cannot change, whatever its size (a part added after it was paid cannot be "
            "told from a part an interrupted apply never sent); add a new payrun for the rest "
            "or a correction"
        )
    decisions = []
    for unit in group:
        live = found.get(unit.part or 0) or next(iter(found.values()))
        key = unit.key
        outcomes = (
            dict(Counter(str(p.status) for p in live.payments)) if (unit.part or 0) in found else {}
        )
        state, reasons = (PAID, ()) if reason is None else (CONFLICT, (reason,))
        decisions.append(
            PayrunDecision(
                unit.payrun_id,
                unit.part,
                key,
                unit.description,
                unit.payments,
                state,
                reasons,
                outcomes,
                live.paylist_id,
            )
        )
    return decisions


def _paid_period(group: Sequence[Unit], found: dict[int, LivePaylist]) -> list[PayrunDecision]:
    """A period payrun whose paylists exist: what they paid is the payrun (a rate changed
    since, a worker joined or left, pays nothing again and is no conflict); its written
    payments must be among them, else it is in conflict (a one-off added after it was paid)."""
    first = group[0]
    live = [found[number] for number in sorted(found)]
    paid = [p for paylist in live for p in paylist.payments]
    written = [p for unit in group for p in unit.payments]  # a paid period is not expanded
    missing = _content((p.email, p.amount, p.description) for p in written) - _content(
        (p.worker_email, p.amount, p.description) for p in paid
    )
    reasons: tuple[str, ...] = ()
    if missing:
        reasons = (
            f"period {first.period} was paid (paylist "
            f"{', '.join(str(paylist.paylist_id) for paylist in live)}) without "
            f"{plural(sum(missing.values()), 'written payment')} of this payrun: a paid period "
            "cannot change; add a new payrun for a correction",
        )
    return [
        PayrunDecision(
            first.payrun_id,
            number or None,
            paylist_key(first.payrun_id, number, first.period),
            paylist.description,
            tuple(PayrunPayment(p.worker_email, p.amount, p.description) for p in paylist.payments),
            CONFLICT if reasons else PAID,
            reasons,
            dict(Counter(str(p.status) for p in paylist.payments)),
            paylist.paylist_id,
            period=first.period,
        )
        for number, paylist in zip(sorted(found), live, strict=True)
    ]


def _same_content(unit: Unit, live: LivePaylist) -> bool:
    return same_payments(unit.payments, live.payments) and description_key(
        unit.description
    ) == description_key(live.description)


def same_payments(mine: Iterable[PayrunPayment], theirs: Iterable[Payment]) -> bool:
    """Whether a paylist's payments are the payrun's: the same payees (`payee_key`), amounts
    and descriptions (`payment_key`), as many times each. A paylist found by its key is the
    payrun's only when this holds: a key is a claim anyone may make. The same text, as many
    times each, is the same content whatever the rule makes of it: asked first, as it is far
    cheaper than the rule (a payrun's paylist nearly always holds the text it was sent)."""
    mine, theirs = list(mine), list(theirs)
    written = Counter((p.email, p.amount, p.description) for p in mine)
    if written == Counter((p.worker_email, p.amount, p.description) for p in theirs):
        return True
    ours = _content((p.email, p.amount, p.description) for p in mine)
    return ours == _content((p.worker_email, p.amount, p.description) for p in theirs)


def _shape(parts: Mapping[int, object]) -> str:
    """How a payrun was (or would be) paid: one paylist, or numbered parts."""
    numbers = sorted(number for number in parts if number)
    pieces = ["one paylist"] if 0 in parts else []
    if numbers:
        shown = ", ".join(map(str, numbers[:5])) + (", ..." if len(numbers) > 5 else "")
        pieces.append(f"{counted(len(numbers))} part{'s' if len(numbers) > 1 else ''} ({shown})")
    return " and ".join(pieces)
