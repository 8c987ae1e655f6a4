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
from tests.gitops.gitlab_runner import ChildPipeline, GitLabJob, GitLabRunner
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


@pytest.fixture
def gitlab() -> Iterator[FakeGitLab]:
    with FakeGitLab(TOKEN) as fake:
        yield fake


# The accounts (eu and us, clients of the sandbox) and the project (main with both, empty): the
# same as the GitHub workflows' runs.
clients = github_runs.clients
repo = github_runs.repo


@pytest.fixture
def runner(
    tmp_path: Path, repo: Path, clients: dict[str, ClientAccess], gitlab: FakeGitLab
) -> GitLabRunner:
    def variables_of(name: str) -> dict[str, str]:
        return {f"RECONCILER_TOKEN_{name.upper()}": clients[name].token,
                "RECONCILER_PLAN_KEY": KEYS[name]}  # fmt: skip

    environments = {
        f"{kind}-{name}": variables_of(name)
        for kind in ("reconciler", "production")
        for name in ("eu", "us")
    }
    unscoped = {"GITLAB_TOKEN": TOKEN, "RECONCILER_INSTALL": "reconciler"}
    # Both accounts applied at main's first commit: a successful deployment each, as GitLab
    # keeps an earlier apply job's.
    first = git(repo, "rev-list", "--max-parents=0", "main")
    for name in ("eu", "us"):
        gitlab.deploy(f"production-{name}", first, "https://gitlab.example.com/-/jobs/1", "success")
    return GitLabRunner(tmp_path / "jobs", repo, environments, unscoped, gitlab=gitlab)


def _common(gitlab: FakeGitLab, sha: str) -> dict[str, str]:
    return {
        "CI_DEFAULT_BRANCH": "main",
        "CI_COMMIT_SHA": sha,
        "CI_API_V4_URL": gitlab.api_url,
        "CI_PROJECT_ID": str(PROJECT_ID),
    }


def child(runner: GitLabRunner, pipeline: dict[str, str]) -> ChildPipeline:
    """The parent pipeline: `generate` writes the child pipeline, `accounts` triggers it."""
    generate = runner.run("generate", pipeline)
    assert generate.returncode == 0, generate.log
    return runner.trigger("accounts", pipeline, needs=(generate,))


def merge_request_pipeline(
    runner: GitLabRunner, gitlab: FakeGitLab, head: str, iid: int = MR
) -> tuple[dict[str, GitLabJob], GitLabJob]:
    """The pipeline of a push to merge request `iid` at `head`: a plan job per account, then
    the comment job with their artifacts; the merge request's head pipeline is it."""
    pipeline = {
        **_common(gitlab, head),
        "CI_PIPELINE_SOURCE": "merge_request_event",
        "CI_MERGE_REQUEST_IID": str(iid),
        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
    }
    accounts = child(runner, pipeline)
    plans = {
        entry["ACCOUNT"]: runner.run("plan", accounts.variables, matrix=entry, file=accounts.file)
        for entry in accounts.matrix("plan")
    }
    comment = runner.run("comment", accounts.variables, needs=tuple(plans.values()),
                         file=accounts.file)  # fmt: skip
    parent, child_id, job_id = 7700 + iid * 10, 7701 + iid * 10, 50_000 + iid * 10
    gitlab.state.merge_requests[iid] = {
        "iid": iid, "state": "opened", "sha": head, "head_pipeline": {"id": parent},
    }  # fmt: skip
    gitlab.state.pipeline_jobs[parent] = [{"id": job_id - 1, "name": "generate"}]
    gitlab.state.pipeline_bridges[parent] = [
        {"id": job_id - 2, "name": "accounts", "downstream_pipeline": {"id": child_id}}
    ]
    gitlab.state.pipeline_jobs[child_id] = [
        {"id": job_id - 3, "name": "plan: [eu]"}, {"id": job_id, "name": "comment"},
    ]  # fmt: skip
    if comment.artifacts is not None:
        gitlab.state.job_artifacts[job_id] = comment.artifacts
    return plans, comment


def push_pipeline(
    runner: GitLabRunner, gitlab: FakeGitLab, sha: str, *, cancel: tuple[str, ...] = ()
) -> tuple[dict[str, GitLabJob], GitLabJob]:
    """The pipeline of a push to main at `sha`: an apply job per account (those in `cancel`
    cancelled before they ran), then the outcome job."""
    pipeline = {**_common(gitlab, sha), "CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "main"}
    accounts = child(runner, pipeline)
    applies = {
        entry["ACCOUNT"]: runner.run("apply", accounts.variables, matrix=entry,
                                     file=accounts.file, cancelled=entry["ACCOUNT"] in cancel)
        for entry in accounts.matrix("apply")
    }  # fmt: skip
    outcome = runner.run("outcome", accounts.variables, needs=tuple(applies.values()),
                         file=accounts.file)  # fmt: skip
    return applies, outcome


def merge(runner: GitLabRunner, gitlab: FakeGitLab, repo: Path, branch: str, iid: int = MR) -> str:
    """Merge `branch` as merge request `iid` (planned by `merge_request_pipeline`); the merge
    commit."""
    git(repo, "merge", "--quiet", "--no-ff", branch, "-m", f"Merge branch '{branch}' (!{iid})")
    merged = git(repo, "rev-parse", "main")
    gitlab.state.commit_merge_requests[merged] = [{"iid": iid, "state": "merged"}]
    gitlab.state.merge_requests[iid].update(state="merged", merge_commit_sha=merged)
    return merged


def merge_and_apply(
    runner: GitLabRunner, gitlab: FakeGitLab, repo: Path, branch: str, iid: int = MR
) -> dict[str, GitLabJob]:
    """Merge `branch` and run the push pipeline's apply jobs."""
    applies, outcome = push_pipeline(runner, gitlab, merge(runner, gitlab, repo, branch, iid))
    assert outcome.returncode == 0, outcome.log
    return applies


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
    applies = merge_and_apply(runner, gitlab, repo, "hire")
    assert applies["eu"].environment == "production-eu"
    assert applies["eu"].returncode == 0, applies["eu"].log
    assert "planning again" not in applies["eu"].log
    assert "us: nothing to do: applied at" in applies["us"].log
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

    applies = merge_and_apply(runner, gitlab, repo, "hire")

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
    """`comment` runs for merge requests only, `apply` for pushes to the default branch; a push
    to another branch runs no pipeline."""
    main = git(repo, "rev-parse", "main")
    schedule = child(runner, {**_common(gitlab, main), "CI_PIPELINE_SOURCE": "schedule"})
    assert not runner.run("comment", schedule.variables, file=schedule.file).ran
    assert not runner.run("apply", schedule.variables, matrix={"ACCOUNT": "eu"},
                          file=schedule.file).ran  # fmt: skip
    assert not runner.run("outcome", schedule.variables, file=schedule.file).ran
    branch_push = {**_common(gitlab, main), "CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "x"}
    assert not runner.run("generate", branch_push).ran


def test_a_push_with_no_merge_request_applies_nothing_and_fails_only_with_changes(
    runner: GitLabRunner,
    repo: Path,
    sandbox: SandboxServer,
    clients: dict[str, ClientAccess],
    gitlab: FakeGitLab,
) -> None:
    """A direct push to the default branch: no merge request, no reviewed plan."""
    merged = commit(repo, {"accounts/eu/workforce.yaml": state(["W-1"])}, "direct")
    applies, outcome = push_pipeline(runner, gitlab, merged)

    assert applies["eu"].returncode == 1, applies["eu"].log
    assert "eu: no plan reviewed on a merge request: nothing applied" in applies["eu"].log
    assert applies["us"].returncode == 0 and "us: nothing to do: applied at" in applies["us"].log
    assert live(sandbox, clients["eu"]) == []
    assert outcome.returncode == 0 and gitlab.state.notes == {}  # no merge request to tell
