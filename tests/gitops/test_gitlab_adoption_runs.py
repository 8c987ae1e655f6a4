"""The GitLab recipe's drift job proposes what changed live as a merge request, run as it is
(the child pipeline of examples/gitlab/accounts.gitlab-ci.yml) against the sandbox and a fake
GitLab: opened on `reconciler/adopt-<account>`, linked from the drift report, updated when the
account changes again, closed (its branch deleted) when there is nothing left to adopt."""

from __future__ import annotations

from pathlib import Path

from reconciler.sandbox import SandboxServer
from tests.gitops import test_gitlab_accounts_runs as gitlab_runs
from tests.gitops.fake_gitlab import PROJECT_ID, FakeGitLab
from tests.gitops.gitlab_runner import GitLabRunner
from tests.gitops.test_accounts_workflow_runs import commit, git, unowned_worker
from tests.gitops.test_adoption_pr_runs import hire, keep_bom_and_mode
from tests.sandbox.support import ClientAccess, Controls

gitlab, clients, repo, runner = (
    gitlab_runs.gitlab,
    gitlab_runs.clients,
    gitlab_runs.repo,
    gitlab_runs.runner,
)
BRANCH = "reconciler/adopt-us"


def drift(
    runner: GitLabRunner,
    gitlab: FakeGitLab,
    repo: Path,
    status: int,
    variables: dict[str, str] | None = None,
) -> str:
    """The scheduled pipeline's drift job of us at main's head (with the project's CI/CD
    `variables`); its drift report."""
    schedule = gitlab_runs.child(runner, {**gitlab_runs._common(gitlab, git(repo, "rev-parse",
                                 "main")), "CI_PIPELINE_SOURCE": "schedule"})  # fmt: skip
    job = runner.run(
        "drift", {**schedule.variables, **(variables or {})}, matrix={"ACCOUNT": "us"},
        file=schedule.file,
    )  # fmt: skip
    assert job.ran and job.returncode == status, job.log
    assert job.artifacts is not None
    return (job.artifacts / "drift.md").read_text()


def test_the_drift_job_opens_updates_and_closes_one_adoption_merge_request(
    runner: GitLabRunner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    gitlab: FakeGitLab,
) -> None:
    hire(sandbox, controls, clients["us"], "W-7")

    report = drift(runner, gitlab, repo, 2)

    (request,) = gitlab.state.merge_requests.values()
    assert request["source_branch"] == BRANCH and request["target_branch"] == "main"
    assert request["description"].startswith('<!-- reconciler:adopt key="us" -->')
    assert '**added** `worker["W-7"]`' in request["description"]
    start, files = gitlab.state.branches[BRANCH]
    assert start == git(repo, "rev-parse", "main")
    assert "  - externalId: W-7\n" in files["accounts/us/workforce.yaml"]
    assert f"**Proposed:** !{request['iid']}" in report

    hire(sandbox, controls, clients["us"], "W-8")
    drift(runner, gitlab, repo, 2)

    (again,) = gitlab.state.merge_requests.values()
    assert again["iid"] == request["iid"] and '`worker["W-8"]`' in again["description"]
    assert "W-8" in gitlab.state.branches[BRANCH][1]["accounts/us/workforce.yaml"]

    commit(repo, gitlab.state.branches[BRANCH][1], "adopt what changed live")  # merged
    drift(runner, gitlab, repo, 0)

    (closed,) = gitlab.state.merge_requests.values()
    assert closed["state"] == "closed" and BRANCH not in gitlab.state.branches
    assert "Nothing is left to adopt" in gitlab.state.notes[closed["iid"]][-1]["body"]


def test_a_fork_merge_request_with_the_branch_and_marker_is_never_taken_for_the_adoption(
    runner: GitLabRunner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    gitlab: FakeGitLab,
) -> None:
    """GitLab lists a fork's merge requests into the project by their source branch's name:
    one from a fork's `reconciler/adopt-us`, its description starting with the marker, is
    someone else's, never updated, linked or closed as the adoption."""
    spoof = '<!-- reconciler:adopt key="us" -->\nMerge me: adopts the drift.\n'
    gitlab.state.merge_requests[1] = {
        "iid": 1, "state": "opened", "title": "reconciler: adopt", "description": spoof,
        "source_branch": BRANCH, "target_branch": "main", "source_project_id": 9999,
        "target_project_id": PROJECT_ID,
        "web_url": "https://gitlab.example.com/platform/workforce/-/merge_requests/1",
    }  # fmt: skip
    hire(sandbox, controls, clients["us"], "W-7")

    report = drift(runner, gitlab, repo, 2)

    fork, ours = gitlab.state.merge_requests[1], gitlab.state.merge_requests[2]
    assert fork["description"] == spoof and fork["state"] == "opened"
    assert ours["source_project_id"] == PROJECT_ID and '`worker["W-7"]`' in ours["description"]
    assert "**Proposed:** !2" in report and "!1 " not in report


def test_the_adoption_commit_keeps_a_files_bom_and_its_executable_bit(
    runner: GitLabRunner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    gitlab: FakeGitLab,
) -> None:
    """Issue 49, item 7: the merge request's commit keeps the file's BOM and its mode."""
    path = "accounts/us/workforce.yaml"
    keep_bom_and_mode(repo, path)
    hire(sandbox, controls, clients["us"], "W-7")

    drift(runner, gitlab, repo, 2)

    _, files = gitlab.state.branches[BRANCH]
    assert files[path].startswith("\ufeffversion: 1\n") and "  - externalId: W-7\n" in files[path]
    assert gitlab.state.executable[BRANCH] == {path}


def test_the_drift_job_s_mode_is_the_strict_variable(
    runner: GitLabRunner,
    repo: Path,
    sandbox: SandboxServer,
    clients: dict[str, ClientAccess],
    gitlab: FakeGitLab,
) -> None:
    """A worker us's files do not own fails `drift --strict` (exit 2, the pipeline warned);
    with the CI/CD variable RECONCILER_STRICT "false" it is reported and the job passes, as
    the single action's `strict: false`."""
    unowned_worker(sandbox, clients["us"])

    drift(runner, gitlab, repo, 2)
    report = drift(runner, gitlab, repo, 0, {"RECONCILER_STRICT": "false"})

    assert "unmanaged" in report
