"""The ledger: one outcome per change, the verdict, and its two renderings."""

from __future__ import annotations

import json
import threading

import pytest

from reconciler.apply import Ledger, Outcome
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
