"""The plan as a pull-request comment: a summary table, warnings, and the details folded.

The output has no timestamps and a fixed order, so the same plan gives the same bytes and a bot
can tell whether its comment needs updating. It stays under GitHub's comment limit by cutting
the details at a line boundary, closing what it opened, and saying how much was left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from reconciler.money import grouped
from reconciler.plan.changes import Inactivate, Replace
from reconciler.plan.model import Plan
from reconciler.render.base import clean
from reconciler.render.text import (
    Line,
    change_lines,
    conflict_line,
    drift_lines,
    unmanaged_lines,
)
from reconciler.words import plural

#: GitHub refuses comments above 65,536 characters; stay well under it.
MAX_CHARACTERS = 60_000
_NOTE_ROOM = 400  # kept free for the closing fence, the tags and the note about the cut

_SUMMARY_COLUMNS = (
    ("invite", "to invite"),
    ("inactivate", "to inactivate"),
    ("replace", "to replace"),
    ("create", "to create"),
    ("update", "to update"),
    ("drifted", "drifted"),
    ("unmanaged", "unmanaged"),
    ("conflicts", "conflicts"),
)
# GitHub colours a `diff` block by the first character only: + added, - removed, ! changed.
_DIFF_MARK = (("-/+", "!"), ("+", "+"), ("-", "-"), ("~", "!"), ("!", "!"))


@dataclass(frozen=True, slots=True)
class _Section:
    title: str
    lines: tuple[str, ...]


class MarkdownRenderer:
    """Markdown for a pull-request comment, at most `limit` characters."""

    def __init__(self, *, show_unmanaged: bool = False, limit: int = MAX_CHARACTERS) -> None:
        self._show_unmanaged = show_unmanaged
        self._limit = limit

    def render(self, plan: Plan) -> str:
        head = "\n".join(_head(plan)) + "\n\n"
        sections = [s for s in _sections(plan, self._show_unmanaged) if s.lines]
        fence = _fence(line for section in sections for line in section.lines)
        return head + _fit(sections, fence, self._limit - len(head) - _NOTE_ROOM)


def _head(plan: Plan) -> Iterator[str]:
    summary = plan.summary.as_dict()
    yield "### reconciler plan"
    yield ""
    yield "| " + " | ".join(title for _, title in _SUMMARY_COLUMNS) + " |"
    yield "|" + "---:|" * len(_SUMMARY_COLUMNS)
    yield "| " + " | ".join(str(summary[key]) for key, _ in _SUMMARY_COLUMNS) + " |"
    yield ""
    inactivated = sum(isinstance(change, Inactivate | Replace) for change in plan.changes)
    if inactivated:
        yield (
            f"> :warning: **{plural(inactivated, 'worker')} would be inactivated.** "
            "An inactivation cannot be undone; the worker would have to be invited again."
        )
        yield ""
    if not plan.safety.safe:
        yield (
            "> :no_entry: **Unsafe:** "
            + _escape("; ".join(plan.safety.problems))
            + ". `apply` refuses without `--force`."
        )
        yield ""
    yield from _payruns_table(plan)
    emails = plan.summary.invitation_emails
    yield (
        f"Apply would send {plural(emails, 'invitation e-mail')}."
        if emails
        else ("Apply would send no invitation e-mails.")
    )
    if not plan.has_changes:
        yield ""
        yield plan.headline


def _payruns_table(plan: Plan) -> Iterator[str]:
    """The payruns, one row per paylist, and the wallet line."""
    if not plan.payruns:
        return
    yield "| payrun | state | total | paylist | reasons or outcomes |"
    yield "|---|---|---:|---:|---|"
    for decision in plan.payruns:
        notes = "; ".join(decision.reasons) or ", ".join(
            f"{n} {status}" for status, n in sorted(decision.outcomes.items())
        )
        paylist = "" if decision.paylist_id is None else str(decision.paylist_id)
        cells = (
            f"`{decision.address}`",
            decision.state.replace("_", " "),
            f"{grouped(decision.total)}",
            paylist,
            _escape(notes),
        )
        yield "| " + " | ".join(cells) + " |"
    yield ""
    wallet = plan.wallet
    if wallet is not None:
        line = (
            f"Wallet: balance {grouped(wallet.balance)}, {grouped(wallet.total_to_pay)} to pay, "
            f"{grouped(wallet.balance_after)} after."
        )
        if wallet.problems:
            line += " :no_entry: " + _escape("; ".join(wallet.problems)) + " (needs `--force`)."
        yield line
        yield ""


def _sections(plan: Plan, show_unmanaged: bool) -> Iterator[_Section]:
    yield _Section(
        f"Changes ({len(plan.changes)})",
        _diff(line for change in plan.changes for line in [Line(""), *change_lines(change)]),
    )
    yield _Section(
        f"Drift ({len(plan.drift_entries)})",
        _diff(line for drift in plan.drift_entries for line in drift_lines(drift)),
    )
    yield _Section(
        f"Conflicts ({len(plan.conflicts)})", _diff(conflict_line(c) for c in plan.conflicts)
    )
    if show_unmanaged:
        yield _Section(
            f"Unmanaged ({len(plan.unmanaged)})",
            _diff(unmanaged_lines(plan.unmanaged, listed=True)),
        )
    yield _Section(
        f"Warnings ({len(plan.warnings)})", tuple(clean(warning) for warning in plan.warnings)
    )


def _diff(lines: Iterable[Line]) -> tuple[str, ...]:
    out = []
    for line in lines:
        text = line.text
        stripped = text.lstrip()
        for symbol, mark in _DIFF_MARK:
            if stripped.startswith(symbol + " "):
                at = len(text) - len(stripped)
                text = mark + text[1:at] + " " * len(symbol) + text[at + len(symbol) :]
                break
        out.append(text)
    # The first blank line only separates changes in the terminal output.
    return tuple(out[1:] if out and not out[0] else out)


def _fence(lines: Iterable[str]) -> str:
    """A code fence longer than any run of backticks in the content, so none can close it."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


def _fit(sections: list[_Section], fence: str, budget: int) -> str:
    out: list[str] = []
    used = 0
    for number, section in enumerate(sections):
        opening = [f"<details><summary>{section.title}</summary>", "", f"{fence}diff"]
        closing = [fence, "", "</details>", ""]
        frame = sum(len(part) + 1 for part in opening + closing)
        if used + frame > budget:
            return _cut(out, sections[number:], 0)
        used += frame
        kept = 0
        for line in section.lines:
            if used + len(line) + 1 > budget:
                break
            used += len(line) + 1
            kept += 1
        out += opening + list(section.lines[:kept]) + closing
        if kept < len(section.lines):
            return _cut(out, sections[number:], kept)
    return "\n".join(out)


def _cut(out: list[str], rest: list[_Section], kept_of_first: int) -> str:
    left = list(rest[0].lines[kept_of_first:])
    for section in rest[1:]:
        left += section.lines
    characters = sum(len(line) + 1 for line in left)
    out.append(
        f"_The plan was cut to fit a comment: {plural(len(left), 'more line')} "
        f"({characters:,} characters) left out. Run `reconciler plan` for all of it._"
    )
    return "\n".join(out) + "\n"


def _escape(text: str) -> str:
    """Free text placed in Markdown: no markup, no HTML, no control characters."""
    return re.sub(r"([\\`*_{}\[\]()<>#+!|~])", r"\\\1", clean(text))
