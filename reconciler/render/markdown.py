"""The plan as a pull-request comment: a summary table, warnings, and the details folded.

The output has no timestamps and a fixed order, so the same plan gives the same bytes and a bot
can tell whether its comment needs updating. It stays under GitHub's comment limit by cutting
the details at a line boundary, closing what it opened, and saying how much was left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from decimal import Decimal

from reconciler.money import grouped
from reconciler.plan.changes import Inactivate, Replace
from reconciler.plan.model import Plan
from reconciler.plan.payruns import parts_of
from reconciler.render.base import clean, show_paid, strict_headline
from reconciler.render.money import money_markdown
from reconciler.render.sections import Item, Section, View, sections
from reconciler.words import counted, plural

#: GitHub refuses comments above 65,536 characters; stay well under it (the marker, and a
#: merge-refused comment's own paragraph, come on top).
MAX_CHARACTERS = 60_000
NOTE_ROOM = 1_000  # kept free for the note about what was left out
#: With a limit, the payruns table of the head shows at most this many rows, each with at most
#: this many reasons: the sections below name every one, riskiest first, so a file of many
#: refused payruns cannot push them (an inactivation, the webhook) out of the comment.
_TABLE_ROWS = 50
_CELL_REASONS = 3
#: Generous room for a section's opening and closing lines (its title, the fence, the tags).
_FRAME = 200

SUMMARY_COLUMNS = (
    ("conflicts", "conflicts"),
    ("inactivate", "to inactivate"),
    ("replace", "to replace"),
    ("create", "to create"),
    ("update", "to update"),
    ("invite", "to invite"),
    ("drifted", "drifted"),
    ("unmanaged", "unmanaged"),
)
#: The same symbols as the text plan; each is moved to the line's first column, where GitHub
#: colours a `diff` block (`+` green, `-` and `-/+` red, `!` orange, `~` plain).
_SYMBOLS = ("-/+", "+", "-", "~", "!")
LEGEND = (
    "Symbols, as in the text plan: `+` invite or create, `-` inactivate, `-/+` replace "
    "(inactivate, then invite), `~` update, `!` conflict or refused."
)
FULL_PLAN = (
    "The full plan, every change, is in this run's job summary and in `plan.md` of its plan "
    "artifact; `reconciler plan` prints it too."
)


class MarkdownRenderer:
    """Markdown for a pull-request comment, riskiest first, at most `limit` characters.

    `limit=None` renders every change (the job summary and the plan artifact). With a limit,
    the risky sections stay whole and the low-risk tail is cut, item by item, with a note
    counting what was left out and saying where the full plan is.
    """

    def __init__(
        self,
        *,
        show_unmanaged: bool = False,
        limit: int | None = MAX_CHARACTERS,
        strict: bool = False,
        drift: bool = False,
    ) -> None:
        self._view = View(show_unmanaged=show_unmanaged)
        self._limit = limit
        self._strict = strict
        self._drift = drift
        self._title = "reconciler drift report" if drift else "reconciler plan"

    def render(self, plan: Plan) -> str:
        capped = self._limit is not None
        lines = _head(plan, self._title, self._strict, capped=capped, chart=self._drift)
        head = "\n".join(lines) + "\n\n"
        found = sections(plan, self._view)
        fence = code_fence(line.text for s in found for item in s.items for line in item)
        budget = None if self._limit is None else self._limit - len(head) - NOTE_ROOM
        return head + fit(found, fence, budget)


def _head(
    plan: Plan, title: str, strict: bool, *, capped: bool, chart: bool = False
) -> Iterator[str]:
    """The summary, the warnings, the payruns and the money (`chart`: with the chart of the
    window's months, as the drift issue shows it)."""
    summary = plan.summary.as_dict()
    yield f"### {title}"
    yield ""
    yield "| " + " | ".join(title for _, title in SUMMARY_COLUMNS) + " |"
    yield "|" + "---:|" * len(SUMMARY_COLUMNS)
    yield "| " + " | ".join(counted(summary[key]) for key, _ in SUMMARY_COLUMNS) + " |"
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
            + escape("; ".join(plan.safety.problems))
            + ". `apply` refuses without `--force`."
        )
        yield ""
    yield from _payruns_table(plan, capped=capped)
    if plan.money is not None:
        yield from money_markdown(plan.money, escape, chart=chart)
    emails = plan.summary.invitation_emails
    yield (
        f"Apply would send {plural(emails, 'invitation e-mail')}."
        if emails
        else ("Apply would send no invitation e-mails.")
    )
    if not plan.has_changes:
        yield ""
        yield strict_headline(plan) if strict else plan.headline
    if plan.changes or plan.conflicts or plan.drift or plan.payruns:
        yield ""
        yield LEGEND


def _payruns_table(plan: Plan, *, capped: bool) -> Iterator[str]:
    """The payruns, one row per paylist, and the wallet line (`capped`: a bounded number of
    rows and of reasons in a row, with a count of the rest)."""
    if not plan.payruns:
        return
    yield "| payrun | state | total | paylist | reasons or outcomes |"
    yield "|---|---|---:|---:|---|"
    counts_of = parts_of(plan.payruns)
    shown = plan.payruns[:_TABLE_ROWS] if capped else plan.payruns
    for decision in shown:
        part = (
            ""
            if decision.part is None
            else f" (part {decision.part} of {counts_of[decision.payrun_id]})"
        )
        reasons = list(decision.reasons)
        if capped and len(reasons) > _CELL_REASONS:
            rest = len(reasons) - _CELL_REASONS
            reasons = [*reasons[:_CELL_REASONS], f"and {plural(rest, 'more reason')}, listed below"]
        notes = "; ".join(reasons) or ", ".join(
            f"{counted(n)} {status}" for status, n in sorted(decision.outcomes.items())
        )
        notes = notes or "; ".join(
            f"review the payee {show_paid(payee)}: {show_paid(other)}, another ACTIVE "
            "worker's mailbox, looks alike"
            for payee, other in decision.look_alikes[: _CELL_REASONS if capped else None]
        )
        paylist = "" if decision.paylist_id is None else str(decision.paylist_id)
        cells = (
            f"`{decision.address}`{part}",
            decision.state.replace("_", " "),
            grouped(decision.total),
            paylist,
            escape(notes),
        )
        yield "| " + " | ".join(cells) + " |"
    if len(shown) < len(plan.payruns):
        hidden = plan.payruns[len(shown) :]
        total = sum((decision.total for decision in hidden), Decimal(0))
        more = plural(len(hidden), "more paylist")
        yield f"| {more} | | {grouped(total)} | | in the sections below and the full plan |"
    yield ""
    wallet = plan.wallet
    if wallet is not None:
        line = (
            f"Wallet: balance {grouped(wallet.balance)}, {grouped(wallet.total_to_pay)} to pay, "
            f"{grouped(wallet.balance_after)} after."
        )
        if wallet.problems:
            line += " :no_entry: " + escape("; ".join(wallet.problems)) + " (needs `--force`)."
        yield line
        yield ""


def _markdown_lines(item: Item) -> list[str]:
    """An item's lines for a `diff` block: each symbol moved to the first column."""
    out = []
    for line in item:
        text = line.text
        stripped = text.lstrip()
        for symbol in _SYMBOLS:
            if stripped.startswith(symbol + " "):
                at = len(text) - len(stripped)
                text = symbol + " " * at + stripped[len(symbol) :]
                break
        out.append(text)
    return out


def code_fence(lines: Iterable[str]) -> str:
    """A code fence longer than any run of backticks in the content, so none can close it."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


def fit(found: list[Section], fence: str, budget: int | None) -> str:
    """The sections in risk order, whole items only, until the budget is spent; after the
    first cut nothing low-risk is shown, so what is shown is always the riskiest part.

    When even the risky sections do not fit, each gets a fair share of the room
    (`_risky_shares`), so a long risky section written into a file (many refused payruns, say)
    cannot push an inactivation or the webhook change out of the comment.
    """
    out: list[str] = []
    used = 0
    left_out: list[tuple[Section, int]] = []
    shares = _risky_shares(found, budget)
    for section in found:
        opening = [
            f"<details{'' if section.may_cut else ' open'}><summary>{section.title}</summary>",
            "",
            f"{fence}diff",
        ]
        closing = [fence, "", "</details>", ""]
        room = None if budget is None else budget - used
        if room is not None and shares is not None and not section.may_cut:
            room = shares[id(section)]
        room = None if room is None else room - sum(len(part) + 1 for part in opening + closing)
        kept: list[str] = []
        shown = 0
        may_show = not left_out or (shares is not None and not section.may_cut)
        for item in section.items if may_show else ():
            lines = _markdown_lines(item)
            size = sum(len(line) + 1 for line in lines)
            if room is not None and size > room:
                break
            if room is not None:
                room -= size
            kept += lines
            shown += 1
        if shown:
            block = opening + kept + closing
            used += sum(len(part) + 1 for part in block)
            out += block
        if shown < len(section.items):
            left_out.append((section, len(section.items) - shown))
    if left_out:
        out.append(_note(left_out))
    return "\n".join(out) + ("\n" if left_out else "")


def _risky_shares(found: list[Section], budget: int | None) -> dict[int, int] | None:
    """When the risky sections do not fit whole, the room of each (by id): an equal share,
    a section smaller than its share keeping its size and the rest shared by the others.
    None when they fit (or there is no limit)."""
    if budget is None:
        return None
    sizes = {
        id(section): sum(len(line) + 1 for item in section.items for line in _markdown_lines(item))
        + _FRAME
        for section in found
        if not section.may_cut
    }
    if sum(sizes.values()) <= budget:
        return None
    shares: dict[int, int] = {}
    left, waiting = budget, sorted(sizes, key=sizes.__getitem__)
    while waiting:
        share = left // len(waiting)
        if sizes[waiting[0]] > share:
            shares.update((key, share) for key in waiting)
            break
        key = waiting.pop(0)
        shares[key] = sizes[key]
        left -= sizes[key]
    return shares


def _note(left_out: list[tuple[Section, int]]) -> str:
    parts = "; ".join(
        f"{counted(missing)} of {plural(len(section.items), section.noun)}"
        for section, missing in left_out
    )
    risky = [section.title for section, _ in left_out if not section.may_cut]
    alarm = (
        ":no_entry: **Even the risky changes do not fit in a comment** (cut: "
        + ", ".join(risky)
        + "). "
        if risky
        else ""
    )
    return f"{alarm}_Not shown here, to fit GitHub's comment limit: {parts}. {FULL_PLAN}_"


def escape(text: str) -> str:
    """Free text placed in Markdown: no markup, no HTML, no control characters."""
    return re.sub(r"([\\`*_{}\[\]()<>#+!|~])", r"\\\1", clean(text))


def code_span(text: str) -> str:
    """Text from outside (an address holding a live id) as inline code: a run of backticks
    longer than any inside, so nothing in it closes it, and no markup, HTML or @mention in it
    acts."""
    text = clean(text)
    ticks = "`" * (1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    if "`" in text or (text.startswith(" ") and text.endswith(" ")):
        text = f" {text} "  # one space each side is taken off again by the reader
    return ticks + text + ticks


def prose(text: str) -> str:
    """Free text holding live values (a name, a title) placed in Markdown: `escape`d, and an
    `@` in code, so a value such as `@org/everyone` mentions no one."""
    return escape(text).replace("@", "`@`")
