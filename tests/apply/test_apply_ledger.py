"""The ledger: one outcome per change, the verdict, and its two renderings."""

from __future__ import annotations

import json
import threading
from decimal import Decimal

import pytest

from reconciler.apply import Ledger, Outcome
from reconciler.apply.ledger import Entry
from reconciler.apply.report import ledger_json, ledger_text
from reconciler.plan import Inactivate, Invite, Replace, WebhookUpdate
from tests.plan.factories import agreement, desired_webhook, live_webhook, want

CHANGES = (
    Invite(want("ENG-001")),
    Inactivate("ENG-002", agreement(2, "ENG-002")),
    Replace(agreement(3, "ENG-003"), want("ENG-003"), ()),
    WebhookUpdate(live_webhook(), desired_webhook(events=("KYC", "PAYMENT")), ()),
)


def test_every_change_applied_is_complete() -> None:
    ledger = Ledger(CHANGES)
    for index in range(len(CHANGES)):
        ledger.record(index, Outcome.APPLIED)
    assert ledger.complete
    assert ledger.summary_line() == "Apply complete: 4 applied."


@pytest.mark.parametrize(
    ("outcomes", "line"),
    [
        (
            [Outcome.APPLIED, Outcome.FAILED, Outcome.SKIPPED, Outcome.APPLIED],
            "Apply incomplete: 2 applied, 1 failed, 1 skipped. Run apply again to converge.",
        ),
        (
            [Outcome.APPLIED, Outcome.APPLIED, Outcome.APPLIED],
            "Apply incomplete: 3 applied, 0 failed, 1 skipped. Run apply again to converge.",
        ),
    ],
)
def test_anything_not_applied_is_incomplete(outcomes: list[Outcome], line: str) -> None:
    ledger = Ledger(CHANGES)
    for index, outcome in enumerate(outcomes):
        ledger.record(index, outcome, "why")
    ledger.settle_the_rest("interrupted before it was sent")
    assert not ledger.complete
    assert ledger.summary_line() == line


def test_a_change_settles_once() -> None:
    ledger = Ledger(CHANGES)
    ledger.record(0, Outcome.APPLIED)
    with pytest.raises(RuntimeError, match="already settled"):
        ledger.record(0, Outcome.FAILED, "again")


def test_threads_record_in_any_order_and_entries_keep_plan_order() -> None:
    changes = tuple(Invite(want(f"ENG-{n:03d}")) for n in range(200))
    seen: list[str] = []
    ledger = Ledger(changes, on_settle=lambda entry: seen.append(entry.address))
    threads = [
        threading.Thread(target=lambda k=k: [ledger.record(i, Outcome.APPLIED) for i in k])
        for k in (range(199, -1, -2), range(0, 200, 2))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [entry.address for entry in ledger.entries] == [c.address for c in changes]
    assert sorted(seen) == sorted(c.address for c in changes)


def test_json_says_each_outcome_and_the_verdict() -> None:
    ledger = Ledger(CHANGES)
    ledger.record(0, Outcome.APPLIED, agreement_id=41)
    ledger.record(1, Outcome.FAILED, "404 Not Found", agreement_id=2)
    ledger.interrupted = True
    ledger.settle_the_rest("interrupted before it was sent")
    document = json.loads(ledger_json(ledger))
    assert document["complete"] is False
    assert document["interrupted"] is True
    assert document["summary"] == {"applied": 1, "failed": 1, "skipped": 2}
    assert document["changes"][0] == {
        "address": 'worker["ENG-001"]',
        "action": "invite",
        "outcome": "applied",
        "detail": None,
        "agreement_id": 41,
    }
    assert [c["action"] for c in document["changes"]] == [
        "invite",
        "inactivate",
        "replace",
        "webhook_update",
    ]
    assert document["changes"][3]["detail"] == "interrupted before it was sent"


def test_text_is_a_table_and_the_summary_line() -> None:
    ledger = Ledger(CHANGES[:2])
    ledger.record(0, Outcome.APPLIED, agreement_id=41)
    ledger.record(1, Outcome.SKIPPED, "agreement 2 no longer exists")
    assert ledger_text(ledger).splitlines() == [
        "ADDRESS            ACTION      OUTCOME  AGREEMENT  DETAIL",
        'worker["ENG-001"]  invite      applied         41',
        'worker["ENG-002"]  inactivate  skipped             agreement 2 no longer exists',
        "",
        "Apply incomplete: 1 applied, 0 failed, 1 skipped. Run apply again to converge.",
    ]
    coloured = ledger_text(ledger, color=True)
    assert "\x1b[" in coloured and "skipped" in coloured


def test_an_empty_plan_is_complete() -> None:
    ledger = Ledger(())
    assert ledger.complete
    assert ledger_text(ledger) == "Apply complete: nothing to do.\n"


def test_an_interrupted_apply_of_thousands_is_summed_up_not_listed() -> None:
    changes = tuple(Invite(want(f"ENG-{n:05d}")) for n in range(3001))
    ledger = Ledger(changes)
    for index in range(1000):
        ledger.record(index, Outcome.APPLIED)
    ledger.record(1000, Outcome.FAILED, "the service refused it")
    ledger.interrupted = True
    ledger.settle_the_rest("interrupted before it was sent")

    text = ledger_text(ledger)

    lines = text.splitlines()
    assert len(lines) < 15, text
    assert lines[0] == "Failed (1):"
    assert 'worker["ENG-01000"]' in text and "the service refused it" in text
    assert "  invite: 1,000 applied, 1 failed, 2,000 skipped" in lines
    assert lines[-1].startswith("Apply interrupted: 1,000 applied, 1 failed, 2,000 skipped.")
    assert len(json.loads(ledger_json(ledger))["changes"]) == 3001  # every row stays in JSON


def test_a_payment_row_names_payee_amount_and_paylist_and_fits_the_width() -> None:
    ledger = Ledger(CHANGES[:1])
    ledger.record(0, Outcome.APPLIED, agreement_id=41)
    address = 'paylist["2026-12-contractors"].payments[264]'
    paid = Entry(address, "pay", Outcome.APPLIED, None, None, "CW-0264", Decimal("7400"), 12)
    cause = "INSUFFICIENT_FUNDS; to retry, add a new payrun with this payment"
    failed = Entry(address, "pay", Outcome.FAILED, cause, None, "ada@example.com", Decimal(1), 12)
    ledger.add_payment(paid)
    ledger.add_payment(failed)
    whole = ledger_text(ledger).splitlines()
    assert whole[0].split() == [
        *["ADDRESS", "ACTION", "OUTCOME", "AGREEMENT", "PAYEE", "AMOUNT"],
        "PAYLIST",
        "DETAIL",
    ]
    assert whole[2].split() == [address, "pay", "applied", "CW-0264", "7,400.00", "12"]
    narrow = ledger_text(ledger, width=60).splitlines()
    assert all(len(line) <= 60 for line in narrow), narrow
    assert narrow[narrow.index(f"{address}  pay  applied") + 1] == (
        "    payee CW-0264  amount 7,400.00  paylist 12"
    )
    assert " ".join(narrow).split().count("INSUFFICIENT_FUNDS;") == 1  # whole, between words
    document = json.loads(ledger_json(ledger))
    assert document["format_version"] == "1.1"
    assert document["changes"][1] == {
        "address": address,
        "action": "pay",
        "outcome": "applied",
        "detail": None,
        "agreement_id": None,
        "payee": "CW-0264",
        "amount": "7400.00",
        "paylist_id": 12,
    }
    assert "payee" not in document["changes"][0]  # a worker's row is as it was
