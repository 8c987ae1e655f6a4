"""The money rules (reconciler/plan/money.py) as a table of cases: no service, no I/O."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from reconciler.plan.money import LiveMoney, MoneyWindow, WindowPaylist, money_report
from reconciler.service.models import Payment, PaymentStatus

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
WINDOW = MoneyWindow(since=NOW - timedelta(days=35), stuck_after=timedelta(hours=24))
OURS, THEIRS = "a" * 32, "b" * 32


def _paylist(paylist_id: int, key: str, days_ago: int = 1) -> WindowPaylist:
    created = NOW - timedelta(days=days_ago)
    return WindowPaylist(paylist_id, key, f"paylist {paylist_id}", Decimal("10.00"), created)


def _payment(
    payment_id: int,
    paylist_id: int,
    status: str,
    amount: str = "10.00",
    *,
    email: str = "ada@example.com",
    cause: str | None = None,
    hours_ago: int = 1,
) -> Payment:
    return Payment(
        id=payment_id,
        description="November",
        amount=Decimal(amount),
        worker_email=email,
        paylist_id=paylist_id,
        status=PaymentStatus(status),
        cause=cause,
        created_at=NOW - timedelta(hours=hours_ago),
    )


@pytest.mark.parametrize(
    ("case", "paylists", "payments", "untraced", "failed", "stuck"),
    [
        ("ours, paid", [_paylist(1, OURS)], [_payment(1, 1, "SUCCESS")], [], [], []),
        ("theirs, in the window", [_paylist(1, THEIRS)], [_payment(1, 1, "SUCCESS")], [1], [], []),
        ("theirs, before the window", [_paylist(1, THEIRS, 40)], [], [], [], []),
        (
            "ours, failed",
            [_paylist(1, OURS)],
            [_payment(1, 1, "FAILED", cause="INSUFFICIENT_FUNDS")],
            [],
            [1],
            [],
        ),
        (
            "ours, failed then paid again in a later paylist",
            [_paylist(1, OURS), _paylist(2, OURS)],
            [_payment(1, 1, "FAILED", cause="INSUFFICIENT_FUNDS"), _payment(2, 2, "SUCCESS")],
            [],
            [],
            [],
        ),
        (
            "ours, failed, and another amount paid later",
            [_paylist(1, OURS), _paylist(2, OURS)],
            [_payment(1, 1, "FAILED", cause="WALLET_DISABLED"), _payment(2, 2, "SUCCESS", "9.00")],
            [],
            [1],
            [],
        ),
        ("ours, pending an hour", [_paylist(1, OURS)], [_payment(1, 1, "PENDING")], [], [], []),
        (
            "ours, pending two days",
            [_paylist(1, OURS, 2)],
            [_payment(1, 1, "PENDING", hours_ago=48)],
            [],
            [],
            [1],
        ),
        (
            "theirs, failed: the paylist is untraced, its payments not listed",
            [_paylist(1, THEIRS)],
            [_payment(1, 1, "FAILED", cause="INSUFFICIENT_FUNDS")],
            [1],
            [],
            [],
        ),
    ],
)
def test_money_rules(
    case: str,
    paylists: list[WindowPaylist],
    payments: list[Payment],
    untraced: list[int],
    failed: list[int],
    stuck: list[int],
) -> None:
    report = money_report(LiveMoney(WINDOW, NOW, tuple(paylists), tuple(payments)), {OURS})
    assert [u.paylist_id for u in report.untraced] == untraced, case
    assert [a.payment_id for a in report.failed] == failed, case
    assert [a.payment_id for a in report.stuck] == stuck, case
    assert report.needs_action == bool(untraced or failed or stuck), case


def test_a_payrun_paid_before_it_grew_still_traces_its_paylist() -> None:
    """Paid as one paylist, then edited past 1,000 payments (a conflict, two parts asked for):
    the paylist it was paid as is the payrun's, not untraced money."""
    from reconciler.plan.payruns import Unit, paylist_key, traced_keys

    grown = [Unit("2026-11", 1, "November", ()), Unit("2026-11", 2, "November", ())]
    paid_whole, theirs = paylist_key("2026-11"), THEIRS
    assert traced_keys(grown, {paid_whole, theirs}) == {paid_whole}
    shrunk = [Unit("2026-11", None, "November", ())]
    parts = {paylist_key("2026-11", 1), paylist_key("2026-11", 2)}
    assert traced_keys(shrunk, parts | {theirs}) == parts
