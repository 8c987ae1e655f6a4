"""`drift --all` is a drift report in every format, as `drift` is for one account: titled
"reconciler drift report", each account checked (not planned), and one that fails "could not
be checked"; `plan --all` keeps the plan's words."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.accounts.support import Account, run, seed_live, write_accounts, write_state

#: What a plan says of itself and a drift report must not.
PLAN_WORDS = re.compile(r"reconciler plan\b|\bplanned\b|could not be planned", re.I)


@pytest.fixture
def two(tmp_path: Path, three: list[Account]) -> list[Account]:
    """eu has drifted (a worker to invite); us cannot be read (its token variable is unset)."""
    eu, us, _apac = three
    write_accounts(tmp_path, [eu, us])
    for account in (eu, us):
        seed_live(account, [0])
        write_state(tmp_path / "accounts" / account.name, account.name, [0, 1])
    return [eu, us]


def _drift(root: Path, accounts: list[Account], *args: str) -> str:
    result = run(root, accounts[:1], "drift", "--all", *args)  # us's token is not given
    assert result.returncode == 1, result.stdout + result.stderr  # us failed
    return result.stdout


def test_the_markdown_is_a_drift_report(tmp_path: Path, two: list[Account]) -> None:
    report = _drift(tmp_path, two, "--format", "markdown")
    assert report.startswith("### reconciler drift report: 2 accounts\n"), report[:200]
    assert "> :no_entry: **1 account could not be checked:** `us`." in report
    assert "us: could not be checked" in report
    assert "W-1" in report  # eu's drift, as a report shows it
    assert not PLAN_WORDS.search(report), PLAN_WORDS.findall(report)


def test_the_json_summary_counts_the_accounts_checked(tmp_path: Path, two: list[Account]) -> None:
    document = json.loads(_drift(tmp_path, two, "--format", "json"))
    summary = document["summary"]
    assert summary["checked"] == 1 and summary["failed"] == ["us"]
    assert "planned" not in summary
    assert [entry["name"] for entry in document["accounts"]] == ["eu", "us"]
    assert "plan" in document["accounts"][0]  # each account's plan JSON, as `drift` prints it


def test_the_text_says_each_account_was_checked(tmp_path: Path, two: list[Account]) -> None:
    text = _drift(tmp_path, two)
    assert text.rstrip().endswith("2 accounts: 1 checked, 1 failed (us); with drift: eu.")
    assert not PLAN_WORDS.search(text), PLAN_WORDS.findall(text)


def test_plan_all_keeps_the_plan_s_words(tmp_path: Path, two: list[Account]) -> None:
    result = run(tmp_path, two[:1], "plan", "--all", "--format", "markdown")
    assert result.stdout.startswith("### reconciler plan: 2 accounts\n")
    assert "> :no_entry: **1 account could not be planned:** `us`." in result.stdout
    text = run(tmp_path, two[:1], "plan", "--all").stdout
    assert text.rstrip().endswith("2 accounts: 1 planned, 1 failed (us); with changes: eu.")
    document = json.loads(run(tmp_path, two[:1], "plan", "--all", "--format", "json").stdout)
    assert document["summary"]["planned"] == 1
