"""`comment PLAN` renders what `comment PATH` rendered from the same plan, money included: the
wallet line of its payruns and the money of the window (untraced paylists) travel in the saved
plan, inside what it signs."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from reconciler.plan import LiveState, Plan, diff
from reconciler.plan.account import Account
from reconciler.plan.money import Figure, MoneyReport, PaymentAlert, Untraced
from reconciler.plan.resume import resume
from reconciler.plan.review import Review
from reconciler.plan.saved import load_saved_plan, saved_plan_document, write_saved_plan
from reconciler.plan.signing import PlanKey, UntrustedPlan, sign
from reconciler.sandbox import SandboxServer
from tests.plan.factories import quickstart
from tests.plan.test_money_drift import _file, _paylist_outside, _process, _run, demo

__all__ = ["demo"]

KEY = PlanKey(b"tok-Zk4r9Qm2Xv7Lp0Wn5Bt8", "RECONCILER_PLAN_KEY")
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_comment_of_the_saved_plan_is_the_comment_of_its_files(
    demo: SandboxServer, tmp_path: Path
) -> None:
    path = _file(tmp_path)  # a payrun to pay
    outside = _paylist_outside(demo, "300.00", "Side bonus")  # an untraced paylist
    _process(demo)
    saved = tmp_path / "plan.json"
    from_files = _run("comment", str(path), "--out", str(saved), server=demo)
    assert from_files.returncode == 0, from_files.stderr
    assert "Wallet: balance" in from_files.stdout
    assert f"paylist {outside}, made" in from_files.stdout
    from_plan = _run("comment", str(saved), server=demo)
    assert from_plan.returncode == 0, from_plan.stderr
    assert from_plan.stdout == from_files.stdout


def _money() -> MoneyReport:
    """A report with every part filled: figures, an untraced paylist, a failed and a stuck
    payment, the journal's top-ups and a negative balance (an overdraft)."""
    alert = PaymentAlert(9, 4, "ada@example.com", Decimal("20.50"), "FAILED", "X", NOW, "pay it")
    return MoneyReport(
        since=NOW - timedelta(days=35),
        relative="the last 35 days",
        paid=Figure(1, Decimal("1750.00")),
        untraced=(Untraced(3, None, "Side bonus", 1, Decimal("300.00")),),
        failed=(alert,),
        stuck=(replace(alert, status="PENDING", cause=None, created_at=None),),
        pending=Figure(1, Decimal("20.50")),
        top_ups=Figure(2, Decimal("500.123")),
        balance=Decimal("-12.50"),
    )


def test_the_money_report_travels_in_the_signed_plan(tmp_path: Path) -> None:
    desired, live = quickstart()
    path = tmp_path / "plan.json"
    plan = replace(diff(desired, live), money=_money())
    write_saved_plan(path, _document(plan, live))
    saved = load_saved_plan(path, KEY)
    resumed = resume(saved, live, key=KEY, environ={}, now=NOW)
    assert resumed.money == _money()
    document = json.loads(path.read_text())
    document["reported"]["money"]["untraced"][0]["total"] = "3.00"  # edited without the key
    write_saved_plan(path, document)
    with pytest.raises(UntrustedPlan):
        load_saved_plan(path, KEY)


def test_a_plan_saved_before_the_money_travelled_still_loads(tmp_path: Path) -> None:
    desired, live = quickstart()
    path = tmp_path / "plan.json"
    document = _document(diff(desired, live), live)
    assert document["reported"]["money"] is None  # no money was read
    del document["reported"]["money"]
    document["mac"] = sign(document, KEY)
    write_saved_plan(path, document)
    resumed = resume(load_saved_plan(path, KEY), live, key=KEY, environ={}, now=NOW)
    assert resumed.money is None
    assert [c.address for c in resumed.changes] == [c.address for c in diff(desired, live).changes]


def _document(plan: Plan, live: LiveState) -> dict[str, Any]:
    return saved_plan_document(
        plan,
        live,
        key=KEY,
        account=Account.of("https://api.example.com", 7, None),
        review=Review("hmac-sha256:" + "ab" * 32, None, None),
        created_at=NOW,
        tool_version="1.2.3",
    )
