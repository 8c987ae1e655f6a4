"""`apply DIR` checks each plan against the accounts file before any request, and converges when
run again: a plan applied already is "already applied" by its record, never stale, and a
record that is not this key's record of this plan is refused (nothing sent), never believed."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from reconciler.apply.lock import MachineLock
from reconciler.plan.account import Account as ServiceAccount
from tests.accounts.support import Account, run, seed_live, write_accounts, write_state


@pytest.fixture
def planned(tmp_path: Path, three: list[Account]) -> list[Account]:
    """eu and us (both on the first server) planned into plans/: each a worker to invite."""
    eu, us, _apac = three
    write_accounts(tmp_path, [eu, us])
    for account in (eu, us):
        seed_live(account, [0])
        write_state(tmp_path / "accounts" / account.name, account.name, [0, 1])
    saved = run(tmp_path, [eu, us], "plan", "--all", "--out", "plans")
    assert saved.returncode == 0, saved.stderr
    return [eu, us]


def _moved(root: Path, name: str, url: str) -> None:
    """The accounts file now gives account `name` another baseUrl."""
    file = root / "reconciler.yaml"
    lines = file.read_text().splitlines()
    at = lines.index(f"  - name: {name}")
    lines[at + 2] = f"    baseUrl: {url}"
    file.write_text("\n".join(lines) + "\n")


def test_a_plan_whose_account_moved_sends_nothing_to_the_new_address(
    tmp_path: Path, planned: list[Account], three: list[Account]
) -> None:
    _eu, _us = planned
    elsewhere = three[2]  # the second server: eu's entry now points at it
    _moved(tmp_path, "eu", elsewhere.server.base_url)
    before = elsewhere.controls.last_seq()

    result = run(tmp_path, planned, "apply", "plans")

    assert result.returncode == 1, result.stdout + result.stderr
    assert elsewhere.controls.requests(before) == []  # not one request, so no token either
    assert "plans/eu.json was made for another account (base URL differ)" in result.stdout
    assert f"as account eu's entry says now, {elsewhere.server.base_url}" in result.stdout
    assert "the baseUrl or clientId of account eu's entry changed since the plan" in result.stdout
    assert "RECONCILER_" not in result.stdout
    # no refusal of the token (a 401), told apart from a port such as 127.0.0.1:40121
    assert re.search(r"(?<![\d:])401\b", result.stdout) is None, result.stdout
    assert "--client-id" not in result.stdout and "--base-url" not in result.stdout
    assert "3 accounts" not in result.stdout
    assert result.stdout.rstrip().endswith("2 accounts: 1 applied (us), 1 refused (eu).")


def test_a_plan_whose_client_changed_is_refused_before_any_request(
    tmp_path: Path, planned: list[Account]
) -> None:
    eu, us = planned
    text = (tmp_path / "reconciler.yaml").read_text()
    text = text.replace(f"clientId: {eu.client.client_id}\n", f"clientId: {us.client.client_id}\n")
    (tmp_path / "reconciler.yaml").write_text(text)
    before = eu.controls.last_seq()

    result = run(tmp_path, planned, "apply", "plans", "--account", "eu", "--format", "json")

    assert result.returncode == 1
    assert eu.controls.requests(before) == []
    document = json.loads(result.stdout)
    assert document["summary"]["refused"] == ["eu"]
    assert "(client id differ)" in document["accounts"][0]["error"]["message"]


def test_apply_again_after_one_account_failed_applies_the_rest_and_exits_0(
    tmp_path: Path, planned: list[Account]
) -> None:
    eu, us = planned
    first = run(tmp_path, [eu], "apply", "plans")  # us's token is not set: us fails
    assert first.returncode == 1
    assert first.stdout.rstrip().endswith("2 accounts: 1 applied (eu), 1 failed (us).")
    assert (tmp_path / "plans" / "eu.applied").is_file()
    assert not (tmp_path / "plans" / "us.applied").exists()
    before = eu.controls.last_seq()

    again = run(tmp_path, planned, "apply", "plans")

    assert again.returncode == 0, again.stdout + again.stderr
    assert "=== account eu ===\nAlready applied at " in again.stdout
    assert "(1 to invite): nothing was sent." in again.stdout
    assert again.stdout.rstrip().endswith("2 accounts: 1 applied (us), 1 already applied (eu).")
    assert {entry["client_id"] for entry in eu.controls.requests(before)} == {us.client.client_id}
    third = run(tmp_path, planned, "apply", "plans", "--format", "json")
    assert third.returncode == 0
    summary = json.loads(third.stdout)["summary"]
    assert summary["already_applied"] == ["eu", "us"] and summary["applied"] == []
    converged = run(tmp_path, planned, "plan", "--all", "--detailed-exitcode")
    assert converged.returncode == 0, converged.stdout


def test_a_record_that_is_not_this_plan_s_is_refused_and_nothing_is_sent(
    tmp_path: Path, planned: list[Account]
) -> None:
    eu, _us = planned
    assert run(tmp_path, [eu], "apply", "plans").returncode == 1  # eu applied, us failed
    plans = tmp_path / "plans"
    shutil.copy(plans / "eu.applied", plans / "us.applied")  # a record of another plan
    before = eu.controls.last_seq()
    copied = run(tmp_path, planned, "apply", "plans", "--account", "us")
    assert copied.returncode == 1
    assert "plans/us.applied records the apply of another plan than plans/us.json" in (
        copied.stdout
    )

    record = json.loads((plans / "eu.applied").read_text())
    (plans / "us.applied").write_text(json.dumps({**record, "account": "us"}))  # edited
    edited = run(tmp_path, planned, "apply", "plans", "--account", "us")
    assert edited.returncode == 1
    assert "plans/us.applied was not written by an apply with this plan key" in edited.stdout

    (plans / "us.applied").write_text("applied, trust me\n")
    garbage = run(tmp_path, planned, "apply", "plans", "--account", "us")
    assert garbage.returncode == 1
    assert "plans/us.applied is not a record of an apply" in garbage.stdout
    assert eu.controls.requests(before) == []

    other_key = run(tmp_path, planned, "apply", "plans", RECONCILER_PLAN_KEY="o" * 40)
    assert other_key.returncode == 1  # the plans themselves are refused first, as before
    assert eu.controls.requests(before) == []

    (plans / "us.applied").unlink()
    applied = run(tmp_path, planned, "apply", "plans", "--account", "us")
    assert applied.returncode == 0, applied.stdout


def test_a_new_plan_of_the_folder_drops_the_old_records(
    tmp_path: Path, planned: list[Account]
) -> None:
    assert run(tmp_path, planned, "apply", "plans").returncode == 0
    assert (tmp_path / "plans" / "eu.applied").is_file()
    write_state(tmp_path / "accounts" / "eu", "eu", [0, 1, 2])
    again = run(tmp_path, planned, "plan", "--all", "--out", "plans")
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in (tmp_path / "plans").iterdir()) == ["eu.json", "us.json"]
    applied = run(tmp_path, planned, "apply", "plans")
    assert applied.returncode == 0, applied.stdout
    assert applied.stdout.rstrip().endswith("2 accounts: 1 applied (eu), 1 with no changes (us).")


def test_a_fifo_where_a_record_or_a_plan_is_read_is_refused_at_once(
    tmp_path: Path, planned: list[Account]
) -> None:
    """`DIR/<name>.applied` or a saved plan that is a named pipe would be read forever: each is
    refused at once, naming what it is, and nothing is sent."""
    eu, _us = planned
    plans = tmp_path / "plans"
    os.mkfifo(plans / "us.applied")
    before = eu.controls.last_seq()

    fifo_record = run(tmp_path, planned, "apply", "plans", "--account", "us")

    assert fifo_record.returncode == 1, fifo_record.stdout + fifo_record.stderr
    assert (
        "plans/us.applied is not a record of an apply (not a regular file but a FIFO (named "
        "pipe)): nothing was sent to account us"
    ) in fifo_record.stdout
    assert eu.controls.requests(before) == []

    os.mkfifo(tmp_path / "pipe.json")
    fifo_plan = run(tmp_path, planned, "plan-compare", "pipe.json", "plans/eu.json")
    assert fifo_plan.returncode == 1
    assert "pipe.json: not a regular file but a FIFO (named pipe)" in fifo_plan.stderr


def test_an_account_another_apply_holds_is_refused_and_the_others_are_applied(
    tmp_path: Path, planned: list[Account]
) -> None:
    """`apply DIR` takes each account's lock as `apply PLAN` does: while another apply holds
    eu's, eu is refused (naming the holder) and nothing is sent to it; us is applied."""
    eu, us = planned
    locks = tmp_path / "locks"
    held = ServiceAccount.of(eu.server.base_url, eu.client.client_id, None)
    before = eu.controls.last_seq()
    with MachineLock(locks).hold(held, timeout=0):
        result = run(tmp_path, planned, "apply", "plans", RECONCILER_LOCK_DIR=str(locks))
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"holds its lock: pid {os.getpid()} on" in result.stdout, result.stdout
    assert result.stdout.rstrip().endswith("2 accounts: 1 applied (us), 1 refused (eu).")
    writes = [e for e in eu.controls.requests(before) if e["method"] == "POST"]
    assert [e["client_id"] for e in writes] == [us.client.client_id]  # one server, us's only
