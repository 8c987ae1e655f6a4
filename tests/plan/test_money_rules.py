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
    settled_hours_ago: int | None = None,
    description: str = "November",
) -> Payment:
    return Payment(
        id=payment_id,
        description=description,
        amount=Decimal(amount),
        worker_email=email,
        paylist_id=paylist_id,
        status=PaymentStatus(status),
        cause=cause,
        created_at=NOW - timedelta(hours=hours_ago),
        updated_at=None if settled_hours_ago is None else NOW - timedelta(hours=settled_hours_ago),
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
        (
            "ours, failed, then the same payee and amount paid for another description",
            [_paylist(1, OURS), _paylist(2, OURS)],
            [
                _payment(1, 1, "FAILED", cause="INSUFFICIENT_FUNDS"),
                _payment(2, 2, "SUCCESS", description="December"),
            ],
            [],
            [1],
            [],
        ),
        (
            "ours, failed, then paid again under a look-alike description",
            [_paylist(1, OURS), _paylist(2, OURS)],
            [
                _payment(1, 1, "FAILED", cause="INSUFFICIENT_FUNDS"),
                _payment(2, 2, "SUCCESS", description="N\u043evember  "),
            ],
            [],
            [],
            [],
        ),
        (
            "ours, failed, paid again in a paylist made by hand: not a payrun's",
            [_paylist(1, OURS), _paylist(2, THEIRS)],
            [_payment(1, 1, "FAILED", cause="INSUFFICIENT_FUNDS"), _payment(2, 2, "SUCCESS")],
            [2],
            [1],
            [],
        ),
        (
            "theirs, made before the window, settled in it",
            [_paylist(1, THEIRS, 40)],
            [_payment(1, 1, "SUCCESS", hours_ago=40 * 24, settled_hours_ago=2)],
            [1],
            [],
            [],
        ),
        (
            "theirs, made and settled before the window",
            [_paylist(1, THEIRS, 40)],
            [_payment(1, 1, "SUCCESS", hours_ago=40 * 24, settled_hours_ago=39 * 24)],
            [],
            [],
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
            "theirs, failed: the paylist is untraced (0.00 moved), its failure is failed money",
            [_paylist(1, THEIRS)],
            [_payment(1, 1, "FAILED", cause="INSUFFICIENT_FUNDS")],
            [1],
            [1],
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
    ours = {p.paylist_id for p in paylists if p.idempotence_key == OURS}
    report = money_report(LiveMoney(WINDOW, NOW, tuple(paylists), tuple(payments)), ours)
    assert [u.paylist_id for u in report.untraced] == untraced, case
    assert [a.payment_id for a in report.failed] == failed, case
    assert [a.payment_id for a in report.stuck] == stuck, case
    assert report.needs_action == bool(untraced or failed or stuck), case


def test_a_paylist_moved_in_the_window_by_the_journal_alone_is_reported() -> None:
    """Made 40 days ago, its payment's dates not read as settled: the journal's withdrawal
    for that payment within the window puts it in the window."""
    paylists = (_paylist(1, THEIRS, 40),)
    payments = (_payment(7, 1, "SUCCESS", hours_ago=40 * 24),)
    quiet = money_report(LiveMoney(WINDOW, NOW, paylists, payments), set())
    assert quiet.untraced == ()
    moved = LiveMoney(WINDOW, NOW, paylists, payments, paid_in_window=frozenset({"7"}))
    assert [u.paylist_id for u in money_report(moved, set()).untraced] == [1]


def test_a_key_is_a_claim_the_content_must_honour() -> None:
    """A paylist is a payrun's only under one of its keys as split now, and with its content:
    a paylist under the key with other content, or of a payrun since resized, is not."""
    from reconciler.desired.model import PayrunPayment
    from reconciler.plan.payruns import LivePaylist, Unit, paylist_key, traced_paylists

    pay = PayrunPayment("ada@example.com", Decimal("10.00"), "November")
    unit = Unit("2026-11", None, "November", (pay,))
    same = _payment(1, 1, "SUCCESS", email="Ada@example.com", description="N\u043evember")
    other = _payment(2, 2, "SUCCESS", "777.00", email="eve@example.com")
    key = paylist_key("2026-11")
    paylists = [
        LivePaylist(1, key, "November", (same,)),
        LivePaylist(2, key, "November", (other,)),
        LivePaylist(3, key, "Another", (same,)),
        LivePaylist(4, THEIRS, "November", (same,)),
    ]
    assert traced_paylists([unit], paylists) == {1}
    grown = [Unit("2026-11", 1, "November", (pay,)), Unit("2026-11", 2, "November", (pay,))]
    assert traced_paylists(grown, paylists) == set()


def test_an_untraced_paylist_counts_what_moved_and_its_failures_are_failed() -> None:
    """Issue 48: an untraced paylist's FAILED payments moved nothing: they are failed money,
    not part of the untraced total (the money line said "0 failed payments")."""
    paylists = (_paylist(1, THEIRS),)
    payments = (
        _payment(1, 1, "SUCCESS", "6.00"),
        _payment(2, 1, "FAILED", "4.00", cause="INSUFFICIENT_FUNDS"),
    )
    report = money_report(LiveMoney(WINDOW, NOW, paylists, payments), set())
    (untraced,) = report.untraced
    assert (untraced.payments, untraced.total) == (1, Decimal("6.00"))
    assert [alert.payment_id for alert in report.failed] == [2]
    assert report.line() == ("1 untraced paylist (6.00), 1 failed payment (4.00), 0 stuck payments")


def test_the_account_s_known_history_is_not_untraced_while_its_total_holds() -> None:
    """`history.paylists` names a paylist by id with its total: neither untraced nor failed;
    a paylist whose total is not the one written is untraced again."""
    paylists = (_paylist(1, THEIRS), _paylist(2, THEIRS))
    payments = (_payment(1, 1, "SUCCESS"), _payment(2, 2, "FAILED", cause="WALLET_DISABLED"))
    live = LiveMoney(WINDOW, NOW, paylists, payments)
    known = money_report(live, set(), {1: Decimal("10.00"), 2: Decimal("10.00")})
    assert (known.untraced, known.failed, known.needs_action) == ((), (), False)
    other_total = money_report(live, set(), {1: Decimal("99.00"), 2: Decimal("10.00")})
    assert [u.paylist_id for u in other_total.untraced] == [1]
