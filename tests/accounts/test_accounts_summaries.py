"""A fleet's output tells the truth: the summaries of `plan`, `drift` and `apply` over several
accounts name the accounts with changes, drift, refusals and failures (a failure hides none of
the others), and an account's messages name its own entry and variables, never an option a
selection refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.accounts.support import (
    Account,
    run,
    seed_live,
    write_accounts,
    write_state,
)
from tests.sandbox.support import invitation, service_client

INVITE = "/contract/workers/inviteWorkersBulkLocked"


def _active(account: Account, external_id: str, first_name: str) -> None:
    """A worker of the account who accepted, answering `first_name` (the file says Ada)."""
    item = invitation(externalId=external_id, workerEmail=f"{account.name}-0@example.com")
    with service_client(account.server.base_url, account.client.token) as api:
        (created,) = api.post(INVITE, json=[item]).json()
    account.controls.move_agreement(created["agreementId"], "ACTIVE", firstName=first_name)


@pytest.fixture
def fleet(tmp_path: Path, three: list[Account]) -> list[Account]:
    """eu has a worker to invite; us has drifted only (W-0 answered another first name);
    apac's plan is unsafe (it would inactivate all four of its workers); a fourth account,
    gone, cannot be reached."""
    eu, us, apac = three
    write_accounts(tmp_path, three)
    with (tmp_path / "reconciler.yaml").open("a") as file:
        file.write("  - name: gone\n    path: accounts/gone\n")
        file.write("    baseUrl: http://127.0.0.1:9\n    tokenEnv: TOKEN_GONE\n")
    seed_live(eu, [0])
    write_state(tmp_path / "accounts" / "eu", "eu", [0, 1])
    _active(us, "W-0", "Augusta")
    write_state(tmp_path / "accounts" / "us", "us", [0])
    seed_live(apac, range(4))
    write_state(tmp_path / "accounts" / "apac", "apac", [])
    write_state(tmp_path / "accounts" / "gone", "gone", [1])
    return three


def test_drift_names_the_drifted_accounts_even_with_a_failure(
    tmp_path: Path, fleet: list[Account]
) -> None:
    alone = run(tmp_path, fleet, "drift", "--account", "us", "--format", "json")
    assert alone.returncode == 2, alone.stdout + alone.stderr
    summary = json.loads(alone.stdout)["summary"]
    assert summary["with_drift"] == ["us"] and summary["with_changes"] == []

    document = run(tmp_path, fleet, "drift", "--all", "--format", "json", TOKEN_GONE="x" * 20)
    assert document.returncode == 1  # gone failed; the others' drift is still listed
    summary = json.loads(document.stdout)["summary"]
    assert summary["failed"] == ["gone"]
    assert summary["with_drift"] == ["eu", "us", "apac"]
    assert summary["with_changes"] == ["eu", "apac"]
    assert summary["with_refusals"] == ["apac"]

    text = run(tmp_path, fleet, "drift", "--all", TOKEN_GONE="x" * 20)
    assert text.returncode == 1
    assert text.stdout.rstrip().endswith(
        "4 accounts: 3 checked, 1 failed (gone); with drift: eu, us, apac; with refusals: apac."
    )
    quiet = run(tmp_path, fleet, "drift", "--account", "us", "--account", "gone", TOKEN_GONE="x")
    assert "2 accounts: 1 checked, 1 failed (gone); with drift: us." in quiet.stdout


def test_plan_names_the_accounts_with_changes_drift_and_refusals(
    tmp_path: Path, fleet: list[Account]
) -> None:
    text = run(tmp_path, fleet, "plan", "--all", TOKEN_GONE="x" * 20)
    assert text.returncode == 1
    assert text.stdout.rstrip().endswith(
        "4 accounts: 3 planned, 1 failed (gone); with changes: eu, apac; with drift: us; "
        "with refusals: apac."
    )
    document = run(tmp_path, fleet, "plan", "--all", "--format", "json", TOKEN_GONE="x" * 20)
    summary = json.loads(document.stdout)["summary"]
    assert summary["planned"] == 3 and summary["failed"] == ["gone"]
    assert summary["with_changes"] == ["eu", "apac"]
    assert summary["with_drift"] == ["us"] and summary["with_refusals"] == ["apac"]
    in_sync = run(tmp_path, fleet, "plan", "--account", "us", "--account", "gone")
    assert "2 accounts: 1 planned, 1 failed (gone); with drift: us." in in_sync.stdout


def test_apply_names_the_applied_refused_and_failed_accounts(
    tmp_path: Path, fleet: list[Account]
) -> None:
    saved = run(tmp_path, fleet, "plan", "--all", "--out", "plans", TOKEN_GONE="x" * 20)
    assert saved.returncode == 1  # gone's plan failed; eu's, us's and apac's are saved
    result = run(tmp_path, fleet, "apply", "plans", "--format", "json")
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert document["summary"] == {
        "accounts": 3,
        "applied": ["eu"],
        "no_changes": ["us"],
        "already_applied": [],
        "incomplete": [],
        "refused": ["apac"],  # unsafe: nothing was sent
        "failed": [],
    }
    states = {entry["name"]: entry["state"] for entry in document["accounts"]}
    assert states == {"eu": "applied", "us": "no_changes", "apac": "refused"}
    again = run(tmp_path, fleet, "apply", "plans")
    assert again.returncode == 1
    assert again.stdout.rstrip().endswith(
        "3 accounts: 0 applied, 2 already applied (eu, us), 1 refused (apac)."
    )


def test_an_account_s_messages_name_its_entry_and_variables(
    tmp_path: Path, fleet: list[Account]
) -> None:
    eu = fleet[0]
    wrong = "not-a-token-of-this-server-0123456789"
    result = run(
        tmp_path,
        fleet,
        "plan",
        "--account",
        "eu",
        "--account",
        "gone",
        "--format",
        "json",
        TOKEN_EU=wrong,
        TOKEN_GONE="x" * 20,
    )
    assert result.returncode == 1
    errors = {
        entry["name"]: entry["error"]["message"] for entry in json.loads(result.stdout)["accounts"]
    }
    assert errors["eu"].startswith(
        f"the service refused the token from {eu.variable} (the tokenEnv of account eu in "
        "reconciler.yaml) (401"
    )
    assert "could not connect to the service at http://127.0.0.1:9" in errors["gone"]
    assert "is the baseUrl of account gone in reconciler.yaml right?" in errors["gone"]
    for message in errors.values():
        assert "RECONCILER_" not in message
        assert "--base-url" not in message and "--sandbox" not in message
        assert "--client-id" not in message


def test_an_account_s_plan_key_is_named_by_its_planKeyEnv(
    tmp_path: Path, three: list[Account]
) -> None:
    eu = three[0]
    write_accounts(tmp_path, [eu], eu={"planKeyEnv": "PLAN_KEY_EU"})
    write_state(tmp_path / "accounts" / "eu", "eu", [1])
    short = run(tmp_path, [eu], "plan", "--all", "--out", "plans", PLAN_KEY_EU="k" * 10)
    assert short.returncode == 1
    assert (
        "PLAN_KEY_EU (the planKeyEnv of account eu in reconciler.yaml) is shorter than 32 bytes"
    ) in short.stdout
    assert "RECONCILER_PLAN_KEY" not in short.stdout
