"""The money report in each output: text lines, a Markdown section, the JSON `money` object.

Every list is bounded in Markdown (a drift issue or a comment has a size limit), never in text
or JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from reconciler.money import grouped, two_places
from reconciler.plan.money import Figure, MoneyReport, MonthMoney, PaymentAlert, Untraced
from reconciler.render.base import clean, show_paid
from reconciler.render.chart import months_chart
from reconciler.words import counted, plural

#: Rows of each list in Markdown; the rest is counted.
MARKDOWN_ROWS = 20


def money_text_lines(report: MoneyReport) -> Iterator[str]:
    """A few summary lines, then every paylist and payment that needs someone."""
    window = f" ({report.relative})" if report.relative else ""
    yield f"Money since {_date(report.since)}{window}: {_summary(report)}."
    if report.untraced:
        yield "Untraced paylists: no payrun of the files made them; they are never touched."
        yield from (f"  ! {_untraced(item)}" for item in report.untraced)
    if report.failed:
        yield "Failed payments of the files' payruns:"
        yield from (f"  ! {_alert(alert)}" for alert in report.failed)
    if report.stuck:
        yield "Payments of the files' payruns still PENDING:"
        yield from (f"  ! {_alert(alert)}" for alert in report.stuck)


def money_markdown(report: MoneyReport, escape: Any, *, chart: bool = False) -> Iterator[str]:
    """The money table, then the untraced paylists and the payments needing action (at most
    `MARKDOWN_ROWS` each). `escape` makes free text safe in Markdown. `chart` (the drift
    issue's): after the table, the window's months as `reconciler report --format markdown`
    draws them, and their table, which stands on its own where Mermaid is not drawn."""
    window = f"of {report.relative}" if report.relative else f"since {_date(report.since)}"
    yield f"| money {window} | count | total |"
    yield "|---|---:|---:|"
    for title, figure, _ in _figures(report):
        yield f"| {title} | {counted(figure.count)} | {grouped(figure.total)} |"
    balance = "" if report.balance is None else f"{grouped(report.balance)}"
    yield f"| wallet balance | | {balance} |"
    yield ""
    if chart and report.months:
        yield from _months_markdown(report.months)
    groups = (
        (
            ":no_entry: **Untraced paylists** (never touched)",
            [_untraced(u) for u in report.untraced],
        ),
        (":no_entry: **Failed payments**", [_alert(a) for a in report.failed]),
        (":hourglass: **Stuck payments**", [_alert(a) for a in report.stuck]),
    )
    for title, lines in groups:
        if not lines:
            continue
        yield f"{title}:"
        yield ""
        yield from (f"- {escape(line)}" for line in lines[:MARKDOWN_ROWS])
        if len(lines) > MARKDOWN_ROWS:
            more = counted(len(lines) - MARKDOWN_ROWS)
            yield f"- … and {more} more: run `reconciler drift` for all."
        yield ""


def _months_markdown(months: Sequence[MonthMoney]) -> Iterator[str]:
    """The chart of the months (at most `CHART_MONTHS`: a 35-day window has two or three), then
    every month's row, so a forge that draws no Mermaid still shows them. A chart is a few
    hundred characters: within every forge's limits for a body and for a diagram."""
    yield "Money of the window by month (every paylist of it, traced or not):"
    yield ""
    yield from months_chart([(month.month, month.paid, month.failed) for month in months])
    yield ""
    yield "| month | paid | failed | pending |"
    yield "|---|---:|---:|---:|"
    for month in months[-MARKDOWN_ROWS:]:
        cells = (grouped(month.paid), grouped(month.failed), grouped(month.pending))
        yield f"| {month.month} | {' | '.join(cells)} |"
    if len(months) > MARKDOWN_ROWS:
        yield ""
        earlier = counted(len(months) - MARKDOWN_ROWS)
        yield f"_And {earlier} earlier months: `reconciler report` has them._"
    yield ""


def money_json(report: MoneyReport) -> dict[str, Any]:
    """The JSON `money` object: amounts as two-place strings."""
    return {
        "since": report.since.isoformat(),
        "window": report.relative,
        "needs_action": report.needs_action,
        "paid": _figure(report.paid),
        "untraced": {
            **_figure(report.untraced_figure),
            "paylists": [
                {
                    "paylist_id": item.paylist_id,
                    "creation_date": _iso(item.created_at),
                    "description": item.description,
                    "payments": item.payments,
                    "total": two_places(item.total),
                }
                for item in report.untraced
            ],
        },
        "failed": {**_figure(report.failed_figure), "payments": _alerts(report.failed)},
        "stuck": {
            **_figure(Figure(len(report.stuck), sum((a.amount for a in report.stuck), Decimal()))),
            "payments": _alerts(report.stuck),
        },
        "pending": _figure(report.pending),
        "top_ups": None if report.top_ups is None else _figure(report.top_ups),
        "wallet_balance": None if report.balance is None else two_places(report.balance),
    }


def _figures(report: MoneyReport) -> Iterable[tuple[str, Figure, str]]:
    """The summary's figures; the top-ups only where the journal was read (`drift`)."""
    figures = [
        ("paid through payruns", report.paid, "paylist"),
        ("untraced", report.untraced_figure, "paylist"),
        ("failed", report.failed_figure, "payment"),
        ("pending", report.pending, "payment"),
    ]
    if report.top_ups is not None:
        figures.append(("top-ups", report.top_ups, "top-up"))
    return figures


def _summary(report: MoneyReport) -> str:
    parts = [
        f"{title} {plural(figure.count, noun)} ({grouped(figure.total)})"
        for title, figure, noun in _figures(report)
        if noun != "top-up"
    ]
    if report.top_ups is not None:
        parts.append(f"wallet topped up {plural(report.top_ups.count, 'time')}")
        parts[-1] += f" ({grouped(report.top_ups.total)})"
    if report.stuck:
        parts.append(f"{plural(len(report.stuck), 'payment')} stuck")
    if report.balance is not None:
        parts.append(f"wallet balance {grouped(report.balance)}")
    return ", ".join(parts)


def _untraced(item: Untraced) -> str:
    return (
        f"paylist {item.paylist_id}, made {_date(item.created_at)}, "
        f"{show_paid(item.description)}: {plural(item.payments, 'payment')}, {grouped(item.total)}"
    )


def _alert(alert: PaymentAlert) -> str:
    state = alert.cause or alert.status
    if alert.status == "PENDING":
        state = f"PENDING since {_date(alert.created_at, time=True)}"
    return (
        f"payment {alert.payment_id} of paylist {alert.paylist_id}: {grouped(alert.amount)} to "
        f"{clean(alert.email)}, {state}: {alert.action}"
    )


def _alerts(alerts: Iterable[PaymentAlert]) -> list[dict[str, Any]]:
    return [
        {
            "payment_id": alert.payment_id,
            "paylist_id": alert.paylist_id,
            "email": alert.email,
            "amount": two_places(alert.amount),
            "status": alert.status,
            "cause": alert.cause,
            "creation_date": _iso(alert.created_at),
            "action": alert.action,
        }
        for alert in alerts
    ]


def _figure(figure: Figure) -> dict[str, Any]:
    return {"count": figure.count, "total": two_places(figure.total)}


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _date(moment: datetime | None, *, time: bool = False) -> str:
    if moment is None:
        return "(date unknown)"
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC" if time else "%Y-%m-%d")
