"""The merge-refused comment shows the riskiest difference first, and counts what it leaves out.

A pull request reviewed with 3,000 invitations is merged after 1,001 of them were invited by
hand (so the reviewed plan is stale and no longer plans them), with one changed, and one
invitation nobody reviewed (`NEW-5000`): the action refuses to apply, and its
comment names `NEW-5000` first, then the changed one, then what is no longer planned, says how
many of each it does not list, and fits GitHub's limit with the plan at merge below it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from reconciler.render.comment_body import GITHUB_BODY_LIMIT
from reconciler.sandbox import SandboxServer
from tests.gitops.action_runner import Job, run_action
from tests.gitops.fake_github import FakeGitHub, pull_request
from tests.gitops.test_action import HEAD_SHA, PR, TOKEN, job, merge_job, refusal


@pytest.fixture
def server() -> Iterator[SandboxServer]:
    with SandboxServer() as sandbox:
        yield sandbox


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(TOKEN) as fake:
        fake.state.pulls[PR] = pull_request(PR, HEAD_SHA)
        yield fake


def worker(n: int, email: str | None = None) -> dict[str, str]:
    return {
        "externalId": f"NEW-{n:04d}",
        "typeOfWorker": "Worker",
        "workerName": "New",
        "workerSurname": f"Person{n}",
        "workerEmail": email or f"new{n}@example.com",
        "countryIso": "GB",
    }


def write(path: Path, workers: list[dict[str, str]]) -> Path:
    document = {"version": 1, "scope": {"externalIdPrefix": "NEW-"}, "workers": workers}
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def merge(tmp_path: Path, path: Path, server: SandboxServer, github: FakeGitHub, pr: Job) -> Job:
    return merge_job(tmp_path, server, github, pr, path=path)


def test_the_unreviewed_invitation_is_named_first_and_what_is_left_out_is_counted(
    server: SandboxServer, github: FakeGitHub, tmp_path: Path
) -> None:
    desired = write(tmp_path / "workforce.yaml", [worker(n) for n in range(1, 3001)])
    reviewed = run_action(job(tmp_path, "pr", "pull-request", desired, server, github))
    assert reviewed.failed is None, reviewed.failed
    assert "3,000 invitations" in github.state.comments[PR][-1]["body"]

    for first in range(2000, 3001, 100):  # by hand, after the review
        answer = httpx.post(
            f"{server.base_url}/contract/workers/inviteWorkersBulkLocked",
            headers={"Authorization": f"Bearer {server.token}"},
            json=[worker(n) for n in range(first, min(first + 100, 3001))],
        )
        assert answer.is_success, answer.text
    changed = [worker(1, "changed@example.com")] + [worker(n) for n in range(2, 3001)]
    write(desired, [*changed, worker(5000)])
    done = merge(tmp_path, desired, server, github, reviewed)

    assert done.failed is not None
    body = refusal(github)
    assert len(body) <= GITHUB_BODY_LIMIT
    listed = re.findall(r"^- `(.*)`: (.*)$", body, re.MULTILINE)
    assert listed[:2] == [
        ('worker["NEW-5000"] (invite)', "planned now, but never reviewed"),
        ('worker["NEW-0001"] (invite)', "planned differently from the review"),
    ]
    assert listed[2] == ('worker["NEW-2000"] (invite)', "reviewed, but no longer planned")
    assert "Differences: 1 change planned now, but never reviewed; 1 change planned" in body
    assert "1,001 changes reviewed, but no longer planned." in body
    left = 1001 - (len(listed) - 2)
    assert 0 < left < 1001
    assert f"_Not listed here: {left:,} of 1,001 reviewed, but no longer planned._" in body
    assert "<details><summary>The plan at merge</summary>" in body
