"""Several accounts' plans as one output: text with a header per account, one JSON document,
and one pull-request comment.

Each account's part is what its single-account renderer makes (the JSON `plan` is exactly that
account's plan JSON). The comment is one body: a table of every account, then the risky
sections of every account before any account's low-risk tail, cut by the same risk-first budget
as a single plan's comment (`reconciler.render.markdown`), within GitHub's 65,536 characters.
`drift --all` words its outputs as drift (`DRIFT`): the report's title, what was done to each
account, what failed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from reconciler.accounts.run import Outcome
from reconciler.money import grouped
from reconciler.plan.changes import Inactivate, Replace
from reconciler.plan.model import Plan
from reconciler.plan.payruns import REFUSED
from reconciler.render import renderer_for
from reconciler.render.base import clean
from reconciler.render.comment_body import fit_body
from reconciler.render.markdown import (
    LEGEND,
    MAX_CHARACTERS,
    NOTE_ROOM,
    SUMMARY_COLUMNS,
    code_fence,
    escape,
    fit,
)
from reconciler.render.marker import Marker
from reconciler.render.sections import Section, View, sections
from reconciler.render.text import Line
from reconciler.words import counted, plural

if TYPE_CHECKING:
    from reconciler.session.planning import Planned

#: A failed account's reason comes first of all (its lines, at most this many).
_ERROR_RISK = 5
_ERROR_LINES = 20


@dataclass(frozen=True, slots=True)
class Look:
    """How the accounts' plans are shown: `fmt` (text, json, or markdown: one comment's
    parts) and the single plan renderer's options."""

    fmt: str = "text"
    show_unmanaged: bool = False
    strict: bool = False
    drift: bool = False
    color: bool = False
    width: int | None = None


@dataclass(frozen=True, slots=True)
class Wording:
    """How a combined output names what was done to the accounts."""

    title: str  # the Markdown's title, as the single account's output of the command has it
    done: str  # what each account was: "planned"; also the JSON summary's count of them
    failed: str  # an account whose run failed "could not be ..."
    named: tuple[str, ...]  # the summary's lists of accounts the text's last line names


#: The summary's lists of accounts: (JSON key, the text's words for it).
LISTS = {
    "with_changes": "with changes",
    "with_drift": "with drift",
    "with_refusals": "with refusals",
}
PLAN = Wording(
    "reconciler plan",
    "planned",
    "could not be planned",
    ("with_changes", "with_drift", "with_refusals"),
)
DRIFT = Wording(
    "reconciler drift report", "checked", "could not be checked", ("with_drift", "with_refusals")
)


@dataclass(frozen=True, slots=True)
class Part:
    """One account's share of the comment: its row of the table and its sections."""

    name: str
    counts: dict[str, int] = field(default_factory=dict)
    to_pay: int = 0
    total: Decimal = Decimal(0)
    inactivated: int = 0
    sections: tuple[Section, ...] = ()
    error: str | None = None
    changes: bool = False


@dataclass(frozen=True, slots=True)
class Shown:
    """One account's plan as it is shown, made where the account ran (in the process that
    planned it, when accounts are spread over several: only this crosses back)."""

    counts: dict[str, int]
    changes: bool  # what apply would change (the plan's `has_changes`)
    drift_found: bool  # drift's verdict, under `--strict` when the look is strict
    rendered: str = ""  # the text or JSON plan
    part: Part | None = None  # the comment's part (markdown)
    drifted: bool = False  # drift's verdict for `drift`; a plan's: workers that drifted
    refusals: bool = False  # a payrun refused, or the plan unsafe (apply would refuse it)
    #: A fleet of one's plan, printed and saved by the command (it never crosses processes).
    planned: Planned | None = field(default=None, compare=False, repr=False)


def judged(plan: Plan, look: Look) -> Shown:
    """What the command's exit code and summary need of the plan, as `look` judges it."""
    verdict = plan.drift_detected(strict=look.strict)
    return Shown(
        plan.summary.as_dict(),
        plan.has_changes,
        verdict,
        drifted=verdict if look.drift else bool(plan.drift),
        refusals=not plan.safety.safe or any(d.state == REFUSED for d in plan.payruns),
    )


def show(name: str, plan: Plan, look: Look) -> Shown:
    """The account `name`'s plan as `look` says, with what the command's exit code needs."""
    shown = judged(plan, look)
    if look.fmt == "markdown":
        return replace(shown, part=plan_part(name, plan, View(show_unmanaged=look.show_unmanaged)))
    if look.fmt == "json":
        renderer = renderer_for("json")
    else:
        renderer = renderer_for(
            "text",
            color=look.color,
            show_unmanaged=look.show_unmanaged,
            strict=look.strict,
            drift=look.drift,
            width=look.width,
        )
    return replace(shown, rendered=renderer.render(plan))


def named(outcomes: list[Outcome[Shown]]) -> dict[str, list[str]]:
    """The accounts with changes, with drift, and with refusals (the summary's `LISTS`)."""
    shown = [(o.name, o.value) for o in outcomes if o.value is not None]
    return {
        "with_changes": [name for name, value in shown if value.changes],
        "with_drift": [name for name, value in shown if value.drifted],
        "with_refusals": [name for name, value in shown if value.refusals],
    }


def summary(outcomes: list[Outcome[Shown]], wording: Wording = PLAN) -> dict[str, Any]:
    """The counts over every account planned (checked, for drift); which failed, and which
    have changes, drift or refusals (whether or not another failed)."""
    totals = dict.fromkeys((key for key, _ in SUMMARY_COLUMNS), 0)
    for outcome in outcomes:
        if outcome.value is not None:
            for key, count in outcome.value.counts.items():
                if key in totals:
                    totals[key] += count
    failed = [outcome.name for outcome in outcomes if outcome.error is not None]
    return {
        **totals,
        "accounts": len(outcomes),
        wording.done: len(outcomes) - len(failed),
        "failed": failed,
        **named(outcomes),
    }


def combined_text(outcomes: list[Outcome[Shown]], wording: Wording = PLAN) -> str:
    """A header per account, then its plan as rendered (or why it failed)."""
    parts = []
    for outcome in outcomes:
        parts.append(f"=== account {outcome.name} ===\n")
        if outcome.value is not None:
            parts.append(outcome.value.rendered)
        else:
            parts.append(f"Error: {outcome.error}\n")
        parts.append("\n")
    return "".join(parts) + summary_line(outcomes, wording) + "\n"


def summary_line(outcomes: list[Outcome[Shown]], wording: Wording = PLAN) -> str:
    """'5 accounts: 4 checked, 1 failed (fr); with drift: uk, de.'"""
    failed = [o.name for o in outcomes if o.error is not None]
    done = counted(len(outcomes) - len(failed))
    line = f"{plural(len(outcomes), 'account')}: {done} {wording.done}"
    if failed:
        line += f", {counted(len(failed))} failed ({', '.join(failed)})"
    lists = named(outcomes)
    shown = [f"{LISTS[key]}: {', '.join(lists[key])}" for key in wording.named if lists[key]]
    if not shown and len(failed) < len(outcomes):
        quiet = "no changes" if wording is PLAN else "no drift"
        shown.append(quiet + (" in the others" if failed else ""))
    return line + "".join(f"; {words}" for words in shown) + "."


def combined_json(outcomes: list[Outcome[Shown]], wording: Wording = PLAN) -> str:
    """`{"accounts": [{"name", "plan"} | {"name", "error": {"message"}}], "summary"}`."""
    accounts: list[dict[str, Any]] = []
    for outcome in outcomes:
        if outcome.value is not None:
            accounts.append({"name": outcome.name, "plan": json.loads(outcome.value.rendered)})
        else:
            accounts.append({"name": outcome.name, "error": {"message": outcome.error}})
    document = {"accounts": accounts, "summary": summary(outcomes, wording)}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def plan_part(name: str, plan: Plan, view: View) -> Part:
    """An account's part from its plan: the counts and sections a single comment shows."""
    return Part(
        name,
        counts=plan.summary.as_dict(),
        to_pay=len(plan.to_pay),
        total=sum((decision.total for decision in plan.to_pay), Decimal(0)),
        inactivated=sum(isinstance(c, Inactivate | Replace) for c in plan.changes),
        sections=tuple(sections(plan, view)),
        changes=bool(plan.changes or plan.drift or plan.closed),
    )


def shown_parts(outcomes: list[Outcome[Shown]]) -> list[Part]:
    """Each account's part of the comment (shown as markdown), or why it failed."""
    parts = []
    for outcome in outcomes:
        if outcome.value is None:
            parts.append(Part(outcome.name, error=outcome.error))
        elif outcome.value.part is None:
            raise ValueError(f"account {outcome.name} was not shown as markdown")
        else:
            parts.append(outcome.value.part)
    return parts


def combined_markdown(
    outcomes: list[Outcome[Shown]],
    *,
    limit: int | None = MAX_CHARACTERS,
    wording: Wording = PLAN,
) -> str:
    """One comment for every account: the table, then every account's risky sections, then
    the low-risk tails, cut to `limit` (None: everything, for the job summary)."""
    return parts_markdown(shown_parts(outcomes), limit=limit, wording=wording)


def parts_markdown(
    parts: list[Part], *, limit: int | None = MAX_CHARACTERS, wording: Wording = PLAN
) -> str:
    head = "\n".join(_head(parts, wording)) + "\n\n"
    found: list[Section] = []
    for part in parts:
        if part.error is not None:  # why, in full (the table holds its first line)
            lines = part.error.splitlines()
            shown = [Line(clean(line)) for line in lines[:_ERROR_LINES]]
            if len(lines) > _ERROR_LINES:
                shown.append(Line(f"and {plural(len(lines) - _ERROR_LINES, 'more line')}"))
            title = f"{escape(part.name)}: {wording.failed}"
            found.append(Section(title, _ERROR_RISK, (tuple(shown),), "error", False))
        for section in part.sections:
            found.append(replace(section, title=f"{escape(part.name)}: {section.title}"))
    found.sort(key=lambda section: (section.may_cut, section.risk))  # stable: file order kept
    fence = code_fence(line.text for s in found for item in s.items for line in item)
    budget = None if limit is None else limit - len(head) - NOTE_ROOM
    return head + fit(found, fence, budget)


def parts_comment(parts: list[Part], marker: Marker) -> str:
    return fit_body(marker.stamp(parts_markdown(parts)))


def _head(parts: list[Part], wording: Wording) -> list[str]:
    lines = [f"### {wording.title}: {plural(len(parts), 'account')}", ""]
    titles = ["account", *(title for _, title in SUMMARY_COLUMNS), "payruns to pay", "total to pay"]
    lines.append("| " + " | ".join([*titles, "error"]) + " |")
    lines.append("|---|" + "---:|" * (len(SUMMARY_COLUMNS) + 2) + "---|")
    for part in parts:
        name = f"`{part.name}`"
        if part.error is not None:
            first = part.error.splitlines()[0] if part.error.strip() else "failed"
            cells = [name, *(["-"] * (len(SUMMARY_COLUMNS) + 2)), escape(first[:200])]
        else:
            cells = [
                name,
                *(str(part.counts.get(key, 0)) for key, _ in SUMMARY_COLUMNS),
                str(part.to_pay),
                grouped(part.total) if part.to_pay else "-",
                "-",
            ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    failed = [part.name for part in parts if part.error is not None]
    if failed:
        names = ", ".join(f"`{name}`" for name in failed)
        count = plural(len(failed), "account")
        lines += [f"> :no_entry: **{count} {wording.failed}:** {names}.", ""]
    inactivated = [
        f"{plural(part.inactivated, 'worker')} in `{part.name}`"
        for part in parts
        if part.inactivated
    ]
    if inactivated:
        lines += [
            f"> :warning: **Would be inactivated: {', '.join(inactivated)}.** An inactivation "
            "cannot be undone; the worker would have to be invited again.",
            "",
        ]
    if any(part.changes for part in parts):
        lines.append(LEGEND)
    return lines
