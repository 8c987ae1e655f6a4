"""`reconciler github head-plan` and `approvals-status`, the review workflow's commands, against
the fake GitHub: the head's reviewed plan is only the plan workflow's artifact from a run on the
default branch (a branch's run uploading one of that name is not looked at), and a head with no
reviewed plan gets a pending status that says so."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gitops.fake_github import OWNER_REPO, FakeGitHub, workflow_run
from tests.gitops.support import reconciler

TOKEN = "ghs_" + secrets.token_urlsafe(27)
HEAD, MAIN = "a" * 40, "b" * 40


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(TOKEN) as fake:
        fake.state.default_branch_commits.add(MAIN)
        yield fake


def run(github: FakeGitHub, *args: str) -> tuple[int, str]:
    done = reconciler("github", *args, GITHUB_REPOSITORY=OWNER_REPO, GITHUB_TOKEN=TOKEN,
                      GITHUB_API_URL=github.api_url)  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def artifact(github: FakeGitHub, run_id: int, branch: str) -> None:
    github.state.runs[run_id] = workflow_run(run_id, MAIN, branch=branch)
    github.state.artifacts.append({
        "id": run_id, "name": f"reconciler-plan-{HEAD}", "expired": False,
        "created_at": f"2026-11-26T09:{run_id % 60:02d}:00Z",
        "workflow_run": {"id": run_id, "head_branch": branch, "head_sha": MAIN},
    })  # fmt: skip


def test_the_head_s_plan_is_the_plan_workflow_s_on_the_default_branch(github: FakeGitHub) -> None:
    artifact(github, 5031, "main")
    artifact(github, 5099, "evil")  # newer, from a branch's own run: never the reviewed plan
    found = ["--pr", "31", "--head-sha", HEAD, "--artifact", "reconciler-plan",
             "--workflow", "reconciler-plan.yml"]  # fmt: skip
    status, said = run(github, "head-plan", *found)
    assert status == 0, said
    assert f"run-id=5031\nartifact-name=reconciler-plan-{HEAD}\npull-request=31\n" in said

    github.state.artifacts = [a for a in github.state.artifacts if a["id"] == 5099]
    status, said = run(github, "head-plan", *found)
    assert status == 0 and "run-id=\nartifact-name=\n" in said, said


def test_a_head_with_no_reviewed_plan_is_pending_saying_so(
    github: FakeGitHub, tmp_path: Path
) -> None:
    status, said = run(github, "approvals-status", "--pr", "31", "--head-sha", HEAD,
                       "--plans", str(tmp_path / "plan.json"), "--context",
                       "reconciler/approvals/eu")  # fmt: skip
    assert status == 0, said
    (posted,) = github.state.statuses[HEAD]
    assert (posted["state"], posted["context"]) == ("pending", "reconciler/approvals/eu")
    assert posted["description"] == (
        "the head's reviewed plan is not found (not planned yet, or it failed)"
    )
