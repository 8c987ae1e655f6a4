"""Several accounts side by side: every line an account's work logs names that account, from
whichever thread wrote it (its refresh, its page fetchers, its webhook and money reads, its
apply's workers), and no line of one account names another.

eu is on one sandbox server and apac on the other, whose service fails half its requests with
a 503 (so apac's reads retry): a line's URL says whose server it went to, so an HTTP line or a
retry under the wrong name shows."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.accounts.support import Account, run, seed_live, write_accounts, write_state


def _setup(root: Path, accounts: list[Account]) -> None:
    write_accounts(root, accounts)
    for account in accounts:
        seed_live(account, range(0, 300))  # three pages of agreements, read side by side
        write_state(root / "accounts" / account.name, account.name, range(0, 302))


def _json_lines(stderr: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]


def _server_of(line: str, accounts: list[Account]) -> str | None:
    """The account whose server a line's URL names (None: it names none)."""
    for account in accounts:
        if account.server.base_url in line:
            return account.name
    return None


def _two(three: list[Account]) -> list[Account]:
    eu, _us, apac = three  # eu and apac: one account on each server
    return [eu, apac]


def test_plan_all_names_the_account_on_every_line_from_every_thread(
    tmp_path: Path, three: list[Account]
) -> None:
    eu, apac = accounts = _two(three)
    _setup(tmp_path, accounts)
    apac.controls.set_faults(error_rate=0.5, error_status=503, seed=3)
    try:
        result = run(
            tmp_path, accounts, "plan", "--all", "--format", "json",
            "--log-level", "info", "--log-format", "json",
            RECONCILER_RETRY_ATTEMPTS="10",
        )  # fmt: skip
    finally:
        apac.controls.set_faults()
    assert result.returncode == 0, result.stderr
    events = _json_lines(result.stderr)
    retries = [e for e in events if e["event"].startswith("retrying in")]
    assert retries, result.stderr
    assert all(e.get("account") == "apac" for e in retries), retries
    for name in ("eu", "apac"):
        assert [e.get("account") for e in events if e["event"] == "loaded"].count(name) == 1
    # The HTTP library's lines, written by the page fetchers and the other reading threads:
    # each names the account whose server it went to.
    requests = [e for e in events if e["event"].startswith("HTTP Request:")]
    assert len(requests) >= 8, result.stderr
    for event in requests:
        assert event.get("account") == _server_of(event["event"], accounts), event
    assert {e["account"] for e in requests} == {eu.name, apac.name}
    # Nothing the accounts' work logged goes unnamed.
    assert all("account" in event for event in events), [e for e in events if "account" not in e]


def test_drift_all_text_log_names_the_account_of_its_retries(
    tmp_path: Path, three: list[Account]
) -> None:
    accounts = _two(three)
    apac = accounts[1]
    _setup(tmp_path, accounts)
    apac.controls.set_faults(error_rate=0.5, error_status=503, seed=3)
    try:
        result = run(
            tmp_path, accounts, "drift", "--all",
            "--log-level", "info", "--log-format", "console",
            RECONCILER_RETRY_ATTEMPTS="10",
        )  # fmt: skip
    finally:
        apac.controls.set_faults()
    assert result.returncode == 2, result.stdout + result.stderr  # both have drifted
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    retries = [line for line in lines if "retrying in" in line]
    assert retries, result.stderr
    assert all(re.search(r"\baccount=apac\b", line) for line in retries), retries
    for line in lines:
        named = re.findall(r"\baccount=(\w+)", line)
        assert len(named) == 1, line
        server = _server_of(line, accounts)
        assert server is None or named == [server], line


def test_apply_dir_names_the_account_on_its_workers_lines(
    tmp_path: Path, three: list[Account]
) -> None:
    accounts = _two(three)
    _setup(tmp_path, accounts)
    planned = run(tmp_path, accounts, "plan", "--all", "--out", "plans")
    assert planned.returncode == 0, planned.stderr
    applied = run(
        tmp_path, accounts, "apply", "plans", "--log-level", "info", "--log-format", "json"
    )
    assert applied.returncode == 0, applied.stdout + applied.stderr
    events = _json_lines(applied.stderr)
    invitations = [e for e in events if "inviteWorkersBulkLocked" in e["event"]]
    assert {e.get("account") for e in invitations} == {"eu", "apac"}, applied.stderr
    for event in events:
        server = _server_of(event["event"], accounts)
        assert "account" in event, event
        assert server is None or event["account"] == server, event


def test_the_same_retry_in_two_accounts_is_said_for_each(
    tmp_path: Path, three: list[Account]
) -> None:
    """A retry said once for requests sent in parallel is said once per account: the second
    account's is not taken for the first's."""
    accounts = _two(three)
    _setup(tmp_path, accounts)
    for account in accounts:  # the same faults, so the same failures at the same attempts
        account.controls.set_faults(error_rate=0.5, error_status=503, seed=3)
    try:
        result = run(
            tmp_path, accounts, "plan", "--all", "--log-format", "json",
            RECONCILER_RETRY_ATTEMPTS="10",
        )  # fmt: skip
    finally:
        for account in accounts:
            account.controls.set_faults()
    assert result.returncode == 0, result.stderr
    retries = [e for e in _json_lines(result.stderr) if e["event"].startswith("retrying in")]
    assert {e.get("account") for e in retries} == {"eu", "apac"}, result.stderr
