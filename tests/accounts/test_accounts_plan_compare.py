"""`plan-compare` of an account's saved plans (the merge job's fallback when the reviewed plan
cannot be applied as saved) checks them with that account's own plan key: the variable its
entry's `planKeyEnv` names, as `plan --account NAME --out` signed them, not the one
RECONCILER_PLAN_KEY of a single account."""

from __future__ import annotations

from pathlib import Path

from tests.accounts.support import Account, run, seed_live, write_accounts, write_state
from tests.cli import reconciler

KEYS = {"KEY_EU": "e" * 40, "KEY_US": "u" * 40}  # and RECONCILER_PLAN_KEY, a third one


def _setup(root: Path, accounts: list[Account]) -> None:
    write_accounts(root, accounts, eu={"planKeyEnv": "KEY_EU"}, us={"planKeyEnv": "KEY_US"})
    for account in accounts:
        seed_live(account, [0, 1])
        write_state(root / "accounts" / account.name, account.name, [0, 1, 2])


def _plan(root: Path, accounts: list[Account], out: str, *selected: str) -> None:
    chosen = [arg for name in selected for arg in ("--account", name)] or ["--all"]
    planned = run(root, accounts, "plan", *chosen, "--out", out, **KEYS)
    assert planned.returncode == 0, planned.stderr


def test_each_account_compares_its_plans_with_its_own_plan_key(
    tmp_path: Path, three: list[Account]
) -> None:
    eu, us, _apac = three
    accounts = [eu, us]
    _setup(tmp_path, accounts)
    _plan(tmp_path, accounts, "reviewed")
    _plan(tmp_path, accounts, "new")
    for name in ("eu", "us"):
        same = run(
            tmp_path, accounts, "plan-compare", f"reviewed/{name}.json", f"new/{name}.json", **KEYS
        )
        assert same.returncode == 0, same.stdout + same.stderr
        assert "exactly the reviewed changes" in same.stdout

    write_state(tmp_path / "accounts" / "us", "us", [0, 1, 2, 3])  # one more to invite
    _plan(tmp_path, accounts, "later", "us")
    other = run(tmp_path, accounts, "plan-compare", "reviewed/us.json", "later/us.json", **KEYS)
    assert other.returncode == 2, other.stdout + other.stderr
    assert "W-3" in other.stdout


def test_an_account_plan_is_checked_with_its_key_and_against_its_own_account(
    tmp_path: Path, three: list[Account]
) -> None:
    eu, us, _apac = three
    accounts = [eu, us]
    _setup(tmp_path, accounts)
    _plan(tmp_path, accounts, "reviewed")
    _plan(tmp_path, accounts, "new")

    crossed = run(tmp_path, accounts, "plan-compare", "reviewed/eu.json", "new/us.json", **KEYS)
    assert crossed.returncode == 1, crossed.stdout + crossed.stderr
    assert "the plan of account eu" in crossed.stderr
    assert "the plan of account us" in crossed.stderr

    wrong = run(
        tmp_path, accounts, "plan-compare", "reviewed/eu.json", "new/eu.json",
        KEY_EU="x" * 40, KEY_US=KEYS["KEY_US"],
    )  # fmt: skip
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert "Traceback" not in wrong.stderr and "x" * 40 not in wrong.stderr

    unset = run(
        tmp_path, accounts, "plan-compare", "reviewed/eu.json", "new/eu.json",
        KEY_US=KEYS["KEY_US"],
    )  # fmt: skip
    assert unset.returncode == 1, unset.stdout + unset.stderr
    assert "KEY_EU (planKeyEnv of account eu) is not set" in unset.stderr
    empty = run(
        tmp_path, accounts, "plan-compare", "reviewed/eu.json", "new/eu.json",
        KEY_EU="", KEY_US=KEYS["KEY_US"],
    )  # fmt: skip
    assert empty.returncode == 1, empty.stdout + empty.stderr
    assert "KEY_EU (planKeyEnv of account eu) is empty" in empty.stderr

    elsewhere = tmp_path / "elsewhere"  # no accounts file here: its entry cannot be read
    elsewhere.mkdir()
    lost = reconciler(
        "plan-compare", str(tmp_path / "reviewed/eu.json"), str(tmp_path / "new/eu.json"),
        cwd=elsewhere, **KEYS,
    )  # fmt: skip
    assert lost.returncode == 1, lost.stdout + lost.stderr
    assert "no accounts file" in lost.stderr
    found = reconciler(
        "plan-compare", str(tmp_path / "reviewed/eu.json"), str(tmp_path / "new/eu.json"),
        "--accounts-file", str(tmp_path / "reconciler.yaml"), cwd=elsewhere, **KEYS,
    )  # fmt: skip
    assert found.returncode == 0, found.stdout + found.stderr
