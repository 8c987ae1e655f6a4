"""Every body GitHub receives is within its limits, against a fake that answers 422 over them.

The pull-request comment, the merge-refused comment (plan-compare's Markdown plus the plan),
the drift issue and the job summary (1 MiB) all pass through `fit_body`: a body too long is
cut at a line, what it left open is closed, and a note says what was left out.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.gitops.github import GitHub, GitHubError
from reconciler.render.comment_body import (
    GITHUB_BODY_LIMIT,
    JOB_SUMMARY_LIMIT,
    fit_body,
    utf8_bytes,
)
from reconciler.secrets import Secret
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub
from tests.gitops.support import reconciler

TOKEN = "ghs_" + secrets.token_hex(18)
PR = 42
# A plan-compare paragraph of 5,000 differences (270,000 characters, as in the report).
COMPARE = (
    ":no_entry: **Not applied: the plan at merge differs from the reviewed plan.**\n\n"
    + "".join(
        f'- `worker["ENG-{n:05d}"] (invite)`: planned now, but never reviewed\n'
        for n in range(5000)
    )
)
PLAN = "### reconciler plan\n\n<details><summary>Invitations</summary>\n\n```diff\n" + "".join(
    f'+   worker["ENG-{n:05d}"] {{\n' for n in range(20_000)
)


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(TOKEN) as fake:
        yield fake


def _env(fake: FakeGitHub) -> dict[str, str]:
    return {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": OWNER_REPO, "GITHUB_API_URL": fake.api_url}


def _sent_bodies(fake: FakeGitHub) -> list[str]:
    return [r.body["body"] for r in fake.writes() if r.body and "body" in r.body]


def test_the_fake_refuses_a_body_over_the_limit_as_github_does(github: FakeGitHub) -> None:
    with GitHub(OWNER_REPO, Secret(TOKEN), api_url=github.api_url) as api:
        path = api.repo_path(f"issues/{PR}/comments")
        with pytest.raises(GitHubError) as refused:
            api.post(path, {"body": "x" * (GITHUB_BODY_LIMIT + 1)})
        assert refused.value.status == 422 and "body is too long" in refused.value.message
        assert api.post(path, {"body": "x" * GITHUB_BODY_LIMIT})["id"]


@pytest.mark.parametrize(
    ("purpose", "text"),
    [("plan", PLAN), ("apply", COMPARE + "\n<details><summary>The plan at merge</summary>\n\n"
                      + PLAN + "```\n\n</details>\n")],
    ids=["plan comment", "merge-refused comment"],
)  # fmt: skip
def test_a_comment_too_long_is_cut_with_a_note(
    github: FakeGitHub, tmp_path: Path, purpose: str, text: str
) -> None:
    assert len(text) > 4 * GITHUB_BODY_LIMIT
    body_file = tmp_path / "body.md"
    body_file.write_text(text)
    result = reconciler(
        "github", "pr-comment", "--pr", str(PR), "--body-file", str(body_file),
        "--purpose", purpose, **_env(github),
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    (body,) = _sent_bodies(github)
    assert len(body) <= GITHUB_BODY_LIMIT
    assert body.startswith(f"<!-- reconciler:{purpose} -->\n")
    assert text.split("\n", 1)[0] in body  # the head is what is kept
    assert "_This text was cut to fit GitHub's limit:" in body and "left out" in body
    _balanced(body)
    again = reconciler(
        "github", "pr-comment", "--pr", str(PR), "--body-file", str(body_file),
        "--purpose", purpose, **_env(github),
    )  # fmt: skip
    assert "unchanged the" in again.stdout  # the cut is the same bytes every time


def test_the_drift_issue_is_cut_with_a_note(github: FakeGitHub, tmp_path: Path) -> None:
    report = tmp_path / "drift.md"
    report.write_text(PLAN)
    result = reconciler(
        "github", "drift-issue", "--drift-exit-status", "2", "--report-file", str(report),
        **_env(github),
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    (body,) = _sent_bodies(github)
    assert len(body) <= GITHUB_BODY_LIMIT and "left out" in body
    _balanced(body)


def test_the_job_summary_stays_under_1_mib(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("already here\n" * 1000)
    body_file = tmp_path / "plan.md"
    body_file.write_text(PLAN * 3 + "é" * 10)  # over 1 MiB; bytes are what count
    result = reconciler(
        "github", "step-summary", "--body-file", str(body_file), GITHUB_STEP_SUMMARY=str(summary)
    )

    assert result.returncode == 0, result.stderr
    written = summary.read_text()
    assert len(written.encode()) <= JOB_SUMMARY_LIMIT
    assert written.startswith("already here\n") and "bytes) left out" in written
    assert "`plan.md` in this run's plan artifact" in written
    _balanced(written)


@pytest.mark.parametrize(
    "text",
    ["short\n", "```diff\n" + "+ x\n" * 100, "<details>\n\n````\n```\n" + "y\n" * 300],
)
def test_fit_body_closes_what_it_leaves_open(text: str) -> None:
    fitted = fit_body(text, 300, measure=utf8_bytes)
    assert utf8_bytes(fitted) <= 300
    assert fitted == text if len(text) <= 300 else "left out" in fitted
    _balanced(fitted)


def _balanced(body: Any) -> None:
    """No code fence left open, and every `<details>` outside a fence closed."""
    fence = ""
    details = 0
    for line in body.split("\n"):
        run = re.match(r"`{3,}", line)
        if fence:
            if run and len(run[0]) >= len(fence) and not line[len(run[0]) :].strip():
                fence = ""
            continue
        if run:
            fence = run[0]
            continue
        details += line.count("<details") - line.count("</details>")
    assert not fence, "a code fence left open"
    assert details == 0, "a <details> left open"
