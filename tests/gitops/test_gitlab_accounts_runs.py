"""The GitLab pipeline of several accounts (examples/gitlab/accounts.gitlab-ci.yml), its jobs'
scripts run as written against the sandbox and a fake GitLab (tests/gitops/gitlab_runner.py):
a merge request planned one job per account and joined into ONE note by the `comment` job,
which holds no account's variable; at the merge, each account's `apply` job applies the plan
reviewed on the merge request (the `comment` job's artifact of its head pipeline), or nothing
when the plan at merge makes other changes.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.sandbox import SandboxServer
from tests.gitops import test_accounts_workflow_runs as github_runs
from tests.gitops.fake_gitlab import PROJECT_ID, FakeGitLab
from tests.gitops.gitlab_runner import GitLabJob, GitLabRunner
from tests.gitops.test_accounts_workflow_runs import (
    KEYS,
    clients_seen,
    commit,
    git,
    live,
    state,
)
from tests.sandbox.support import ClientAccess, Controls, invitation, service_client

TOKEN = "glpat-" + secrets.token_urlsafe(15)
MR = 31
MARKER = '<!-- reconciler:plan key="accounts" -->\n'
HEAD_PIPELINE, COMMENT_JOB = 77, 502


@pytest.fixture
def gitlab() -> Iterator[FakeGitLab]:
    with FakeGitLab(TOKEN) as fake:
        yield fake


# The accounts (eu and us, clients of the sandbox) and the project (main with both, empty): the
# same as the GitHub workflows' runs.
clients = github_runs.clients
repo = github_runs.repo


@pytest.fixture
def runner(tmp_path: Path, repo: Path, clients: dict[str, ClientAccess]) -> GitLabRunner:
    def variables_of(name: str) -> dict[str, str]:
        return {f"RECONCILER_TOKEN_{name.upper()}": clients[name].token,
                "RECONCILER_PLAN_KEY": KEYS[name]}  # fmt: skip

    environments = {
        f"{kind}-{name}": variables_of(name)
        for kind in ("reconciler", "production")
        for name in ("eu", "us")
    }
    unscoped = {"GITLAB_TOKEN": TOKEN, "RECONCILER_INSTALL": "reconciler"}
    return GitLabRunner(tmp_path / "jobs", repo, environments, unscoped)


def _common(gitlab: FakeGitLab, sha: str) -> dict[str, str]:
    return {
        "CI_DEFAULT_BRANCH": "main",
        "CI_COMMIT_SHA": sha,
        "CI_API_V4_URL": gitlab.api_url,
        "CI_PROJECT_ID": str(PROJECT_ID),
    }


def merge_request_pipeline(
    runner: GitLabRunner, gitlab: FakeGitLab, head: str
) -> tuple[dict[str, GitLabJob], GitLabJob]:
    """The pipeline of a push to merge request MR at `head`: a plan job per account, then the
    comment job with their artifacts."""
    pipeline = {
        **_common(gitlab, head),
        "CI_PIPELINE_SOURCE": "merge_request_event",
        "CI_MERGE_REQUEST_IID": str(MR),
        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
    }
    plans = {name: runner.run("plan", pipeline, matrix={"ACCOUNT": name}) for name in ("eu", "us")}
    comment = runner.run("comment", pipeline, needs=tuple(plans.values()))
    return plans, comment


def merge(
    runner: GitLabRunner, gitlab: FakeGitLab, repo: Path, branch: str, head: str, reviewed: Path
) -> dict[str, GitLabJob]:
    """Merge `branch` (its merge request's head pipeline ended at `head` with the comment job
    keeping `reviewed`), and run the push pipeline's apply jobs."""
    before = git(repo, "rev-parse", "main")
    git(repo, "merge", "--quiet", "--no-ff", branch, "-m", "merge")
    merged = git(repo, "rev-parse", "main")
    gitlab.state.commit_merge_requests[merged] = [{"iid": MR, "state": "merged"}]
    gitlab.state.merge_requests[MR] = {
        "iid": MR, "state": "merged", "sha": head, "head_pipeline": {"id": HEAD_PIPELINE},
    }  # fmt: skip
    gitlab.state.pipeline_jobs[HEAD_PIPELINE] = [
        {"id": COMMENT_JOB - 1, "name": "plan: [eu]"},
        {"id": COMMENT_JOB, "name": "comment"},
    ]
    gitlab.state.job_artifacts[COMMENT_JOB] = reviewed
    pipeline = {
        **_common(gitlab, merged),
        "CI_PIPELINE_SOURCE": "push",
        "CI_COMMIT_BRANCH": "main",
        "CI_COMMIT_BEFORE_SHA": before,
    }
    return {name: runner.run("apply", pipeline, matrix={"ACCOUNT": name}) for name in ("eu", "us")}


def _branch(repo: Path, branch: str, files: dict[str, str]) -> str:
    exists = bool(git(repo, "branch", "--list", branch))
    git(repo, "checkout", "--quiet", *([branch] if exists else ["-b", branch]))
    head = commit(repo, files, branch)
    git(repo, "checkout", "--quiet", "main")
    return head


def test_a_merge_request_gets_one_note_and_its_reviewed_plan_is_applied_at_merge(
    runner: GitLabRunner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    gitlab: FakeGitLab,
) -> None:
    head = _branch(repo, "hire", {"accounts/eu/workforce.yaml": state(["W-1"])})
    plans, comment = merge_request_pipeline(runner, gitlab, head)
    assert [plans[n].returncode for n in ("eu", "us")] == [0, 0], plans
    assert "us: not changed by this merge request" in plans["us"].log
    kept = {name: job.artifacts for name, job in plans.items()}
    assert kept["eu"] is not None and kept["us"] is not None
    assert [p.name for p in kept["us"].rglob("*.json")] == []
    saved = json.loads((kept["eu"] / "plans" / "eu.json").read_text())
    assert (saved["review"]["pull_request"], saved["review"]["head_sha"]) == (MR, head)
    assert comment.ran and comment.returncode == 0, comment.log
    (note,) = gitlab.state.notes[MR]
    assert note["body"].startswith(MARKER) and "W-1" in note["body"]

    # Another push to the merge request: the same note, updated; the comment job reads no
    # account (it holds no account's variable).
    head = _branch(repo, "hire", {"accounts/eu/workforce.yaml": state(["W-1", "W-2"])})
    since = controls.last_seq()
    plans, comment = merge_request_pipeline(runner, gitlab, head)
    assert clients_seen(controls, since) == {clients["eu"].client_id}  # eu's plan job only
    assert comment.returncode == 0, comment.log
    assert [n["id"] for n in gitlab.state.notes[MR]] == [note["id"]]
    assert "W-2" in gitlab.state.notes[MR][0]["body"]
    assert all(r.token == TOKEN for r in gitlab.requests)
    assert comment.artifacts is not None
    assert sorted(p.name for p in (comment.artifacts / "plans").iterdir()) == ["eu.json"]

    # The merge: eu's reviewed plan is applied in production-eu; us is left alone.
    since = controls.last_seq()
    applies = merge(runner, gitlab, repo, "hire", head, comment.artifacts)
    assert applies["eu"].environment == "production-eu"
    assert applies["eu"].returncode == 0, applies["eu"].log
    assert "planning again" not in applies["eu"].log
    assert "us: not changed by this push" in applies["us"].log
    assert applies["us"].returncode == 0
    assert clients_seen(controls, since) == {clients["eu"].client_id}
    assert live(sandbox, clients["eu"]) == ["W-1", "W-2"] and live(sandbox, clients["us"]) == []


def test_a_merge_whose_plan_changed_applies_nothing(
    runner: GitLabRunner,
    repo: Path,
    sandbox: SandboxServer,
    clients: dict[str, ClientAccess],
    gitlab: FakeGitLab,
) -> None:
    head = _branch(repo, "hire", {"accounts/eu/workforce.yaml": state(["W-1", "W-2"])})
    _, comment = merge_request_pipeline(runner, gitlab, head)
    assert comment.artifacts is not None
    with service_client(sandbox.base_url, clients["eu"].token) as api:  # meanwhile, by hand
        answer = api.post(
            "/contract/workers/inviteWorkersBulkLocked",
            json=[invitation(externalId="W-1", workerEmail="w-1@example.com", jobTitle=None)],
        )
    assert answer.is_success

    applies = merge(runner, gitlab, repo, "hire", head, comment.artifacts)

    eu = applies["eu"]
    assert eu.returncode == 2, eu.log  # plan-compare: the plan at merge is another
    assert "eu: the reviewed plan was not applied as saved; planning again" in eu.log
    assert live(sandbox, clients["eu"]) == ["W-1"]  # W-2 was not invited: nothing applied


def test_a_merge_request_that_changes_no_account_says_so_in_its_note(
    runner: GitLabRunner, repo: Path, controls: Controls, gitlab: FakeGitLab
) -> None:
    head = _branch(repo, "docs", {"README.md": "Accounts of the group.\n"})
    since = controls.last_seq()
    plans, comment = merge_request_pipeline(runner, gitlab, head)
    assert all(job.returncode == 0 for job in plans.values())
    assert comment.returncode == 0, comment.log
    (note,) = gitlab.state.notes[MR]
    assert note["body"].startswith(MARKER)
    assert "No account in reconciler.yaml is changed by this merge request" in note["body"]
    assert controls.requests(since) == []


def test_the_jobs_run_only_in_their_pipelines(
    runner: GitLabRunner, repo: Path, gitlab: FakeGitLab
) -> None:
    """`comment` runs for merge requests only, `apply` for pushes to the default branch."""
    main = git(repo, "rev-parse", "main")
    schedule = {**_common(gitlab, main), "CI_PIPELINE_SOURCE": "schedule"}
    assert not runner.run("comment", schedule).ran
    assert not runner.run("apply", schedule, matrix={"ACCOUNT": "eu"}).ran
    branch_push = {**_common(gitlab, main), "CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "x"}
    assert not runner.run("apply", branch_push, matrix={"ACCOUNT": "eu"}).ran


def test_a_push_with_no_merge_request_applies_nothing_and_fails_only_with_changes(
    runner: GitLabRunner,
    repo: Path,
    sandbox: SandboxServer,
    clients: dict[str, ClientAccess],
    gitlab: FakeGitLab,
) -> None:
    """A direct push to the default branch: no merge request, no reviewed plan."""
    before = git(repo, "rev-parse", "main")
    merged = commit(repo, {"accounts/eu/workforce.yaml": state(["W-1"])}, "direct")
    pipeline = {
        **_common(gitlab, merged),
        "CI_PIPELINE_SOURCE": "push",
        "CI_COMMIT_BRANCH": "main",
        "CI_COMMIT_BEFORE_SHA": before,
    }
    applies = {n: runner.run("apply", pipeline, matrix={"ACCOUNT": n}) for n in ("eu", "us")}

    assert applies["eu"].returncode == 1, applies["eu"].log
    assert "eu: no plan reviewed on a merge request: nothing applied" in applies["eu"].log
    assert applies["us"].returncode == 0 and "us: not changed by this push" in applies["us"].log
    assert live(sandbox, clients["eu"]) == []
