"""After a merge: find the pull request's run that saved the reviewed plan, on a fake GitHub.

The answers follow GitHub's documented shapes for "List pull requests associated with a commit",
"List artifacts for a repository" (an object wrapping `artifacts`, paged by `Link`), "Get a
workflow run" and "Compare two commits". Only an artifact that a run of the plan workflow on
the default branch uploaded counts: a branch's run can upload any name.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import pytest

from reconciler.gitops.github.runs import merged_pull_request, newest_artifact
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub, workflow_run
from tests.gitops.support import reconciler

TOKEN = "ghs_" + secrets.token_urlsafe(27)
MERGE_SHA = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
HEAD_SHA = "9fceb02d0ae598e95dc970b74767f19372d61af8"
OLD_HEAD = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
NAME = "reconciler-plan"


def pull(number: int, merged: bool, merge_sha: str | None, head: str) -> dict[str, Any]:
    return {
        "url": f"https://api.github.com/repos/{OWNER_REPO}/pulls/{number}",
        "number": number,
        "state": "closed" if merged else "open",
        "title": "Invite Katherine",
        "merged_at": "2026-11-21T10:00:00Z" if merged else None,
        "merge_commit_sha": merge_sha,
        "head": {"ref": "invite-katherine", "sha": head, "label": "octo-org:invite-katherine"},
        "base": {"ref": "main", "sha": "e5bd3914e2e596debea16f433f57875b5b90bcd6"},
    }


def artifact(
    ident: int, name: str, head: str, created: str, expired: bool = False, branch: str = "main"
) -> Any:
    """The plan artifact of pull request head `head`, uploaded by the plan workflow, which runs
    on the default branch: the run's own head is main's, the name says which PR commit."""
    return {
        "id": ident,
        "node_id": f"MDg6QXJ0aWZhY3Qx{ident}",
        "name": f"{name}-{head}",
        "size_in_bytes": 2048,
        "url": f"https://api.github.com/repos/{OWNER_REPO}/actions/artifacts/{ident}",
        "archive_download_url": f"https://api.github.com/repos/{OWNER_REPO}/actions/artifacts/{ident}/zip",
        "expired": expired,
        "created_at": created,
        "expires_at": "2026-12-05T10:00:00Z",
        "updated_at": created,
        "workflow_run": {
            "id": 7000 + ident,
            "repository_id": 1296269,
            "head_repository_id": 1296269,
            "head_branch": branch,
            "head_sha": MERGE_SHA,
        },
    }


ARTIFACTS = [
    artifact(1, NAME, OLD_HEAD, "2026-11-21T08:00:00Z"),  # an earlier push to the PR
    artifact(2, NAME, HEAD_SHA, "2026-11-21T09:00:00Z"),
    artifact(3, f"{NAME}-staging", HEAD_SHA, "2026-11-21T09:30:00Z"),  # another account's
    artifact(4, NAME, HEAD_SHA, "2026-11-21T09:40:00Z"),  # a re-run: the newest is reviewed
    artifact(5, NAME, HEAD_SHA, "2026-11-21T09:50:00Z", expired=True),
    artifact(6, NAME, "0" * 40, "2026-11-21T09:55:00Z"),  # another pull request
]


@pytest.mark.parametrize(
    ("pulls", "expected"),
    [
        ([pull(8, True, MERGE_SHA, HEAD_SHA)], 8),
        ([pull(7, False, None, OLD_HEAD), pull(8, True, MERGE_SHA, HEAD_SHA)], 8),
        ([pull(7, True, "1" * 40, OLD_HEAD), pull(8, True, MERGE_SHA, HEAD_SHA)], 8),
        ([pull(7, True, "1" * 40, OLD_HEAD)], 7),  # a rebase merge: the commit is in the PR
        ([pull(7, False, None, OLD_HEAD)], None),
        ([], None),
    ],
)
def test_the_merged_pull_request(pulls: list[Any], expected: int | None) -> None:
    found = merged_pull_request(pulls, MERGE_SHA)
    assert (found["number"] if found is not None else None) == expected


@pytest.mark.parametrize(
    ("name", "head", "expected"),
    [
        (NAME, HEAD_SHA, 4),
        (NAME, OLD_HEAD, 1),
        (f"{NAME}-staging", HEAD_SHA, 3),
        (NAME, "f" * 40, None),
    ],
)
def test_the_newest_unexpired_artifact(name: str, head: str, expected: int | None) -> None:
    found = newest_artifact(ARTIFACTS, name, head)
    assert (found["id"] if found is not None else None) == expected


TAG_COMMIT = "a" * 40
#: Newer than the reviewed plan, under its very name: uploaded by runs that are not the plan
#: workflow's on the default branch. None of them may be chosen.
ATTACKS = [
    # A branch's own workflow (which its author may edit at will) re-uploads a signed plan.
    artifact(11, NAME, HEAD_SHA, "2026-11-21T09:56:00Z", branch="attacker-branch"),
    # Another workflow on main that uploads what it is given.
    artifact(12, NAME, HEAD_SHA, "2026-11-21T09:57:00Z"),
    # The plan workflow as a tag named `main` has it: head_branch says main, at its own commit.
    artifact(13, NAME, HEAD_SHA, "2026-11-21T09:58:00Z"),
    # The plan workflow on main, but run by a push (a branch's edit of its trigger).
    artifact(14, NAME, HEAD_SHA, "2026-11-21T09:59:00Z"),
]
RUNS = {
    **{
        a["workflow_run"]["id"]: workflow_run(a["workflow_run"]["id"], MERGE_SHA) for a in ARTIFACTS
    },
    7011: workflow_run(7011, MERGE_SHA, branch="attacker-branch", event="push"),
    7012: workflow_run(7012, MERGE_SHA, path=".github/workflows/upload.yml"),
    7013: workflow_run(7013, TAG_COMMIT),
    7014: workflow_run(7014, MERGE_SHA, event="push"),
}


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(TOKEN, max_page_size=2) as fake:
        fake.state.commit_pulls[MERGE_SHA] = [pull(8, True, MERGE_SHA, HEAD_SHA)]
        fake.state.artifacts = ARTIFACTS + ATTACKS
        fake.state.runs = dict(RUNS)
        fake.state.default_branch_commits = {MERGE_SHA}
        yield fake


def reviewed_plan(fake: FakeGitHub, sha: str, name: str = NAME) -> Any:
    return reconciler(
        "github", "reviewed-plan", "--sha", sha, "--artifact", name,
        GITHUB_TOKEN=TOKEN, GITHUB_REPOSITORY=OWNER_REPO, GITHUB_API_URL=fake.api_url,
    )  # fmt: skip


def test_prints_the_run_for_github_output(github: FakeGitHub) -> None:
    result = reviewed_plan(github, MERGE_SHA)

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "found=true",
        "pull-request=8",
        f"head-sha={HEAD_SHA}",
        "run-id=7004",
        "artifact-id=4",
        f"artifact-name={NAME}-{HEAD_SHA}",
    ]
    listed = [r for r in github.requests if r.path.endswith("/actions/artifacts")]
    assert [r.query.get("page", "1") for r in listed] == ["1", "2", "3", "4"]  # every page
    assert all(r.query["name"] == f"{NAME}-{HEAD_SHA}" for r in listed)


def test_a_direct_push_has_no_reviewed_plan(github: FakeGitHub) -> None:
    result = reviewed_plan(github, "2" * 40)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "found=false\n"


def test_only_the_plan_workflows_run_on_the_default_branch_counts(github: FakeGitHub) -> None:
    github.state.runs.pop(7004)  # the reviewed run deleted: the earlier re-run is the one
    result = reviewed_plan(github, MERGE_SHA)
    assert result.returncode == 0, result.stderr
    assert "run-id=7002" in result.stdout.splitlines()
    # The branch's run was never even asked about; the others were, and refused.
    asked = {r.path.rsplit("/", 1)[1] for r in github.requests if "/actions/runs/" in r.path}
    assert "7011" not in asked and {"7012", "7013", "7014"} <= asked


def test_no_plan_when_only_other_runs_uploaded_one(github: FakeGitHub) -> None:
    github.state.artifacts = ATTACKS
    result = reviewed_plan(github, MERGE_SHA)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "found=false\n"


def test_another_plan_workflow_file_can_be_named(github: FakeGitHub) -> None:
    github.state.runs = {
        key: {**run, "path": run["path"].replace("reconciler-plan.yml", "plan.yml")}
        for key, run in RUNS.items()
    }
    named = reconciler(
        "github", "reviewed-plan", "--sha", MERGE_SHA, "--artifact", NAME, "--workflow", "plan.yml",
        GITHUB_TOKEN=TOKEN, GITHUB_REPOSITORY=OWNER_REPO, GITHUB_API_URL=github.api_url,
    )  # fmt: skip
    assert named.returncode == 0 and "run-id=7004" in named.stdout.splitlines()
    assert reviewed_plan(github, MERGE_SHA).stdout == "found=false\n"
