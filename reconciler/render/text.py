"""The plan as Terraform prints it: `+` invite, `-` inactivate, `~` update, `-/+` replace."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import click

from reconciler.desired.model import PayrunPayment
from reconciler.money import grouped
from reconciler.plan.changes import (
    Change,
    ClosedInService,
    Conflict,
    FieldChange,
    Invite,
    Replace,
    Resource,
    Unmanaged,
    WebhookCreate,
)
from reconciler.plan.model import ClosedEntry, DriftEntry, Ignored, Plan
from reconciler.plan.payruns import (
    CONFLICT,
    PAID,
    REFUSED,
    TO_PAY,
    WAITING,
    PayrunDecision,
    parts_of,
    to_pay_phrase,
)
from reconciler.plan.variance import Variance
from reconciler.render.base import clean, show, show_address, show_paid, strict_headline
from reconciler.render.money import money_text_lines
from reconciler.render.wrap import wrap
from reconciler.words import counted, plural

_SYMBOL = {("create",): "+", ("delete",): "-", ("update",): "~", ("delete", "create"): "-/+"}
_STYLE: dict[str, dict[str, Any]] = {
    "+": {"fg": "green"},
    "-": {"fg": "red"},
    "~": {"fg": "yellow"},
    "-/+": {"fg": "magenta"},
    "!": {"fg": "red", "bold": True},
    "title": {"bold": True},
}


@dataclass(frozen=True, slots=True)
class Line:
    """One line of the plan and how to colour it on a terminal (`None`: plain)."""

    text: str
    style: str | None = None
    hang: tuple[int, ...] = ()  # columns a wrapped continuation may start under (see `wrap`)


class TextRenderer:
    """The human-readable plan; colour only when asked for (the CLI asks on a terminal)."""

    def __init__(
        self,
        *,
        color: bool = False,
        show_unmanaged: bool = False,
        strict: bool = False,
        width: int | None = None,
    ) -> None:
        self._color = color
        self._show_unmanaged = show_unmanaged
        self._strict = strict
        self._width = width  # a terminal's: lines are wrapped between words to fit it

    def render(self, plan: Plan) -> str:
        lines = plan_lines(plan, show_unmanaged=self._show_unmanaged, strict=self._strict)
        return lines_text(lines, width=self._width, color=self._color) + "\n"


def lines_text(lines: Iterable[Line], *, width: int | None, color: bool = False) -> str:
    """Lines as text `width` columns wide (wrapped between words; None: one line an item),
    coloured when asked."""
    out = []
    for line in lines:
        style = _STYLE.get(line.style or "")
        for text in wrap(line.text, width, line.hang):
            out.append(click.style(text, **style) if color and style else text)
    return "\n".join(out)


def plan_lines(plan: Plan, *, show_unmanaged: bool = False, strict: bool = False) -> Iterator[Line]:
    """The plan, line by line, with no colour (`strict`: as `drift --strict` judges it)."""
    yield Line(strict_headline(plan) if strict else plan.headline, "title")
    if plan.closed_entries:
        yield Line("")
        yield Line(
            "Closed in the service: HR ended these workers' agreements; they are not invited "
            "again.",
            "title",
        )
        yield from (closed_line(closed) for closed in plan.closed_entries)
    for change in plan.changes:
        yield Line("")
        yield from change_lines(change)
    yield from payrun_lines(plan)
    if plan.drift_entries:
        yield Line("")
        yield Line(
            "Drift: the service cannot change a worker in place; "
            "--replace ID inactivates it and invites it again.",
            "title",
        )
        for drift in plan.drift_entries:
            yield from drift_lines(drift)
    if plan.ignored:
        yield Line("")
        yield Line("Ignored drift: hidden by ignore rules until their end (never failing).")
        yield from (ignored_line(ignored) for ignored in plan.ignored)
    if plan.conflicts:
        yield Line("")
        yield Line("Conflicts: reported, nothing is done to them.", "title")
        for conflict in plan.conflicts:
            yield conflict_line(conflict)
    yield Line("")
    yield from unmanaged_lines(plan.unmanaged, listed=show_unmanaged)
    if plan.history:
        yield Line(
            f"History: {plural(len(plan.history), 'past agreement')} (ENDED or INACTIVATED) "
            "of managed workers, never touched."
        )
    for warning in plan.warnings:
        yield Line(f"Warning: {clean(warning)}", "~")
    for problem in plan.safety.problems:
        yield Line(f"Unsafe: {clean(problem)}; apply refuses without --force.", "!")
    if plan.money is not None:
        yield Line("")
        for text in money_text_lines(plan.money):
            yield Line(text, "!" if text.startswith("  !") else None)
    yield Line("")
    review = review_first(plan)
    if review:
        yield Line(f"Review first: {review}.", "!")
    yield Line(f"Plan: {plan.summary.line()}{payrun_phrase(plan)}{_money_phrase(plan)}.", "title")
    yield Line(_emails_line(plan.summary.invitation_emails))


def _money_phrase(plan: Plan) -> str:
    """'; money: 1 untraced paylist (300.00), ...' when money needs action, else nothing."""
    if plan.money is None or not plan.money.needs_action:
        return ""
    return f"; money: {plan.money.line()}"


def payrun_phrase(plan: Plan) -> str:
    """', 1 payrun to pay (1,750.00)' for the summary line (a split payrun counted once, with
    its parts), ', 0 payruns to pay (0.00)' when none is to pay, nothing without payruns."""
    if not plan.payruns:
        return ""
    return ", " + (to_pay_phrase(plan.payruns) or "0 payruns to pay (0.00)")


def review_first(plan: Plan) -> str:
    """The risky part of the plan, riskiest first, as the comment orders it: conflicts (and
    refused payruns), inactivations and replacements, the webhook, the payruns to pay."""
    summary = plan.summary
    blocked = sum(decision.state in (CONFLICT, REFUSED) for decision in plan.payruns)
    waiting = len({d.payrun_id for d in plan.payruns if d.state == WAITING})
    parts = []
    if summary.conflicts or blocked:
        parts.append(f"{counted(summary.conflicts + blocked)} in conflict or refused")
    if waiting:
        parts.append(f"{plural(waiting, 'payrun')} waiting for approvals")
    if plan.closed_entries:
        parts.append(f"{counted(len(plan.closed_entries))} closed in the service")
    if summary.inactivate:
        parts.append(f"{counted(summary.inactivate)} to inactivate")
    if summary.replace:
        parts.append(f"{counted(summary.replace)} to replace")
    if summary.create or summary.update:
        parts.append("the webhook " + ("created" if summary.create else "updated"))
    if plan.to_pay:
        parts.append(to_pay_phrase(plan.to_pay))
    return ", ".join(parts)


def approval_lines(plan: Plan, *, waiting: bool = True) -> list[Line]:
    """What each payrun to pay (or waiting) needs and has under the approvals policy, risk
    first: `! paylist["X"]: needs 2 of alice, bob, dave: 1 (bob at a1b2c3d)`; the note when
    they were not judged here; with no policy, that any merge pays."""
    approvals = plan.approvals
    if approvals is None:
        return []
    if approvals.policy is None:
        return [Line(f"  ! {clean(approvals.note)}", "!")] if approvals.note else []
    lines = []
    held = {d.payrun_id for d in plan.payruns if d.state == WAITING}
    for verdict in approvals.verdicts:
        if not waiting and verdict.payrun in held:
            continue  # its own lines say what it waits for
        mark, sign = ("=", "") if verdict.covered and verdict.rule is not None else ("!", "!")
        if verdict.rule is None and verdict.covered:
            mark = "#"
        said = verdict.needs_has()
        if not verdict.covered and verdict.rule is not None and approvals.note:
            said = f"{verdict.rule.needs()}: {approvals.note}"
        address = clean(f'paylist["{verdict.payrun}"]')
        lines.append(Line(f"  {mark} {address}: {clean(said)}", sign))
    return lines


def payrun_lines(plan: Plan) -> Iterator[Line]:
    """Each payrun's paylist: to pay with its payments and total, paid, in conflict, refused;
    first, what their approvals need and have."""
    counts_of = parts_of(plan.payruns)
    if plan.payruns and (approved := approval_lines(plan, waiting=False)):
        yield Line("")
        yield Line("Approvals:")
        yield from approved
    for decision in plan.payruns:
        yield Line("")
        yield from (Line(f"  ! {clean(note)}", "!") for note in decision.notes)
        address = clean(decision.address)
        part = (
            ""
            if decision.part is None
            else f", part {decision.part} of {counts_of[decision.payrun_id]} of one payrun"
        )
        if decision.state == TO_PAY:
            if decision.variance is not None:
                yield from variance_lines(decision.variance)
            yield Line(f"  # {address} will be paid (key {decision.key}{part})")
            yield Line(f"  + {address} {{", "+")
            yield Line(f"      description = {show_paid(decision.description)}", "+")
            yield from payment_lines(decision.payments)
            yield Line(f"      total       = {grouped(decision.total)}", "+")
            yield Line("    }")
            yield from look_alike_lines(decision)
            continue
        counts = ", ".join(
            f"{counted(n)} {status}" for status, n in sorted(decision.outcomes.items())
        )
        if decision.state == PAID:
            yield Line(f"  = {address}: paid as paylist {decision.paylist_id} ({counts})")
            continue
        word = {CONFLICT: "in conflict", WAITING: "waiting for approvals"}.get(
            decision.state, "refused"
        )
        yield Line(f"  ! {address} is {word}, nothing is paid:", "!")
        for reason in decision.reasons:
            yield Line(f"      - {clean(reason)}", "!")
    wallet = plan.wallet
    if wallet is not None and plan.payruns:
        yield Line("")
        yield Line(
            f"Wallet: balance {grouped(wallet.balance)} (over-draft limit "
            f"{grouped(wallet.over_draft_limit)}), {grouped(wallet.total_to_pay)} to pay, "
            f"{grouped(wallet.balance_after)} after"
        )
        for problem in wallet.problems:
            yield Line(f"Unsafe: {clean(problem)}; apply refuses the payruns without --force.", "!")


def look_alike_lines(decision: PayrunDecision) -> list[Line]:
    """A payee another ACTIVE mailbox looks like, for review: both escaped, so they differ."""
    return [
        Line(
            f"  ! review the payee {show_paid(payee)}: {show_paid(other)}, another ACTIVE "
            "worker's mailbox, looks alike (the payment goes to the first)",
            "!",
        )
        for payee, other in decision.look_alikes
    ]


def variance_lines(variance: Variance, cap: int | None = None) -> list[Line]:
    """What changed since the payrun paid before: both totals, then payees added, no longer
    paid and amounts changed (before -> after); each list at most `cap` long, with a count."""
    lines = [
        Line(
            f"  # what changed since {variance.before}: total {grouped(variance.before_total)} "
            f"-> {grouped(variance.after_total)}; {counted(len(variance.added))} added, "
            f"{counted(len(variance.removed))} no longer paid, "
            f"{counted(len(variance.changed))} changed"
        )
    ]
    rows = [
        [Line(f"      + added: {show_paid(e)} {grouped(a)}", "+") for e, a in variance.added],
        [
            Line(f"      - no longer paid: {show_paid(e)} (was {grouped(a)})", "-")
            for e, a in variance.removed
        ],
        [
            Line(f"      ~ changed: {show_paid(e)} {grouped(b)} -> {grouped(a)}", "~")
            for e, b, a in variance.changed
        ],
    ]
    for found in rows:
        shown = found if cap is None else found[:cap]
        lines += shown
        if len(found) > len(shown):
            lines.append(Line(f"      ... and {counted(len(found) - len(shown))} more (full plan)"))
    return lines


def payment_lines(payments: Sequence[PayrunPayment]) -> list[Line]:
    """Payments one a line: the amounts right-aligned, the emails padded so that the
    descriptions start in one column (and a wrapped description continues under it)."""
    emails = [show_paid(payment.email) for payment in payments]
    width = max(map(len, emails), default=0)
    payee = len("      + ") + 14 + 2
    columns = (payee + width + 2, payee)  # under the description, else under the payee
    return [
        Line(
            f"      + {p.amount:>14,.2f}  {email.ljust(width)}  {show_paid(p.description)}",
            "+",
            columns,
        )
        for p, email in zip(payments, emails, strict=True)
    ]


def change_lines(change: Change) -> Iterator[Line]:
    """One change: a comment saying what happens, then the resource with its fields."""
    symbol = _SYMBOL[change.actions]
    address = show_address(change.address)
    comment = f"  # {address} will be {change.verb}"
    if isinstance(change, Invite) and change.history:
        past = ", ".join(f"{h.agreement.agreement_id} {h.agreement.status}" for h in change.history)
        comment += f" (past agreement: {past})"
    yield Line(comment)
    yield Line(f"  {symbol} {address} {{", symbol)
    if isinstance(change, Replace):
        yield from _field_lines(change.fields, indent="      ")
        yield from _resource_lines("+", change.after, skip=frozenset(f.name for f in change.fields))
    elif change.fields:
        yield from _field_lines(change.fields, indent="      ")
    elif isinstance(change, Invite | WebhookCreate):
        yield from _resource_lines("+", change.after)
    else:
        yield from _resource_lines("-", change.before)
    yield Line("    }")


def drift_lines(drift: DriftEntry) -> Iterator[Line]:
    yield Line(f"  ~ {show_address(drift.address)} (agreement {drift.agreement_id})", "~")
    yield from _field_lines(drift.fields, indent="      ")


def ignored_line(ignored: Ignored) -> Line:
    rule = ignored.rule
    where = clean(show_address(ignored.address))
    return Line(
        f"  # {where}: until {rule.until.isoformat()}, owner {clean(rule.owner)} "
        f"({clean(rule.reason)})"
    )


def closed_line(closed: ClosedInService | ClosedEntry) -> Line:
    return Line(f"  ! {clean(show_address(closed.address))}: {clean(closed.reason)}", "!")


def conflict_line(conflict: Conflict) -> Line:
    where = show_address(conflict.address) if conflict.address else f"email {conflict.email}"
    return Line(f"  ! {clean(where)}: {clean(conflict.reason)}", "!")


def unmanaged_lines(unmanaged: tuple[Unmanaged, ...], *, listed: bool) -> Iterator[Line]:
    if not unmanaged:
        return
    count = plural(len(unmanaged), "open agreement")
    if not listed:
        yield Line(f"Unmanaged: {count} not owned by this file (--show-unmanaged lists them).")
        return
    yield Line(f"Unmanaged: {count} not owned by this file, never touched:")
    for item in unmanaged:
        agreement = item.agreement
        external_id = _shown("externalId", agreement.external_id)
        yield Line(
            f"    agreement {agreement.agreement_id}  externalId {external_id}  "
            f"{_show_email(agreement.email)}  {agreement.status}  ({item.reason})"
        )


def _emails_line(count: int) -> str:
    if not count:
        return "Apply would send no invitation e-mails."
    return f"Apply would send {plural(count, 'invitation e-mail')}."


def _field_lines(fields: tuple[FieldChange, ...], *, indent: str) -> Iterator[Line]:
    for field in fields:
        if field.before is None:
            yield Line(f"{indent}+ {field.name}: {_shown(field.name, field.after)}", "+")
        elif field.after is None:
            yield Line(f"{indent}- {field.name}: {_shown(field.name, field.before)}", "-")
        else:
            before, after = _shown(field.name, field.before), _shown(field.name, field.after)
            yield Line(f"{indent}~ {field.name}: {before} -> {after}", "~")


def _shown(name: str, value: Any) -> str:
    """A field's value as the plan shows it: an email as payees are (`_show_email`), and an
    externalId so too (every non-ASCII character escaped: look-alikes read apart)."""
    return _show_email(value) if name in ("workerEmail", "externalId") else show(value)


def _show_email(value: Any) -> str:
    """An email with every non-ASCII character escaped, as a payee's is (`show_paid`): an
    invitation to `ada@ex<U+0430>mple.com`, a domain anyone may register, read as ada's."""
    return show_paid(value) if isinstance(value, str) else show(value)


def _resource_lines(
    symbol: str, resource: Resource | None, skip: frozenset[str] = frozenset()
) -> Iterator[Line]:
    pairs = [(name, value) for name, value in _flatten(resource or {}) if name not in skip]
    width = max((len(name) for name, _ in pairs), default=0)
    for name, value in pairs:
        yield Line(f"      {symbol} {name.ljust(width)} = {_shown(name, value)}", symbol)


def _flatten(resource: Resource) -> Iterator[tuple[str, Any]]:
    """Resource fields as `name = value` pairs; webhook headers one per name, nulls left out."""
    for name, value in resource.items():
        if name == "headers":
            for header in value:
                yield f'headers["{header["name"]}"]', header["value"]
        elif value is not None:
            yield name, value
