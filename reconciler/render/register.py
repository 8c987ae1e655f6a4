"""The payroll register in each output: text and Markdown for people, CSV and JSON for machines.

Text and Markdown group amounts as the plan does (`1,394,500.00`); CSV and JSON write them as
two-place strings (`"1394500.00"`). CSV has one row a payment; JSON has the months, their
paylists, the payees and every payment. Markdown puts a Mermaid chart of the months, paid and
failed (`reconciler.render.chart`), beside its table, and bounds its payee table (an issue or a
comment has a size limit); text, CSV and JSON list everyone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from reconciler.money import grouped
from reconciler.plan.register import (
    Cause,
    MergeRecord,
    Month,
    PaylistRow,
    Register,
    Sums,
    combined,
)
from reconciler.render.base import clean, show_paid
from reconciler.render.chart import months_chart
from reconciler.render.markdown import code_span, escape
from reconciler.render.register_rows import SERVICE_SIDE, register_csv, register_json
from reconciler.words import counted, plural

#: Payees listed in Markdown, the most requested first; the rest are counted.
MARKDOWN_PAYEES = 50
#: Paylist rows of the Markdown table (the newest months'; the earlier ones in one row): a
#: comment or an issue holds 65,536 characters.
MARKDOWN_PAYLISTS = 200
MONTHS_NOTE = (
    "those the money moved in: a payment is in the month it settled (paid or failed) or, still "
    "pending, the month it was asked for"
)
_SUM_HEADERS = ("PAYMENTS", "REQUESTED", "PAID", "FAILED", "PENDING")


def _scope(register: Register, source: str | None) -> str:
    bounds = _bounds(register)
    what = f"the payruns of {source}" if register.files and source else "the account"
    return f"{what}{bounds}"


def _bounds(register: Register) -> str:
    since, until = register.since, register.until
    if since and until:
        return f", {since} to {until}" if since != until else f", {since}"
    if since:
        return f", from {since}"
    if until:
        return f", until {until}"
    return ""


def _left_out(register: Register) -> str | None:
    if not register.left_out:
        return None
    shown = ", ".join(str(paylist_id) for paylist_id in register.left_out[:10])
    more = ", ..." if len(register.left_out) > 10 else ""
    count = len(register.left_out)
    return (
        f"Not shown: {plural(count, 'paylist')} of the account that no payrun of the files paid "
        f"(paylist {shown}{more})"
    )


def _unpaid(register: Register) -> str | None:
    if not register.unpaid:
        return None
    shown = ", ".join(register.unpaid[:10]) + (", ..." if len(register.unpaid) > 10 else "")
    return (
        f"No paylist of the account holds {plural(len(register.unpaid), 'payrun')} of the files "
        f"({shown}): reconciler plan says whether to pay them or they are in conflict"
    )


def _causes_text(causes: Sequence[Cause]) -> str:
    return ", ".join(
        f"{cause.cause} {counted(cause.count)} ({grouped(cause.amount)})" for cause in causes
    )


def _payrun_text(row: PaylistRow) -> str:
    if row.payrun_id is None:
        return ""
    return row.payrun_id if row.part is None else f"{row.payrun_id} part {row.part}"


def _sum_cells(sums: Sums) -> list[str]:
    return [
        counted(sums.requested_count),
        grouped(sums.requested),
        grouped(sums.paid),
        grouped(sums.failed),
        grouped(sums.pending),
    ]


def _merge_text(merge: MergeRecord | None) -> str:
    if merge is None:
        return ""
    pieces = [merge.commit[:12]]
    if merge.pull_request:
        pieces.append(merge.pull_request)
    if merge.author:
        pieces.append(f"by {merge.author}")
    if merge.approvers:
        pieces.append(f"approved by {', '.join(merge.approvers)}")
    return " ".join(pieces)


# -- text -----------------------------------------------------------------------------------


def register_text(register: Register, source: str | None = None) -> str:
    """The register for a terminal: the months with their paylists, the total, the payees."""
    lines = [f"Payroll register of {_scope(register, source)}."]
    if not register.merges_read:
        lines.append(f"It shows {SERVICE_SIDE}.")
    lines.append(f"Months: {MONTHS_NOTE}.")
    lines += [f"{note}." for note in (_left_out(register), _unpaid(register)) if note]
    lines.append("")
    if not register.payments:
        lines.append("No payment moved in these months.")
        return "\n".join(lines) + "\n"
    payruns, periods = register.files, _any_period(register)
    merges = register.merges_read
    headers = ["MONTH", "PAYLIST"]
    headers += ["PAYRUN"] * payruns + ["PERIOD"] * periods
    headers += [*_SUM_HEADERS, "DESCRIPTION"] + ["MERGE"] * merges
    rows: list[list[str]] = []
    notes: dict[int, str] = {}
    for month in register.months:
        rows.append([month.month, ""] + [""] * (payruns + periods) + _sum_cells(month.sums) + [""])
        rows[-1] += [""] * merges
        for row in month.paylists:
            cells = ["", str(row.paylist_id)]
            cells += [_payrun_text(row)] * payruns + [row.period or ""] * periods
            cells += [*_sum_cells(row.sums), show_paid(row.description)]
            cells += [clean(_merge_text(row.merge))] * merges
            rows.append(cells)
            if row.causes:
                notes[len(rows) - 1] = f"failed: {clean(_causes_text(row.causes))}"
    total = ["TOTAL", ""] + [""] * (payruns + periods) + _sum_cells(register.totals) + [""]
    rows.append(total + [""] * merges)
    right = {headers.index(name) for name in _SUM_HEADERS} | {1}
    for number, line in enumerate(_aligned(headers, rows, right)):
        lines.append(line)
        if number - 1 in notes:
            lines.append(f"{' ' * 11}{notes[number - 1]}")
    lines.append("")
    lines.append(f"Payees ({counted(len(register.payees))}):")
    payee_rows = [
        [show_paid(payee.payee), counted(payee.months), *_sum_cells(payee.sums)]
        for payee in register.payees
    ]
    lines += _aligned(["PAYEE", "MONTHS", *_SUM_HEADERS], payee_rows, set(range(1, 7)))
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _any_period(register: Register) -> bool:
    return any(row.period for month in register.months for row in month.paylists)


def _aligned(headers: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> list[str]:
    """Columns two spaces apart, as wide as their widest cell; `right` ones right-aligned."""
    widths = [len(header) for header in headers]
    for row in rows:
        widths = [max(width, len(cell)) for width, cell in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.rjust(width) if index in right else cell.ljust(width)
            for index, (cell, width) in enumerate(zip(cells, widths, strict=True))
        )

    return [line(headers), *(line(row) for row in rows)]


# -- Markdown -------------------------------------------------------------------------------


def register_markdown(register: Register, source: str | None = None) -> str:
    """A title, the note on what is shown, the chart of the months, the table, the payees."""
    where = escape(_scope(register, source))
    lines = [f"## Payroll register of {where}", ""]
    if not register.merges_read:
        lines += [f"_This register shows {escape(SERVICE_SIDE)}._", ""]
    lines += [f"_Months: {escape(MONTHS_NOTE)}._", ""]
    for note in (_left_out(register), _unpaid(register)):
        lines += [f"{escape(note)}.", ""] if note else []
    if not register.payments:
        lines.append("No payment moved in these months.")
        return "\n".join(lines) + "\n"
    chart = [(month.month, month.sums.paid, month.sums.failed) for month in register.months]
    lines += [*months_chart(chart), ""]
    payruns, periods, merges = register.files, _any_period(register), register.merges_read
    headers = ["month", "paylist"] + ["payrun"] * payruns + ["period"] * periods
    headers += ["payments", "requested", "paid", "failed", "pending", "failed by cause"]
    headers += ["merge"] * merges
    lines.append("| " + " | ".join(headers) + " |")
    aligns = ["---", "---:"] + ["---"] * (payruns + periods) + ["---:"] * 5 + ["---"]
    lines.append("|" + "|".join(aligns + ["---"] * merges) + "|")
    blank = [""] * (payruns + periods)
    shown = _newest(register.months, MARKDOWN_PAYLISTS)
    if earlier := register.months[: len(register.months) - len(shown)]:
        span = f"{earlier[0].month} to {earlier[-1].month}"
        sums = combined(month.sums for month in earlier)
        cells = [f"**earlier: {plural(len(earlier), 'month')}**", span, *blank]
        lines.append(_row([*cells, *_bold(_sum_cells(sums)), "", *[""] * merges]))
    for month in shown:
        cells = [f"**{month.month}**", "", *blank, *_bold(_sum_cells(month.sums)), ""]
        lines.append(_row(cells + [""] * merges))
        for row in month.paylists:
            cells = ["", str(row.paylist_id)]
            cells += [code_span(_payrun_text(row)) if row.payrun_id else ""] * payruns
            cells += [row.period or ""] * periods
            cells += [*_sum_cells(row.sums), escape(_causes_text(row.causes))]
            cells += [escape(_merge_text(row.merge))] * merges
            lines.append(_row(cells))
    total = ["**total**", "", *blank, *_bold(_sum_cells(register.totals)), ""]
    lines.append(_row(total + [""] * merges))
    if earlier:
        lines += ["", "_Earlier months in one row: `--since` shows them, `--format csv` has them._"]
    lines += ["", f"### Payees ({counted(len(register.payees))})", ""]
    lines.append("| payee | months | payments | requested | paid | failed | pending |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|")
    for payee in register.payees[:MARKDOWN_PAYEES]:
        cells = [code_span(payee.payee), counted(payee.months), *_sum_cells(payee.sums)]
        lines.append(_row(cells))
    if len(register.payees) > MARKDOWN_PAYEES:
        rest = len(register.payees) - MARKDOWN_PAYEES
        lines += [
            "",
            f"_And {plural(rest, 'more payee')}: every payment is in `--format csv`._",
        ]
    return "\n".join(lines) + "\n"


def _newest(months: Sequence[Month], most: int) -> Sequence[Month]:
    """The newest months whose paylist rows number at most `most` (the newest always)."""
    count, first = 0, len(months)
    while first > 0 and (first == len(months) or count + len(months[first - 1].paylists) <= most):
        first -= 1
        count += len(months[first].paylists)
    return months[first:]


def _bold(cells: Iterable[str]) -> list[str]:
    return [f"**{cell}**" for cell in cells]


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def render_register(register: Register, fmt: str, source: str | None = None) -> str:
    """The register in `fmt`: text (the default), markdown, csv or json."""
    if fmt in ("csv", "json"):
        return register_csv(register) if fmt == "csv" else register_json(register, source)
    if fmt == "markdown":
        return register_markdown(register, source)
    return register_text(register, source)
