"""The payroll register's rules (`reconciler.plan.register`), one table row a case."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from reconciler.desired.model import Payrun, PayrunPayment
from reconciler.plan.payruns import LivePaylist, paylist_key, units_of
from reconciler.plan.register import (
    MergeRecord,
    Register,
    build_register,
    month_of,
    month_problem,
)
from reconciler.render.chart import CHART_MONTHS, months_chart
from reconciler.render.register import MARKDOWN_PAYLISTS, register_markdown, register_text
from reconciler.render.register_rows import register_csv
from reconciler.service.models import Payment, PaymentStatus


def at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def pay(
    payment_id: int,
    amount: str,
    status: str = "SUCCESS",
    *,
    made: str = "2026-11-28",
    settled: str | None = "2026-11-28",
    email: str = "ada@example.com",
    cause: str | None = None,
    description: str | None = None,
    paylist_id: int = 1,
) -> Payment:
    return Payment(
        id=payment_id,
        description=description or f"item {payment_id}",
        amount=Decimal(amount),
        worker_email=email,
        paylist_id=paylist_id,
        status=PaymentStatus(status),
        cause=cause,
        created_at=at(made),
        updated_at=None if settled is None else at(settled),
    )


def paylist(paylist_id: int, *payments: Payment, key: str = "k" * 32) -> LivePaylist:
    return LivePaylist(paylist_id, key, f"paylist {paylist_id}", payments)


def payrun_of(payrun_id: str, live: LivePaylist) -> Payrun:
    """The files' payrun that paid `live` (its payments, its description)."""
    payments = tuple(PayrunPayment(p.worker_email, p.amount, p.description) for p in live.payments)
    return Payrun(payrun_id, live.description, payments)


def months(register: Register) -> list[tuple[str, str, str, str, str]]:
    return [
        (
            m.month,
            str(m.sums.requested),
            str(m.sums.paid),
            str(m.sums.failed),
            str(m.sums.pending),
        )
        for m in register.months
    ]


# Each case: the paylists' payments, then each month's (requested, paid, failed, pending).
MONTH_CASES = {
    "paid, failed and pending apart": (
        [
            pay(1, "100.00"),
            pay(2, "40.00", "FAILED", cause="INSUFFICIENT_FUNDS"),
            pay(3, "7.50", "PENDING", settled=None),
        ],
        [("2026-11", "147.50", "100.00", "40.00", "7.50")],
    ),
    "settled in the next month: the month the money moved": (
        [pay(1, "100.00", made="2026-11-30", settled="2026-12-01"), pay(2, "5.00")],
        [("2026-11", "5.00", "5.00", "0.00", "0.00"), ("2026-12", "100.00", "100.00", "0", "0")],
    ),
    "pending: the month it was asked for": (
        [pay(1, "9.00", "PENDING", made="2026-10-31", settled="2026-12-05")],
        [("2026-10", "9.00", "0.00", "0.00", "9.00")],
    ),
    "a status the service adds later counts as pending": (
        [pay(1, "3.00", "PROCESSING")],
        [("2026-11", "3.00", "0.00", "0.00", "3.00")],
    ),
    "failed with no update time: its creation": (
        [pay(1, "2.00", "FAILED", made="2026-09-02", settled=None, cause="WALLET_DISABLED")],
        [("2026-09", "2.00", "0.00", "2.00", "0.00")],
    ),
}


@pytest.mark.parametrize("payments, expected", MONTH_CASES.values(), ids=MONTH_CASES)
def test_months_are_those_the_money_moved(
    payments: list[Payment], expected: list[tuple[str, ...]]
) -> None:
    register = build_register([paylist(1, *payments)])
    got = months(register)
    assert [g[0] for g in got] == [e[0] for e in expected]
    for month, want in zip(register.months, expected, strict=True):
        sums = month.sums
        assert (sums.requested, sums.paid, sums.failed, sums.pending) == tuple(
            Decimal(value) for value in want[1:]
        )


BOUND_CASES = {
    "no bounds": (None, None, ["2026-09", "2026-10", "2026-11"]),
    "since": ("2026-10", None, ["2026-10", "2026-11"]),
    "until, included": (None, "2026-10", ["2026-09", "2026-10"]),
    "one month": ("2026-10", "2026-10", ["2026-10"]),
    "none moved then": ("2027-01", None, []),
}


@pytest.mark.parametrize("since, until, expected", BOUND_CASES.values(), ids=BOUND_CASES)
def test_since_and_until_are_months_both_included(
    since: str | None, until: str | None, expected: list[str]
) -> None:
    payments = [
        pay(1, "1.00", made="2026-09-30", settled="2026-09-30"),
        pay(2, "2.00", made="2026-10-01", settled="2026-10-31"),
        pay(3, "3.00", made="2026-11-01", settled="2026-11-01"),
    ]
    register = build_register([paylist(1, *payments)], since=since, until=until)
    assert [m.month for m in register.months] == expected
    assert len(register.payments) == len(expected)
    assert register.totals.requested == sum((p.amount for p in register.payments), Decimal("0.00"))


def test_failed_is_counted_by_the_services_cause() -> None:
    payments = [
        pay(1, "100.00", "FAILED", cause="INSUFFICIENT_FUNDS"),
        pay(2, "50.00", "FAILED", cause="INSUFFICIENT_FUNDS"),
        pay(3, "10.00", "FAILED", cause="DUPLICATE_PAYMENT"),
        pay(4, "1.00", "FAILED"),
        pay(5, "5.00"),
    ]
    register = build_register([paylist(1, *payments)])
    row = register.months[0].paylists[0]
    assert [(c.cause, c.count, c.amount) for c in row.causes] == [
        ("INSUFFICIENT_FUNDS", 2, Decimal("150.00")),
        ("DUPLICATE_PAYMENT", 1, Decimal("10.00")),
        ("unknown", 1, Decimal("1.00")),
    ]
    assert (row.sums.failed_count, row.sums.paid_count) == (4, 1)
    assert register.causes == row.causes


def test_with_the_files_only_their_payruns_paylists_each_named_by_its_payrun() -> None:
    ours = paylist(7, pay(1, "100.00", paylist_id=7), key=paylist_key("2026-11-contractors"))
    foreign = paylist(8, pay(2, "5.00", paylist_id=8))
    # Under the payrun's key, but other content: a claim, not the payrun's.
    claim = paylist(9, pay(3, "999.00", paylist_id=9), key=paylist_key("2026-12-contractors"))
    payruns = [
        payrun_of("2026-11-contractors", ours),
        Payrun("2026-12-contractors", "paylist 9", (PayrunPayment("ada@example.com", 1, "x"),)),
    ]
    register = build_register(
        [ours, foreign, claim], units_of(payruns), periods={"2026-11-contractors": "2026-11"}
    )
    rows = [row for month in register.months for row in month.paylists]
    assert [(r.paylist_id, r.payrun_id, r.period) for r in rows] == [
        (7, "2026-11-contractors", "2026-11")
    ]
    assert register.left_out == (8, 9)
    assert register.unpaid == ("2026-12-contractors",)  # its key's paylist is not its content
    assert register.files
    assert "No paylist of the account holds 1 payrun of the files (2026-12-contractors)" in (
        register_text(register)
    )
    whole = build_register([ours, foreign, claim])
    assert [r.payrun_id for m in whole.months for r in m.paylists] == [None, None, None]
    assert not whole.files and whole.left_out == () and whole.unpaid == ()


def test_a_split_payrun_names_each_part() -> None:
    payments = tuple(
        PayrunPayment(f"w{n}@example.com", Decimal("1.00"), f"item {n}") for n in range(1001)
    )
    payrun = Payrun("big", "Big run", payments)
    units = units_of([payrun])
    lives = [
        LivePaylist(
            10 + index,
            paylist_key("big", unit.part),
            "Big run",
            tuple(
                pay(n + 1000 * index, "1.00", email=p.email, description=p.description)
                for n, p in enumerate(unit.payments)
            ),
        )
        for index, unit in enumerate(units)
    ]
    register = build_register(lives, units)
    rows = register.months[0].paylists
    assert [(r.payrun_id, r.part, r.sums.requested_count) for r in rows] == [
        ("big", 1, 1000),
        ("big", 2, 1),
    ]
    assert "big part 2" in register_text(register, "payroll/")


def test_payees_by_mailbox_the_most_requested_first() -> None:
    payments = [
        pay(1, "10.00", email="Ada@example.com"),
        pay(2, "5.00", "FAILED", email="ada@example.com", made="2026-12-02", settled="2026-12-02"),
        pay(3, "20.00", email="grace@example.com"),
    ]
    register = build_register([paylist(1, *payments)])
    assert [(p.payee, p.sums.requested, p.sums.failed, p.months) for p in register.payees] == [
        ("grace@example.com", Decimal("20.00"), Decimal("0.00"), 1),
        ("Ada@example.com", Decimal("15.00"), Decimal("5.00"), 2),
    ]


def test_a_merge_record_is_shown_where_one_is_given() -> None:
    record = MergeRecord("0123456789abcdef", "#42", "fin-lead", ("cfo", "controller"))
    register = build_register([paylist(1, pay(1, "1.00"))], merges={1: record})
    assert register.merges_read
    assert register.payments[0].merge == record
    assert "service's side alone" not in register_text(register)
    assert "0123456789abcdef,#42,fin-lead,cfo; controller" in register_csv(register)
    plain = build_register([paylist(1, pay(1, "1.00"))])
    assert not plain.merges_read
    assert "service's side alone" in register_text(plain)
    assert "service's side alone" in register_markdown(plain)


def test_amounts_grouped_for_people_two_places_for_machines() -> None:
    register = build_register([paylist(1, pay(1, "1394500"), pay(2, "0.5", "FAILED"))])
    text, markdown = register_text(register), register_markdown(register)
    assert "1,394,500.00" in text and "1,394,500.00" in markdown
    lines = register_csv(register).splitlines()
    assert len(lines) == 3  # the header, then one row a payment
    assert ",1394500.00,SUCCESS," in lines[1] and ",0.50,FAILED," in lines[2]


MONTH_TEXTS = {
    "2026-11": None,
    "2026-1": "'2026-1' is not a month: write YYYY-MM, such as 2027-01",
    "2026-13": "'2026-13' is not a month: write YYYY-MM, such as 2027-01",
    "2026-00": "'2026-00' is not a month: write YYYY-MM, such as 2027-01",
    "November": "'November' is not a month: write YYYY-MM, such as 2027-01",
    "2026-11-01": "'2026-11-01' is not a month: write YYYY-MM, such as 2027-01",
}


@pytest.mark.parametrize("text, problem", MONTH_TEXTS.items(), ids=list(MONTH_TEXTS))
def test_a_month_is_written_yyyy_mm(text: str, problem: str | None) -> None:
    assert month_problem(text) == problem


def test_a_month_is_utcs() -> None:
    late = datetime(2026, 12, 1, 0, 30, tzinfo=timezone(timedelta(hours=2)))
    assert month_of(late) == "2026-11"
    assert month_of(None) == "undated"


def test_the_chart_shows_the_last_months_settled_and_paid() -> None:
    payments = [
        pay(n, "10.00", "FAILED" if n % 2 else "SUCCESS", made=day, settled=day)
        for n, day in enumerate(
            (f"{2024 + (m // 12)}-{m % 12 + 1:02d}-15" for m in range(30)), start=1
        )
    ]
    register = build_register([paylist(1, *payments)])
    chart = list(months_chart([(m.month, m.sums.paid, m.sums.failed) for m in register.months]))
    assert chart[0] == "```mermaid" and "xychart-beta" in chart
    axis = next(line for line in chart if "x-axis" in line)
    assert axis.count('"') == 2 * CHART_MONTHS and '"2026-06"' in axis and "2024-06" not in axis
    bars = [line.strip() for line in chart if line.strip().startswith("bar ")]
    assert len(bars) == 2  # settled (paid + failed) first, paid over it
    assert '    y-axis "Amount" 0 --> 10.00' in chart
    assert '    y-axis "Amount" 0 --> 1' in list(
        months_chart([("2026-11", Decimal(0), Decimal(0))])
    )
    assert bars[0].startswith("bar [10.00, 10.00") and bars[1].startswith("bar [0.00, 10.00")
    assert f"the last {CHART_MONTHS} of 30 months" in chart[-1]


def test_the_services_text_is_shown_as_text_never_acted_on() -> None:
    payments = [
        pay(1, "1.00", "FAILED", cause="INSUFFICIENT\x1b[2J_FUNDS\u202e"),
        pay(2, "1.00", email="e\u202evil@example.com", description="pay\x1b[31m me"),
    ]
    text = register_text(build_register([paylist(1, *payments)]))
    assert "\x1b" not in text and "\u202e" not in text
    assert "INSUFFICIENT\\x1b[2J_FUNDS\\u202e" in text
    assert '"e\\u202evil@example.com"' in text


def test_markdown_keeps_the_newest_months_and_sums_the_earlier_in_one_row() -> None:
    months = [f"{2020 + m // 12}-{m % 12 + 1:02d}" for m in range(60)]
    lives = [
        paylist(
            n + 1, pay(n + 1, "10.00", made=f"{month}-10", settled=f"{month}-10", paylist_id=n + 1)
        )
        for n, month in enumerate(months * 5)  # five paylists a month
    ]
    markdown = register_markdown(build_register(lives))
    table = markdown[markdown.index("| month |") :]
    rows = [line for line in table.splitlines() if line.startswith("|  | ")]
    assert len(rows) == MARKDOWN_PAYLISTS  # the newest 40 months, five paylists each
    assert "| **earlier: 20 months** | 2020-01 to 2021-08 | **100** | **1,000.00** |" in table
    assert "| **total** |  | **300** | **3,000.00** |" in table
    assert "**2021-08**" not in table and "**2021-09**" in table
    assert len(markdown) < 65536


SAME_CASES = {
    "the same text": ("Ada@example.com", "10.00", "Retainer", True),
    "the mailbox written in another case": ("ada@EXAMPLE.com", "10", "Retainer", True),
    "a look-alike description (Cyrillic a)": ("Ada@example.com", "10.00", "Ret\u0430iner", True),
    "another amount": ("Ada@example.com", "10.01", "Retainer", False),
    "another description": ("Ada@example.com", "10.00", "Retainers", False),
    "another payee": ("grace@example.com", "10.00", "Retainer", False),
}


@pytest.mark.parametrize("email, amount, description, same", SAME_CASES.values(), ids=SAME_CASES)
def test_a_paylist_is_the_payruns_by_the_identity_rule_whatever_its_text(
    email: str, amount: str, description: str, same: bool
) -> None:
    """`same_payments` asks the exact text first: the rule still decides when it differs."""
    from reconciler.plan.payruns import same_payments

    mine = [PayrunPayment(email, Decimal(amount), description)]
    theirs = [pay(1, "10.00", email="Ada@example.com", description="Retainer")]
    assert same_payments(mine, theirs) is same
    assert same_payments(mine * 2, theirs) is False  # as many times each
