"""The plan's first line tells the truth for every mix of changes, payruns, drift and money.

Each mix is rendered as text and Markdown: the first line says "will perform" exactly when the
last line (`Plan: ...`) has something to do (a change or a payrun to pay), and otherwise names
each reason the account is not as the file says, never "matches" while one holds.
"""

from __future__ import annotations

import dataclasses
import itertools
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from reconciler.desired.ignore import IgnoreRule
from reconciler.desired.model import PayrunPayment
from reconciler.plan import Plan, PlanOptions, diff
from reconciler.plan.model import Ignored
from reconciler.plan.money import Figure, MoneyReport, Untraced
from reconciler.plan.payruns import CONFLICT, PAID, REFUSED, TO_PAY, PayrunDecision
from reconciler.render import MarkdownRenderer, TextRenderer
from reconciler.render.base import strict_headline
from tests.plan.factories import agreement, desired_state, live_state, want

ACTIONS = "reconciler will perform the following actions:"
DIFFERS = "the account still differs from the file where the plan cannot act"
MONEY = "money was paid outside the files' payruns or needs action"

CHANGES = ("none", "invite")
PAYRUNS = ("none", TO_PAY, PAID, CONFLICT, REFUSED)
DRIFT = ("in sync", "drifted")
MONEY_STATES = ("traced", "untraced")


def _payrun(state: str) -> PayrunDecision:
    return PayrunDecision(
        payrun_id="2026-12-contractors",
        part=None,
        key="k-2026-12",
        description="December",
        payments=(PayrunPayment("ada@example.com", Decimal("1394500.00"), "December"),),
        state=state,
        reasons=("the paylist was made with other payments",) if state == CONFLICT else (),
        outcomes={"SUCCESS": 1} if state == PAID else {},
        paylist_id=7 if state == PAID else None,
    )


def _money(untraced: bool) -> MoneyReport:
    outside = Untraced(7, datetime(2026, 12, 1, tzinfo=UTC), "Side bonus", 1, Decimal("300.00"))
    return MoneyReport(
        since=datetime(2026, 11, 1, tzinfo=UTC),
        relative=None,
        paid=Figure(1, Decimal("300.00")),
        untraced=(outside,) if untraced else (),
        failed=(),
        stuck=(),
        pending=Figure(),
        top_ups=None,
        balance=None,
    )


def _plan(changes: str, payrun: str, drift: str, money: str) -> Plan:
    job = "Staff" if drift == "drifted" else "Engineer"  # a job title cannot change in place
    wanted = [want("ENG-001", job_title=job)]
    if changes == "invite":
        wanted.append(want("ENG-002"))
    plan = diff(desired_state(*wanted), live_state(agreement(1, "ENG-001")), PlanOptions())
    return dataclasses.replace(
        plan,
        payruns=() if payrun == "none" else (_payrun(payrun),),
        money=_money(money == "untraced"),
    )


def _expected(changes: str, payrun: str, drift: str, money: str) -> str:
    if changes != "none" or payrun == TO_PAY:
        return ACTIONS
    reasons = []
    if drift == "drifted" or payrun in (CONFLICT, REFUSED):
        reasons.append(DIFFERS)
    if money == "untraced":
        reasons.append(MONEY)
    if not reasons:
        return "No changes. The account matches the file."
    return f"No changes to apply, but {' and '.join(reasons)} (below)."


MIXES = list(itertools.product(CHANGES, PAYRUNS, DRIFT, MONEY_STATES))


@pytest.mark.parametrize(
    ("changes", "payrun", "drift", "money"), MIXES, ids=["-".join(mix) for mix in MIXES]
)
def test_the_first_line_tells_the_truth(changes: str, payrun: str, drift: str, money: str) -> None:
    plan = _plan(changes, payrun, drift, money)
    headline = _expected(changes, payrun, drift, money)
    text = TextRenderer().render(plan)
    first, last = text.splitlines()[0], text.splitlines()[-2]
    assert first == headline
    if headline != ACTIONS:  # the comment says what it does in its table
        assert headline in MarkdownRenderer().render(plan)
    acts = bool(plan.changes) or "1 payrun to pay" in last
    assert (first == ACTIONS) == acts, last
    if headline != "No changes. The account matches the file.":
        assert "The account matches the file" not in text


def test_strict_names_unmanaged_workers_beside_the_other_reasons() -> None:
    plan = diff(
        desired_state(want("ENG-001", job_title="Staff")),
        live_state(agreement(1, "ENG-001"), agreement(2, "OPS-001")),
    )
    assert strict_headline(plan) == (
        f"No changes to apply, but {DIFFERS} and 1 open agreement not owned by the file make "
        "`drift --strict` report drift (below)."
    )
    alone = diff(
        desired_state(want("ENG-001")), live_state(agreement(1, "ENG-001"), agreement(2, "OPS-1"))
    )
    assert strict_headline(alone) == (
        "No changes to apply, but 1 open agreement not owned by the file (unmanaged, listed "
        "below) make `drift --strict` report drift."
    )
    assert strict_headline(dataclasses.replace(alone, payruns=(_payrun(TO_PAY),))) == ACTIONS


def test_a_narrowed_plan_still_names_the_money() -> None:
    plan = diff(
        desired_state(want("ENG-001")),
        live_state(agreement(1, "ENG-001")),
        PlanOptions(targets=frozenset({"ENG-404"})),
    )
    assert dataclasses.replace(plan, money=_money(True)).headline == (
        f"No changes among what --target and --exclude selected, but {MONEY} (below)."
    )


def test_drift_that_ignore_rules_hide_is_not_called_a_match() -> None:
    plan = diff(desired_state(want("ENG-001")), live_state(agreement(1, "ENG-001")))
    rule = IgnoreRule('worker["ENG-001"].jobTitle', "waits for HR", "@ana", date(2027, 1, 1))
    hidden = dataclasses.replace(plan, ignored=(Ignored('worker["ENG-001"].jobTitle', rule),))
    assert hidden.headline == (
        "No changes. The account matches the file but for the drift ignore rules hide."
    )
