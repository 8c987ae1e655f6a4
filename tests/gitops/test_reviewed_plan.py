"""After a merge: find the pull request's run that saved the reviewed plan, on a fake GitHub.

The answers follow GitHub's documented shapes for "List pull requests associated with a commit"
and "List artifacts for a repository" (an object wrapping `artifacts`, paged by `Link`).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import pytest

from reconciler.gitops.runs import merged_pull_request, newest_artifact
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub
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


def artifact(ident: int, name: str, head: str, created: str, expired: bool = False) -> Any:
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
            "head_branch": "main",
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


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(TOKEN, max_page_size=2) as fake:
        fake.state.commit_pulls[MERGE_SHA] = [pull(8, True, MERGE_SHA, HEAD_SHA)]
        fake.state.artifacts = ARTIFACTS
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
    assert [r.query.get("page", "1") for r in listed] == ["1", "2"]  # every page
    assert all(r.query["name"] == f"{NAME}-{HEAD_SHA}" for r in listed)


def test_a_direct_push_has_no_reviewed_plan(github: FakeGitHub) -> None:
    result = reviewed_plan(github, "2" * 40)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "found=false\n"
