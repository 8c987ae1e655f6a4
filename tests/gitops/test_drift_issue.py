"""The drift job: open, update or close the one drift issue; never act on a failed check."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.gitops.drift import DriftAction, DriftIssue, decide_drift_issue
from reconciler.gitops.github.forge import GitHubForge
from reconciler.gitops.issues import sync_drift_issue
from reconciler.render.marker import DRIFT, Marker
from reconciler.secrets import Secret
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub
from tests.gitops.support import reconciler

OPEN, UPDATE, CLOSE, NOTHING = (
    DriftAction.OPEN,
    DriftAction.UPDATE,
    DriftAction.CLOSE,
    DriftAction.NOTHING,
)
REPORT = "report"
SAME = DriftIssue(7, REPORT)
OLDER = DriftIssue(7, "an older report")


@pytest.mark.parametrize(
    ("case", "status", "existing", "expected"),
    [
        ("drift appears", 2, None, OPEN),
        ("drift changed", 2, OLDER, UPDATE),
        ("drift unchanged", 2, SAME, NOTHING),
        ("back in sync", 0, OLDER, CLOSE),
        ("in sync, nothing open", 0, None, NOTHING),
        ("check failed, issue open", 1, OLDER, NOTHING),
        ("check failed, nothing open", 1, None, NOTHING),
        ("interrupted", 130, OLDER, NOTHING),
        ("killed", -9, None, NOTHING),
    ],
)
def test_decision_table(
    case: str, status: int, existing: DriftIssue | None, expected: DriftAction
) -> None:
    assert decide_drift_issue(status, existing, REPORT) is expected, case


TOKEN = "ghs_" + secrets.token_urlsafe(27)
LABEL = "reconciler-drift"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(TOKEN, max_page_size=2) as fake:
        fake.state.issues = [
            _issue(1, "A person's issue about drift", "Please look.", [LABEL]),
            _issue(2, "A pull request", "<!-- reconciler:drift -->\n", [LABEL], pull=True),
            _issue(3, "A copy", "Copied: <!-- reconciler:drift -->\n", [LABEL]),
            _issue(4, "Another account", '<!-- reconciler:drift key="eu" -->\n', [LABEL]),
        ]
        yield fake


def _issue(number: int, title: str, body: str, labels: list[str], pull: bool = False) -> Any:
    issue = {
        "id": 500 + number,
        "number": number,
        "title": title,
        "body": body,
        "state": "open",
        "labels": [{"name": name} for name in labels],
        "user": {"login": "octocat", "type": "User"},
        "html_url": f"https://github.com/{OWNER_REPO}/issues/{number}",
    }
    if pull:
        issue["pull_request"] = {"url": f"https://api.github.com/repos/{OWNER_REPO}/pulls/{number}"}
    return issue


def drift_issue(fake: FakeGitHub, tmp_path: Path, status: int, report: str, *args: str) -> Any:
    path = tmp_path / "drift.md"
    path.write_text(report)
    return reconciler(
        "github", "drift-issue", "--drift-exit-status", str(status), "--report-file", str(path),
        *args, GITHUB_TOKEN=TOKEN, GITHUB_REPOSITORY=OWNER_REPO, GITHUB_API_URL=fake.api_url,
    )  # fmt: skip


def test_opens_updates_and_closes_one_issue(github: FakeGitHub) -> None:
    look_alikes = [dict(issue) for issue in github.state.issues]
    steps = [
        (2, "1 drifted\n", "drift issue: open #5"),
        (2, "1 drifted\n", "drift issue: nothing #5"),
        (2, "2 drifted\n", "drift issue: update #5"),
        (1, "partial\n", "drift issue: nothing #5"),
        (0, "in sync\n", "drift issue: close #5"),
        (0, "in sync\n", "drift issue: nothing"),
        (2, "1 unmanaged\n", "drift issue: open #6"),
    ]
    with GitHubForge(OWNER_REPO, Secret(TOKEN), api_url=github.api_url) as api:
        for status, report, said in steps:
            result = sync_drift_issue(api, status, report, Marker(DRIFT))
            number = f" #{result.number}" if result.number is not None else ""
            assert f"drift issue: {result.action.value}{number}" == said

    ours = {issue["number"]: issue for issue in github.state.issues if issue["number"] >= 5}
    assert ours[5]["state"] == "closed"
    assert ours[5]["body"] == "<!-- reconciler:drift -->\n2 drifted\n"
    assert ours[5]["labels"] == [{"name": LABEL, "color": "ededed"}]
    assert ours[6]["state"] == "open" and ours[6]["body"].endswith("1 unmanaged\n")
    assert github.state.issues[:4] == look_alikes  # the look-alikes, untouched
    closing = [r for r in github.writes() if r.path.endswith("/issues/5/comments")]
    assert len(closing) == 1 and "matches the desired state again" in closing[0].body["body"]
    listed = [r for r in github.requests if r.method == "GET"]
    assert all(r.query["state"] == "open" and r.query["labels"] == LABEL for r in listed)


def test_a_key_keeps_one_issue_per_account(github: FakeGitHub, tmp_path: Path) -> None:
    result = drift_issue(github, tmp_path, 0, "in sync\n", "--key", "eu")

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("drift issue: close #4")
    assert github.state.issues[3]["state"] == "closed"
    assert [issue["state"] for issue in github.state.issues[:3]] == ["open"] * 3
