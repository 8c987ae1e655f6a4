"""The decisions behind the accounts apply workflow, one by one: the record (a deployment per
account) read from the fake GitHub, what git says changed between two commits, the matrix of
pending accounts, the outcome comment and the plan's commit status."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.accounts.file import load_accounts_file
from reconciler.accounts.history import changed_between, merges_between, scope_of
from reconciler.gitops.github import GitHub, deployments
from reconciler.gitops.github.outputs import matrix
from reconciler.gitops.github.runs import ReviewedPlan
from reconciler.gitops.outcome import APPLIED, FAILED, SUPERSEDED, Landing
from reconciler.gitops.pending import Pending
from reconciler.gitops.statuses import PlanStatus, describe
from reconciler.render.outcome import outcome_body
from reconciler.secrets import Secret
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub
from tests.gitops.support import reconciler

TOKEN = "ghs_record"
GIT = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull}  # fmt: skip


@pytest.fixture
def client() -> Iterator[tuple[FakeGitHub, GitHub]]:
    with FakeGitHub(TOKEN, page_size=2) as fake, GitHub(
        OWNER_REPO, Secret(TOKEN), api_url=fake.api_url
    ) as github:  # fmt: skip
        yield fake, github


def test_the_last_apply_is_the_newest_deployment_of_the_task_that_succeeded(
    client: tuple[FakeGitHub, GitHub],
) -> None:
    """GitHub Actions' own deployment of the job (task `deploy`, success even when nothing was
    applied), a later failed apply and one still in progress are not the record."""
    fake, github = client
    env = "production-eu"
    applied = deployments.start(github, env, "a" * 40, pull_request=31, plan_digest="mac",
                                log_url="https://run/1", description="applying")  # fmt: skip
    deployments.finish(github, applied, "success", "applied: 1 to invite", log_url="https://run/1")
    failed = deployments.start(github, env, "b" * 40, pull_request=32, plan_digest=None,
                               log_url="https://run/2", description="applying")  # fmt: skip
    deployments.finish(github, failed, "failure", "failed: no token", log_url="https://run/2")
    deployments.start(github, env, "c" * 40, pull_request=33, plan_digest=None,
                      log_url="https://run/3", description="applying")  # fmt: skip
    other = github.post(github.repo_path("deployments"), {"ref": "d" * 40, "environment": env})
    github.post(github.repo_path(f"deployments/{other['id']}/statuses"), {"state": "success"})

    record = deployments.last_applied(github, env)

    assert record is not None
    assert (record.sha, record.pull_request, record.plan_digest) == ("a" * 40, 31, "mac")
    assert record.state == "success" and record.log_url == "https://run/1"
    assert deployments.last_applied(github, "production-us") is None
    (posted,) = [r for r in fake.writes() if r.path.endswith("/deployments")][:1]
    assert posted.body["task"] == "deploy:reconciler" and posted.body["required_contexts"] == []


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True, env={**os.environ, **GIT})  # fmt: skip
    return done.stdout.strip()


def _commit(repo: Path, files: dict[str, str]) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "--quiet", "-m", "change")
    return _git(repo, "rev-parse", "HEAD")


ACCOUNTS = (
    "version: 1\naccounts:\n  - name: eu\n    path: accounts/eu\n    tokenEnv: T_EU\n{eu}"
    "  - name: us\n    path: accounts/us\n    tokenEnv: T_US\n"
)


def test_an_account_changes_with_its_files_or_its_own_entry_only(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "--quiet", "--initial-branch=main")
    first = _commit(repo, {"reconciler.yaml": ACCOUNTS.format(eu=""),
                           "accounts/eu/a.yaml": "version: 1\n",
                           "accounts/us/a.yaml": "version: 1\n"})  # fmt: skip
    us_only = _commit(repo, {"accounts/us/a.yaml": "version: 1\nworkers: []\n"})
    eu_entry = _commit(repo, {"reconciler.yaml": ACCOUNTS.format(eu="    clientId: 7\n")})
    accounts = load_accounts_file(repo / "reconciler.yaml")
    eu, us = (scope_of(entry.name, entry.path, accounts.path) for entry in accounts.accounts)

    assert not changed_between(eu, first, us_only)
    assert changed_between(us, first, us_only)
    assert changed_between(eu, us_only, eu_entry)
    assert not changed_between(us, us_only, eu_entry)
    assert merges_between(eu, first, eu_entry) == [eu_entry]
    assert merges_between(us, first, eu_entry) == [us_only]
    assert merges_between(us, None, eu_entry) == [first, us_only]


def test_the_matrix_groups_accounts_by_the_plan_they_apply() -> None:
    plan = ReviewedPlan(32, "f" * 40, 5032, 32, "reconciler-plans-" + "f" * 40)
    pending = [
        Pending("eu", "a" * 40, ("b" * 40,), (32,), plan),
        Pending("us", None, ("c" * 40,), (), None),
        Pending("uk", "a" * 40, ("b" * 40,), (32,), plan),
    ]
    one = matrix(pending, None)["include"]
    assert [entry["account"] for entry in one] == ["eu", "uk", "us"]
    assert one[0] == {"account": "eu", "run-id": "5032", "artifact-name": plan.artifact_name,
                      "pull-request": "32", "head-sha": "f" * 40}  # fmt: skip
    assert one[2]["artifact-name"] == ""
    chunked = matrix(pending, 5)["include"]
    assert [entry["accounts"] for entry in chunked] == ["eu uk", "us"]
    assert pending[0].describe() == f"pending since {'a' * 12}, #32"
    assert pending[1].describe() == "never applied"


def test_the_outcome_comment_keeps_the_rows_of_other_runs() -> None:
    first = outcome_body(
        [(Landing("eu", FAILED, "not applied | see the log"), "https://run/1"),
         (Landing("us", APPLIED, "the reviewed plan was applied: 1 to invite"), None)],
        "a" * 40, "https://run/1", None,
    )  # fmt: skip
    assert "| `eu` | :x: failed: not applied \\| see the log | [run](https://run/1) |" in first
    assert (
        "| `us` | :white_check_mark: applied: the reviewed plan was applied: 1 to invite" in first
    )

    again = outcome_body(
        [(Landing("eu", SUPERSEDED, "superseded by bbbbbbbbbbbb (#32)"), "https://run/2")],
        "b" * 40, "https://run/2", first,
    )  # fmt: skip
    rows = [line for line in again.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == ["eu", "us"]
    assert ":fast_forward: superseded by bbbbbbbbbbbb (#32)" in rows[0]
    assert "[this run](https://run/2)" in again


def test_the_plan_status_names_the_accounts_not_planned(tmp_path: Path) -> None:
    plans = tmp_path / "plans"
    plans.mkdir()
    document = {"changes": [{"action": "invite"}, {"action": "invite"}], "payruns": [{}]}
    (plans / "eu.json").write_text(json.dumps(document))

    assert describe(PlanStatus(plan_result="success", names=("eu",), plans=plans), "") == (
        "success", "eu: 2 to invite, 1 payrun")  # fmt: skip
    assert describe(PlanStatus(plan_result="failure", names=("eu", "us"), plans=plans), "") == (
        "failure", "not planned: us; eu: 2 to invite, 1 payrun")  # fmt: skip
    assert describe(PlanStatus(plan_result="skipped", plans=tmp_path / "none"), "") == (
        "success", "no account changed")  # fmt: skip
    assert describe(PlanStatus(state="pending"), "planning") == ("pending", "planning")


def test_the_commands_say_what_is_wrong_with_their_input(tmp_path: Path) -> None:
    """Through the CLI, against the fake GitHub: an unreadable --pulls, both or neither of
    --state and --plan-result, and with no account to plan, a comment that says so."""
    with FakeGitHub(TOKEN) as fake:
        env = {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": OWNER_REPO,
               "GITHUB_API_URL": fake.api_url}  # fmt: skip
        bad = reconciler("github", "outcome", "--sha", "a" * 40, "--pulls", '{"eu": "31"}',
                         "--run-url", "https://run", **env)  # fmt: skip
        assert bad.returncode == 1 and "is not a JSON object of account names" in bad.stderr
        both = reconciler("github", "commit-status", "--sha", "a" * 40, "--state", "pending",
                          "--plan-result", "success", **env)  # fmt: skip
        assert both.returncode == 1 and "give --state or --plan-result" in both.stderr
        out = tmp_path / "comment.md"
        none = reconciler("github", "plan-comment", "--pr", "31", "--head-sha", "b" * 40,
                          "--plans", str(tmp_path / "none"), "--run-url", "https://run",
                          "--body-out", str(out), **env)  # fmt: skip
        assert none.returncode == 0, none.stderr
        (comment,) = fake.state.comments[31]
        assert (
            comment["body"]
            == out.read_text()
            == (
                '<!-- reconciler:plan key="accounts" -->\nNo account in reconciler.yaml is changed '
                f"by this pull request at {'b' * 40}: nothing to plan.\n"
            )
        )
        assert not [r for r in fake.writes() if "statuses" in r.path]


def test_every_outcome_has_its_icon_in_the_note() -> None:
    """The note's text (render/outcome.py) knows each kind of outcome the flow has."""
    from reconciler.gitops.outcome import KINDS
    from reconciler.render.outcome import _ICON

    assert set(_ICON) == set(KINDS)
