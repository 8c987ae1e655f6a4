"""Ignore rules with an owner and an end: `validate`, `drift` and `adopt` against the
quickstart's demo account, where ENG-002's job title drifted (the file says Staff Engineer)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from reconciler.sandbox import SandboxServer
from tests.cli import reconciler as run
from tests.plan.test_plan_cli import IN_SYNC_BUT_DRIFTED, ROOT, SCHEMA

TODAY = datetime.now(UTC).date()


@pytest.fixture(scope="module")
def demo() -> Iterator[SandboxServer]:
    with SandboxServer(seed=ROOT / "examples" / "sandbox-seed.yaml") as server:
        yield server


def with_rule(tmp_path: Path, address: str, until: str) -> Path:
    path = tmp_path / "state.yaml"
    path.write_text(
        IN_SYNC_BUT_DRIFTED
        + "ignore:\n"
        + f"  - address: '{address}'\n"
        + "    reason: title change waits for HR\n"
        + "    owner: '@ana'\n"
        + f"    until: {until}\n"
    )
    return path


@pytest.mark.parametrize("address", ['worker["ENG-002"].jobTitle', 'worker["ENG-*"].job*'])
def test_until_its_end_a_rule_shows_the_drift_as_ignored_and_drift_passes(
    demo: SandboxServer, tmp_path: Path, address: str
) -> None:
    path = with_rule(tmp_path, address, (TODAY + timedelta(days=1)).isoformat())
    result = run("drift", str(path), server=demo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Ignored drift" in result.stdout
    assert 'worker["ENG-002"].jobTitle: until' in result.stdout and "owner @ana" in result.stdout
    assert "0 drifted" in result.stdout
    markdown = run("drift", str(path), "--format", "markdown", server=demo)
    assert "Ignored drift (1)" in markdown.stdout
    document = json.loads(run("drift", str(path), "--format", "json", server=demo).stdout)
    (ignored,) = document["ignored"]
    assert ignored["address"] == 'worker["ENG-002"].jobTitle' and ignored["owner"] == "@ana"
    assert document["resource_drift"] == []
    Draft202012Validator(SCHEMA).validate(document)
    adopt = run("adopt", str(path), "--dry-run", server=demo)
    assert adopt.returncode == 0 and adopt.stdout == "", adopt.stderr
    assert "1 drifted field kept out by ignore rules." in adopt.stderr


def test_after_its_end_drift_and_validate_report_the_expired_rule(
    demo: SandboxServer, tmp_path: Path
) -> None:
    until = (TODAY - timedelta(days=1)).isoformat()
    path = with_rule(tmp_path, 'worker["ENG-002"].jobTitle', until)
    result = run("drift", str(path), server=demo)
    assert result.returncode == 2, result.stdout + result.stderr
    assert '~ jobTitle: "Engineer" -> "Staff Engineer"' in result.stdout
    expired = f'the ignore rule for worker["ENG-002"].jobTitle (owner @ana) expired on {until}'
    assert expired in result.stdout
    validated = run("validate", str(path))
    assert validated.returncode == 0
    assert f"Warning: {expired}" in validated.stderr
    github = run("validate", str(path), "--format", "github")
    assert f"::warning::{expired}" in github.stdout


def test_an_expired_rule_s_reason_of_two_lines_is_one_annotation(tmp_path: Path) -> None:
    """A rule's reason is the file's text (a pull request's author's): a line break in it must
    not end the annotation, nor start a workflow command of its own on the next line."""
    until = (TODAY - timedelta(days=1)).isoformat()
    path = with_rule(tmp_path, 'worker["ENG-002"].jobTitle', until)
    text = path.read_text().replace(
        "reason: title change waits for HR", 'reason: "HR\\n::add-mask::x"'
    )
    path.write_text(text)
    github = run("validate", str(path), "--format", "github")
    assert github.returncode == 0, github.stdout + github.stderr
    assert "the rule (HR%0A::add-mask::x)" in github.stdout
    assert not any(line.startswith("::add-mask::") for line in github.stdout.splitlines())


def test_a_rule_must_say_who_why_and_until_a_real_day(tmp_path: Path) -> None:
    path = with_rule(tmp_path, 'worker["ENG-002"].jobTitle', "2027-02-30")
    result = run("validate", str(path))
    assert result.returncode == 1
    assert "state.yaml:22:12: until '2027-02-30' is not a day of the calendar" in result.stdout
    path.write_text(IN_SYNC_BUT_DRIFTED + "ignore:\n  - address: 'worker[\"ENG-002\"]'\n")
    result = run("validate", str(path))
    assert result.returncode == 1
    assert "reason" in result.stdout and "owner" in result.stdout and "until" in result.stdout


def test_validate_of_accounts_reports_an_account_s_expired_rule(tmp_path: Path) -> None:
    """`validate --all` reports an expired rule as `validate PATH` does, naming the account."""
    until = (TODAY - timedelta(days=1)).isoformat()
    folder = tmp_path / "accounts" / "eu"
    folder.mkdir(parents=True)
    with_rule(folder, 'worker["ENG-002"].jobTitle', until)
    (tmp_path / "reconciler.yaml").write_text(
        "version: 1\naccounts:\n  - name: eu\n    path: accounts/eu\n"
        "    baseUrl: https://api.example.com\n    tokenEnv: RECONCILER_TOKEN_EU\n"
    )
    expired = f'the ignore rule for worker["ENG-002"].jobTitle (owner @ana) expired on {until}'
    validated = run("validate", "--all", cwd=tmp_path)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert f"Warning: account eu: {expired}" in validated.stderr
    github = run("validate", "--all", "--format", "github", cwd=tmp_path)
    assert f"::warning::account eu: {expired}" in github.stdout


@pytest.mark.parametrize(
    ("address", "until", "said"),
    [
        ("*", "9999-12-31", "its address matches every worker, whatever the externalId and its "
         "until, 9999-12-31, is more than a year ahead"),
        ('worker["*"].jobTitle', "tomorrow", "its address matches every worker"),
        ("worker[*]", "tomorrow", "its address matches every worker"),
        ('worker["ENG-002"].jobTitle', "in 400 days", "is more than a year ahead"),
    ],
    ids=["star-forever", "every-worker-s-field", "every-worker", "over-a-year"],
)  # fmt: skip
def test_a_rule_that_hides_too_much_is_a_warning_in_validate_and_in_the_comment(
    demo: SandboxServer, tmp_path: Path, address: str, until: str, said: str
) -> None:
    day = {"tomorrow": TODAY + timedelta(days=1), "in 400 days": TODAY + timedelta(days=400)}
    path = with_rule(tmp_path, address, day[until].isoformat() if until in day else until)
    warning = f"the ignore rule for {address} (owner @ana) hides much: "

    validated = run("validate", str(path))
    planned = run("plan", str(path), server=demo)
    comment = run("comment", str(path), server=demo)

    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert f"Warning: {warning}" in validated.stderr and said in validated.stderr
    assert f"Warning: {warning}" in planned.stdout, planned.stdout
    assert comment.returncode == 0, comment.stderr
    assert "Warnings (1)" in comment.stdout and said in comment.stdout, comment.stdout


def test_a_rule_of_some_workers_within_a_year_is_no_warning(tmp_path: Path) -> None:
    path = with_rule(tmp_path, 'worker["ENG-*"].job*', (TODAY + timedelta(days=365)).isoformat())
    validated = run("validate", str(path))
    assert validated.returncode == 0 and "Warning" not in validated.stderr, validated.stderr


def rules(*addresses: str) -> str:
    until = (TODAY + timedelta(days=30)).isoformat()
    return "ignore:\n" + "".join(
        f"  - {{address: '{address}', reason: another team's, owner: '@ops', until: {until}}}\n"
        for address in addresses
    )


def test_rules_on_unmanaged_workers_let_drift_strict_pass(
    demo: SandboxServer, tmp_path: Path
) -> None:
    """Another team's workers (`worker["OPS-*"]`) and a worker with no externalId (by its
    email, ignoring case) are counted as ignored, not unmanaged: `drift --strict` exits 0."""
    path = tmp_path / "state.yaml"
    path.write_text(
        IN_SYNC_BUT_DRIFTED
        + rules(
            'worker["ENG-002"].jobTitle', 'worker["OPS-*"]', 'worker[email="Freelance@Example.com"]'
        )
    )
    result = run("drift", str(path), "--strict", server=demo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 unmanaged" in result.stdout
    assert 'worker["OPS-001"]: until' in result.stdout
    assert 'worker[email="freelance@example.com"]: until' in result.stdout
    assert "matches nothing" not in result.stdout
    document = json.loads(run("drift", str(path), "--format", "json", server=demo).stdout)
    assert {item["address"] for item in document["ignored"]} == {
        'worker["ENG-002"].jobTitle',
        'worker["OPS-001"]',
        'worker[email="freelance@example.com"]',
    }
    assert document["unmanaged"] == []
    Draft202012Validator(SCHEMA).validate(document)


def test_a_rule_that_matches_nothing_is_named(demo: SandboxServer, tmp_path: Path) -> None:
    """`plan` and `drift` see the account and name a rule that hides nothing; `validate` names
    one on the files' own addresses (in the scope, no worker of the files), not one that may
    name an unmanaged worker it cannot see."""
    path = tmp_path / "state.yaml"
    path.write_text(
        IN_SYNC_BUT_DRIFTED
        + rules('worker["ENG-002"].jobTitle', 'worker["AGY-*"]', 'worker["ENG-09*"].jobTitle')
    )
    line = "the ignore rule for {} (owner @ops) matches nothing"
    for command in ("plan", "drift"):
        result = run(command, str(path), server=demo)
        assert line.format('worker["AGY-*"]') in result.stdout, result.stdout
        assert line.format('worker["ENG-09*"].jobTitle') in result.stdout
        assert line.format('worker["ENG-002"].jobTitle') not in result.stdout
    validated = run("validate", str(path))
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "Warning: " + line.format('worker["ENG-09*"].jobTitle') in validated.stderr
    assert line.format('worker["AGY-*"]') not in validated.stderr
    assert line.format('worker["ENG-002"].jobTitle') not in validated.stderr


def test_the_comment_of_a_saved_plan_warns_of_a_broad_rule_as_the_fresh_one_does(
    demo: SandboxServer, tmp_path: Path
) -> None:
    """`comment PLAN` (the saved plan a pull request's comment is made from again) carries the
    warning of an ignore rule that hides too much, kept in the saved plan (issue 49, item 8)."""
    path = with_rule(tmp_path, "*", "9999-12-31")
    saved = tmp_path / "plan.json"
    key = {"RECONCILER_PLAN_KEY": "broad-rule-test-plan-key-0123456789abcdef"}
    fresh = run("comment", str(path), "--out", str(saved), server=demo, **key)
    again = run("comment", str(saved), server=demo, **key)

    assert fresh.returncode == 0 and again.returncode == 0, fresh.stderr + again.stderr
    said = "the ignore rule for * (owner @ana) hides much: its address matches every worker"
    assert said in fresh.stdout
    assert "Warnings (1)" in again.stdout and said in again.stdout, again.stdout
    document = json.loads(saved.read_text(encoding="utf-8"))
    assert [line[: len(said)] for line in document["reported"]["ignore_risks"]] == [said]


def _git(folder: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True,
                          check=True, env=env)  # fmt: skip
    return done.stdout


def test_the_comment_lists_the_ignore_rules_a_pull_request_adds_or_changes(
    demo: SandboxServer, tmp_path: Path
) -> None:
    """Issue 49, item 8: against its base (where the pull request's head left the default
    branch), the comment names each ignore rule the change adds, or whose until, owner or
    reason it changes, even a narrow one within a year, which is no warning by itself."""
    soon, later = (TODAY + timedelta(days=d) for d in (10, 30))
    remote = tmp_path / "remote"
    remote.mkdir()
    _git(remote, "init", "--quiet", "--initial-branch=main")
    with_rule(remote, 'worker["ENG-002"].jobTitle', soon.isoformat())
    _git(remote, "add", "-A")
    _git(remote, "commit", "--quiet", "-m", "a rule")
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "--quiet", str(remote), str(clone))  # origin/HEAD: main
    _git(clone, "checkout", "--quiet", "-b", "change")
    path = with_rule(clone, 'worker["ENG-002"].jobTitle', later.isoformat())
    path.write_text(
        path.read_text()
        + "  - {address: 'worker[\"ENG-003\"].jobTitle', reason: a new title, owner: '@bo', "
        + f"until: {soon.isoformat()}}}\n"
    )
    _git(clone, "commit", "--quiet", "-am", "another rule, and the first one for longer")

    comment = run("comment", str(path), server=demo)
    on_main = run("comment", str(remote / "state.yaml"), server=demo)

    assert comment.returncode == 0, comment.stderr
    said = " ".join(comment.stdout.split())
    assert (
        'this change changes the ignore rule for worker["ENG-002"].jobTitle: until '
        f"{soon.isoformat()} -&gt; {later.isoformat()}"
        in said
        or f"until {soon.isoformat()} -> {later.isoformat()}" in said
    ), said
    assert (
        'this change adds the ignore rule for worker["ENG-003"].jobTitle (owner @bo, until '
        f"{soon.isoformat()}): a new title" in said
    ), said
    assert on_main.returncode == 0 and "this change" not in on_main.stdout
