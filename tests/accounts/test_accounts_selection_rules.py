"""Selections mean what they say, `comment --out DIR` binds its plans as `plan --out DIR`
does, and `--changed-since` counts every file the load reads (issue 39, items 2 to 4)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.accounts.support import Account, run, worker_yaml, write_accounts, write_state

HEAD = "c" * 40


def _setup(root: Path, accounts: list[Account]) -> None:
    write_accounts(root, accounts)
    for account in accounts:
        write_state(root / "accounts" / account.name, account.name, [1])


@pytest.mark.parametrize(
    "args",
    [
        ("plan", "--account", ""),
        ("plan", "--account", " "),
        ("drift", "--account", ","),
        ("comment", "--account", ""),
        ("validate", "--account", " "),
        ("plan", "--account", "eu", "--account", ""),
        ("plan", "--all", "--account", "us"),
        ("drift", "--all", "--changed-since", "main"),
        ("validate", "--account", "eu", "--changed-since", "main"),
        ("plan", "--changed-since", ""),
        ("accounts", "--changed-since", ""),
        ("accounts", "--changed-since", " ", "--format", "github-matrix"),
    ],
    ids=repr,
)
def test_a_blank_or_contradicting_selection_is_refused_before_any_request(
    tmp_path: Path, three: list[Account], args: tuple[str, ...]
) -> None:
    _setup(tmp_path, three)
    since = {account.name: account.controls.last_seq() for account in three}
    result = run(tmp_path, three, *args)
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr
    said = result.stderr
    assert "names no account" in said or "contradict" in said or "names no commit" in said, said
    assert result.stdout == ""
    for account in three:
        assert account.controls.requests(since[account.name]) == []


def test_apply_dir_with_a_blank_account_applies_nothing(
    tmp_path: Path, three: list[Account]
) -> None:
    _setup(tmp_path, three)
    planned = run(tmp_path, three, "plan", "--all", "--out", "plans")
    assert planned.returncode == 0, planned.stderr
    since = {account.name: account.controls.last_seq() for account in three}
    applied = run(tmp_path, three, "apply", "plans", "--account", "")
    assert applied.returncode != 0
    assert "--account '' names no account" in applied.stderr
    for account in three:
        assert account.controls.requests(since[account.name]) == []


def test_comment_out_binds_each_plan_to_the_pull_request(
    tmp_path: Path, three: list[Account]
) -> None:
    _setup(tmp_path, three)
    review = ("--pull-request", "7", "--head-sha", HEAD)
    commented = run(tmp_path, three, "comment", "--all", "--out", "plans", *review)
    assert commented.returncode == 0, commented.stderr
    for account in three:
        recorded = json.loads((tmp_path / "plans" / f"{account.name}.json").read_text())["review"]
        assert (recorded["pull_request"], recorded["head_sha"]) == (7, HEAD)
    unsaved = run(tmp_path, three, "comment", "--all", *review)
    assert unsaved.returncode != 0 and "add --out" in unsaved.stderr
    joined = run(tmp_path, three, "comment", "plans", *review)
    assert joined.returncode != 0 and "not a folder of saved plans" in joined.stderr


def test_changed_since_counts_a_file_git_ignores(tmp_path: Path, three: list[Account]) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    _setup(tmp_path, three)
    (tmp_path / ".gitignore").write_text("*.local.yaml\n")
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "accounts")
    extra = "workers:\n" + worker_yaml("W-999", "eu-999@example.com")
    (tmp_path / "accounts" / "eu" / "extra.local.yaml").write_text(extra)

    listed = run(tmp_path, three, "accounts", "--changed-since", "main", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    assert [row["name"] for row in json.loads(listed.stdout)] == ["eu"]
    planned = run(tmp_path, three, "plan", "--changed-since", "main")
    assert planned.returncode == 0, planned.stderr
    assert "=== account eu ===" in planned.stdout and "W-999" in planned.stdout


@pytest.mark.parametrize("value", ["", " ", ","], ids=repr)
def test_the_apply_job_with_a_blank_accounts_value_fails_rather_than_apply_nothing(
    tmp_path: Path, three: list[Account], value: str
) -> None:
    """`github apply-accounts --accounts "$ACCOUNTS"` from a matrix that gives no value named
    no account, applied nothing and passed: now it fails, saying so, before GitHub or any
    account is asked anything."""
    _setup(tmp_path, three)
    since = {account.name: account.controls.last_seq() for account in three}
    github = {
        "GITHUB_TOKEN": "t",
        "GITHUB_REPOSITORY": "owner/repo",
        "GITHUB_API_URL": "http://127.0.0.1:9",  # nothing listens: a request would fail
    }
    applied = run(
        tmp_path,
        three,
        "github",
        "apply-accounts",
        "--accounts",
        value,
        "--sha",
        HEAD,
        "--default-branch",
        "main",
        "--work-dir",
        str(tmp_path / "work"),
        "--log-url",
        "https://example.com/run",
        **github,
    )
    assert applied.returncode == 1, applied.stdout + applied.stderr
    assert f"--accounts {value!r} names no account" in applied.stderr, applied.stderr
    assert "Traceback" not in applied.stderr
    for account in three:
        assert account.controls.requests(since[account.name]) == []


def test_changed_since_reads_bytes_that_are_not_utf8_without_crashing(
    tmp_path: Path, three: list[Account]
) -> None:
    """The base's `reconciler.yaml` in Latin-1, and a new file whose name is not UTF-8: the old
    file counts as unreadable, so every account has changed, and the name counts for its
    account."""

    def git(*args: str) -> None:
        identity = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
        subprocess.run(["git", *identity, *args], cwd=tmp_path, check=True, capture_output=True)

    def changed(since: str) -> list[str]:
        listed = run(tmp_path, three, "accounts", "--changed-since", since, "--format", "json")
        assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
        return [row["name"] for row in json.loads(listed.stdout)]

    _setup(tmp_path, three)
    accounts_file = tmp_path / "reconciler.yaml"
    text = accounts_file.read_text()
    accounts_file.write_bytes(text.encode() + "# Société\n".encode("latin-1"))
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "accounts, in Latin-1")
    git("checkout", "-qb", "change")
    accounts_file.write_text(text)
    git("commit", "-qam", "accounts, in UTF-8")
    assert changed("main") == ["eu", "us", "apac"]

    folder = os.fsencode(tmp_path / "accounts" / "us")
    Path(os.fsdecode(folder + b"/notes-\xff.md")).write_text("Notes.\n")
    assert changed("change") == ["us"]
