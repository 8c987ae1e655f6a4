"""`apply DIR` applies each account's saved plan only for the review it was made for: the pull
request and head commit it was planned at (`plan --out DIR --pull-request N --head-sha SHA`,
signed), the files at its entry's `path`, and the client of its token. A plan failing any of
them refuses its account before any write, naming it, and the other accounts are applied."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.accounts.support import Account, run, seed_live, write_accounts, write_state

HEAD = "a" * 40
OTHER_HEAD = "b" * 40


def _setup(root: Path, accounts: list[Account]) -> None:
    write_accounts(root, accounts)
    for account in accounts:
        seed_live(account, [0])
        write_state(root / "accounts" / account.name, account.name, [0, 1])  # W-1 to invite


def _writes(account: Account, since: int) -> list[dict[str, object]]:
    """The requests other than reads that the account's client sent since `since`."""
    return [
        entry
        for entry in account.controls.requests(since)
        if entry["client_id"] == account.client.client_id and entry["method"] != "GET"
    ]


def _marks(accounts: list[Account]) -> dict[str, int]:
    return {account.name: account.controls.last_seq() for account in accounts}


def test_each_account_s_plan_records_its_pull_request_and_applies_only_for_it(
    tmp_path: Path, three: list[Account]
) -> None:
    """us's plan is swapped for a plan of another pull request (validly signed, its own
    account); apac's files change after review: both are refused by name, eu is applied."""
    eu, us, apac = three
    _setup(tmp_path, three)
    review = ("--pull-request", "7", "--head-sha", HEAD)
    saved = run(tmp_path, three, "plan", "--all", "--out", "plans", *review)
    assert saved.returncode == 0, saved.stdout + saved.stderr
    for account in three:
        recorded = json.loads((tmp_path / "plans" / f"{account.name}.json").read_text())["review"]
        assert (recorded["pull_request"], recorded["head_sha"]) == (7, HEAD)
    other = run(tmp_path, three, "plan", "--account", "us", "--out", "other",
                "--pull-request", "8", "--head-sha", OTHER_HEAD)  # fmt: skip
    assert other.returncode == 0, other.stdout + other.stderr
    shutil.copy(tmp_path / "other" / "us.json", tmp_path / "plans" / "us.json")
    write_state(tmp_path / "accounts" / "apac", "apac", [0, 1, 2])  # edited after the review
    since = _marks(three)

    applied = run(tmp_path, three, "apply", "plans", "--format", "json",
                  "--expect-pull-request", "7", "--expect-head-sha", HEAD)  # fmt: skip

    assert applied.returncode == 1, applied.stdout + applied.stderr
    by_name = {entry["name"]: entry for entry in json.loads(applied.stdout)["accounts"]}
    assert "ledger" in by_name["eu"]
    refused_us = by_name["us"]["error"]["message"]
    assert "us.json was not reviewed for this merge (pull request and head commit differ)" in (
        refused_us
    )
    assert f"pull request #8 at commit {OTHER_HEAD}" in refused_us
    refused_apac = by_name["apac"]["error"]["message"]
    assert "apac.json was not reviewed for this merge (desired-state files differ)" in refused_apac
    assert _writes(eu, since["eu"]) != []
    assert _writes(us, since["us"]) == [] and _writes(apac, since["apac"]) == []


def test_expectations_with_a_folder_are_checked_not_ignored(
    tmp_path: Path, three: list[Account]
) -> None:
    """`--expect-files` names one folder: refused with DIR; the pull request and commit go
    together; and `apply --all --auto-approve`, which plans files, has no plan to check."""
    _setup(tmp_path, three)
    saved = run(tmp_path, three, "plan", "--all", "--out", "plans")
    assert saved.returncode == 0, saved.stderr
    since = _marks(three)

    files = run(tmp_path, three, "apply", "plans", "--expect-pull-request", "7",
                "--expect-head-sha", HEAD, "--expect-files", "accounts/eu")  # fmt: skip
    assert files.returncode == 1, files.stdout + files.stderr
    assert "each account's plan is checked against the files at its entry's `path`" in (
        files.stderr
    )
    alone = run(tmp_path, three, "apply", "plans", "--expect-pull-request", "7")
    assert alone.returncode == 1 and "go together" in alone.stderr
    auto = run(tmp_path, three, "apply", "--all", "--auto-approve",
               "--expect-pull-request", "7", "--expect-head-sha", HEAD)  # fmt: skip
    assert auto.returncode == 1 and "check saved plans" in auto.stderr
    # A plan made with no pull request is not the reviewed one of pull request 7.
    unbound = run(tmp_path, three, "apply", "plans", "--account", "eu",
                  "--expect-pull-request", "7", "--expect-head-sha", HEAD)  # fmt: skip
    assert unbound.returncode == 1
    assert "planned for no pull request, and the merge is pull request #7" in unbound.stdout
    for account in three:
        assert _writes(account, since[account.name]) == []


def test_a_plan_applies_only_with_a_token_of_its_own_client(
    tmp_path: Path, three: list[Account]
) -> None:
    """After the plans are saved, eu's entry is given a token of us's client and its id (a
    consistent entry for another client of the same service): eu's plan is refused there, naming its
    client, before any write; us's plan is applied."""
    eu, us, apac = three
    _setup(tmp_path, three)
    saved = run(tmp_path, three, "plan", "--all", "--out", "plans")
    assert saved.returncode == 0, saved.stderr
    text = (tmp_path / "reconciler.yaml").read_text()
    text = text.replace(
        f"tokenEnv: {eu.variable}\n    clientId: {eu.client.client_id}\n",
        f"tokenEnv: TOKEN_OTHER\n    clientId: {us.client.client_id}\n",
    )
    assert text != (tmp_path / "reconciler.yaml").read_text()
    (tmp_path / "reconciler.yaml").write_text(text)
    since = _marks(three)

    applied = run(
        tmp_path, three, "apply", "plans", "--format", "json", TOKEN_OTHER=us.client.token
    )

    assert applied.returncode == 1, applied.stdout + applied.stderr
    by_name = {entry["name"]: entry for entry in json.loads(applied.stdout)["accounts"]}
    refused = by_name["eu"]["error"]["message"]
    assert "eu.json was made for another account (client id differ)" in refused
    # Refused from the accounts file alone (its clientId is not the plan's): nothing sent.
    assert f"client {eu.client.client_id}; this run would talk to, as account eu's entry" in refused
    assert "ledger" in by_name["us"] and "ledger" in by_name["apac"]
    assert _writes(eu, since["eu"]) == []
    # us's token wrote only us's plan: W-1 once (eu's plan would have invited it again).
    assert len(_writes(us, since["us"])) == 1 and _writes(apac, since["apac"]) != []
