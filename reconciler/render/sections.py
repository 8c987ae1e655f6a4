"""The plan cut into sections ranked by risk: what a reviewer must see comes first.

A section has a risk rank (lower is shown first), a title, and items (one change, one payrun,
one drifted worker: a few lines each, never split). Sections marked `may_cut=False` are the
risky ones (conflicts, inactivations and replacements, webhook changes, payruns): a renderer
that must fit a limit keeps them whole and cuts only the low-risk tail (invitations, drift,
unmanaged workers), whole items at a time. A new kind of finding is one more builder in
`BUILDERS` with its rank and flag; the renderers need no change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from reconciler.money import grouped
from reconciler.plan.changes import Inactivate, Invite, Replace, WebhookCreate, WebhookUpdate
from reconciler.plan.model import Plan
from reconciler.plan.payruns import TO_PAY, PayrunDecision, parts_of
from reconciler.render.base import clean, show_paid
from reconciler.render.text import (
    Line,
    approval_lines,
    change_lines,
    closed_line,
    conflict_line,
    drift_lines,
    ignored_line,
    look_alike_lines,
    payment_lines,
    unmanaged_lines,
    variance_lines,
)
from reconciler.words import counted, plural

#: A payrun with at most this many payments is shown payment by payment.
PAYMENTS_LISTED = 50
#: A larger payrun shows its largest payments, this many.
LARGEST_SHOWN = 10
#: Lists inside one item (new payees, reasons) stop after this many, with a count of the rest.
LIST_CAP = 50

# Risk ranks: room is left between them for sections other parts of the plan add.
APPROVALS = 3  # who must approve the money, and who has: dual control comes first
VARIANCE = 5  # what changed since the last payrun paid: a payroll review's first question
CONFLICTS = 10
CLOSED = 15
REMOVALS = 20
WEBHOOK = 30
PAYRUNS = 40
WARNINGS = 50
INVITATIONS = 60
DRIFT = 70
IGNORED = 75
UNMANAGED = 80

Item = tuple[Line, ...]


@dataclass(frozen=True, slots=True)
class Section:
    """One part of the plan: its title, risk rank, items, and whether a limit may cut it."""

    title: str
    risk: int
    items: tuple[Item, ...]
    noun: str  # what one item is, for "2,812 of 3,000 invitations not shown"
    may_cut: bool = True


@dataclass(frozen=True, slots=True)
class View:
    """What the sections are built for: unmanaged workers listed or only counted."""

    show_unmanaged: bool = False


Builder = Callable[[Plan, View], Iterator[Section]]


def sections(plan: Plan, view: View) -> list[Section]:
    """Every non-empty section of the plan, riskiest first."""
    found = [section for build in BUILDERS for section in build(plan, view) if section.items]
    return sorted(found, key=lambda section: section.risk)


def _variance(plan: Plan, view: View) -> Iterator[Section]:
    """Each payrun to pay beside the one paid before it, before any list of payments; each
    list capped, so it fits the comment whatever the payroll's size."""
    items = tuple(
        (Line(f"  {clean(decision.address)}"), *variance_lines(decision.variance, LIST_CAP))
        for decision in plan.to_pay
        if decision.variance is not None
    )
    title = f"What changed since the last payrun paid ({counted(len(items))})"
    yield Section(title, VARIANCE, items, "payrun", False)


def _approvals(plan: Plan, view: View) -> Iterator[Section]:
    """Per payrun to pay (or waiting), what its approvals policy needs and what it has, and
    the note when they were not judged here; with no policy, that any merge pays."""
    items = tuple((line,) for line in approval_lines(plan))
    yield Section(f"Approvals ({counted(len(items))})", APPROVALS, items, "approval", False)


def _conflicts(plan: Plan, view: View) -> Iterator[Section]:
    items: list[Item] = [(conflict_line(conflict),) for conflict in plan.conflicts]
    parts = parts_of(plan.payruns)
    items += [_payrun_item(d, parts) for d in plan.payruns if d.state != TO_PAY and d.reasons]
    title = f"Conflicts and refused payruns ({counted(len(items))})"
    yield Section(title, CONFLICTS, tuple(items), "conflict", False)


def _closed(plan: Plan, view: View) -> Iterator[Section]:
    items = tuple((closed_line(closed),) for closed in plan.closed_entries)
    title = f"Closed in the service, not invited again ({counted(len(items))})"
    yield Section(title, CLOSED, items, "worker closed in the service", False)


def _removals(plan: Plan, view: View) -> Iterator[Section]:
    items = tuple(
        _change_item(change) for change in plan.changes if isinstance(change, Inactivate | Replace)
    )
    title = f"Inactivations and replacements ({counted(len(items))})"
    yield Section(title, REMOVALS, items, "inactivation or replacement", False)


def _webhook(plan: Plan, view: View) -> Iterator[Section]:
    items = tuple(
        _change_item(change)
        for change in plan.changes
        if isinstance(change, WebhookCreate | WebhookUpdate)
    )
    yield Section("Webhook", WEBHOOK, items, "webhook change", False)


def _payruns(plan: Plan, view: View) -> Iterator[Section]:
    parts = parts_of(plan.payruns)
    items = tuple(_payrun_item(decision, parts) for decision in plan.to_pay)
    payruns = len(parts_of(plan.to_pay))  # a split payrun is one payrun of N parts
    count = counted(payruns)
    if payruns != len(items):
        count += f", in {counted(len(items))} paylists"
    yield Section(f"Payruns to pay ({count})", PAYRUNS, items, "payrun", False)


def _warnings(plan: Plan, view: View) -> Iterator[Section]:
    items = tuple((Line(clean(warning)),) for warning in plan.warnings)
    yield Section(f"Warnings ({counted(len(items))})", WARNINGS, items, "warning")


def _invitations(plan: Plan, view: View) -> Iterator[Section]:
    items = tuple(_change_item(c) for c in plan.changes if isinstance(c, Invite))
    yield Section(f"Invitations ({counted(len(items))})", INVITATIONS, items, "invitation")


def _drift(plan: Plan, view: View) -> Iterator[Section]:
    items = tuple(tuple(drift_lines(drift)) for drift in plan.drift_entries)
    yield Section(f"Drift ({counted(len(items))})", DRIFT, items, "drifted worker")


def _ignored(plan: Plan, view: View) -> Iterator[Section]:
    items = tuple((ignored_line(ignored),) for ignored in plan.ignored)
    yield Section(f"Ignored drift ({counted(len(items))})", IGNORED, items, "ignored field")


def _unmanaged(plan: Plan, view: View) -> Iterator[Section]:
    if not view.show_unmanaged:
        return
    lines = list(unmanaged_lines(plan.unmanaged, listed=True))[1:]  # the count is the title
    items = tuple((line,) for line in lines)
    yield Section(f"Unmanaged ({counted(len(items))})", UNMANAGED, items, "unmanaged agreement")


#: The sections, each with its rank; `sections` sorts them, so order here does not matter.
BUILDERS: tuple[Builder, ...] = (
    _approvals,
    _variance,
    _conflicts,
    _closed,
    _removals,
    _webhook,
    _payruns,
    _warnings,
    _invitations,
    _drift,
    _ignored,
    _unmanaged,
)


def _change_item(change: Invite | Inactivate | Replace | WebhookCreate | WebhookUpdate) -> Item:
    return tuple(change_lines(change))


def _payrun_item(decision: PayrunDecision, parts: dict[str, int]) -> Item:
    """A payrun for review: each payee and amount when it has few payments; else its count,
    total, largest payments and new payees. A refused or conflicting one with its reasons. A
    part of a split payrun says which part of how many."""
    address = label = clean(decision.address)
    if decision.part is not None:
        label += f" (part {decision.part} of {counted(parts[decision.payrun_id])})"
    count = len(decision.payments)
    head = f"{plural(count, 'payment')}, total {grouped(decision.total)}"
    notes = _capped([Line(f"  ! {clean(note)}", "!") for note in decision.notes], "note")
    if decision.state != TO_PAY:
        word = decision.state.replace("_", " ")
        lines = [Line(f"  ! {label} ({word}, {head}), nothing is paid:", "!")]
        lines += _capped([Line(f"      - {clean(r)}", "!") for r in decision.reasons], "reason")
        return (*lines, *notes)
    lines = [Line(f"  # {label} will be paid: {head} (key {decision.key})"), *notes]
    lines.append(Line(f"  + {address} {{", "+"))
    lines.append(Line(f"      description = {show_paid(decision.description)}", "+"))
    if count <= PAYMENTS_LISTED:
        lines += payment_lines(decision.payments)
    else:
        largest = sorted(decision.payments, key=lambda p: (-p.amount, p.email))[:LARGEST_SHOWN]
        lines.append(
            Line(f"      # the {counted(len(largest))} largest of {counted(count)} payments:")
        )
        lines += payment_lines(largest)
    lines.append(Line(f"      total       = {grouped(decision.total)}", "+"))
    lines.append(Line("    }"))
    if decision.new_payees and count > PAYMENTS_LISTED:
        new = decision.new_payees
        lines.append(Line(f"  # {plural(len(new), 'payee')} new to this account (never paid):"))
        lines += _capped([Line(f"      + {show_paid(email)}", "+") for email in new], "new payee")
    elif decision.new_payees:
        emails = ", ".join(show_paid(email) for email in decision.new_payees)
        lines.append(Line(f"  # new to this account (never paid): {emails}"))
    return (*lines, *_capped(look_alike_lines(decision), "look-alike payee"))


def _capped(lines: list[Line], noun: str) -> list[Line]:
    if len(lines) <= LIST_CAP:
        return lines
    rest = len(lines) - LIST_CAP
    return [*lines[:LIST_CAP], Line(f"      ... and {plural(rest, 'more ' + noun)} (full plan)")]
