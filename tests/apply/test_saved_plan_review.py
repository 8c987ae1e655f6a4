"""A saved plan is bound to its review: the files it was made from, the pull request, the commit.

`plan --out --pull-request N --head-sha SHA` records them inside what is signed; `apply PLAN
--expect-pull-request N --expect-head-sha SHA --expect-files PATH` (the merge job's call)
applies it only when all three are the merge's, and sends nothing otherwise.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.apply.support import QUICKSTART, cli, request_seq

PLAN_KEY = "review-binding-plan-key-0123456789abcdef"
HEAD = "9fceb02d0ae598e95dc970b74767f19372d61af8"


def _writes(server: SandboxServer, since: int) -> list[str]:
    log = httpx.get(f"{server.base_url}/_sandbox/requests", params={"since": since}).json()
    return [entry["path"] for entry in log if entry["method"] != "GET"]


@pytest.fixture
def reviewed(demo: SandboxServer, tmp_path: Path) -> Path:
    """The plan job's: the pull request's files in their own folder, planned for PR 42."""
    (tmp_path / "pull-request" / "workforce").mkdir(parents=True)
    shutil.copy(QUICKSTART, tmp_path / "pull-request" / "workforce" / "workforce.yaml")
    out = tmp_path / "plan.json"
    made = cli(
        "plan", str(tmp_path / "pull-request" / "workforce"), "--out", str(out),
        "--pull-request", "42", "--head-sha", HEAD.upper(),
        server=demo, RECONCILER_PLAN_KEY=PLAN_KEY,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    return out


def _merged(tmp_path: Path, text: str | None = None) -> Path:
    """The merge job's checkout: the same file name in another folder."""
    folder = tmp_path / "merge" / "workforce"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "workforce.yaml").write_text(QUICKSTART.read_text() if text is None else text)
    return folder


def _apply(server: SandboxServer, plan: Path, pull: str, head: str, files: Path):  # type: ignore[no-untyped-def]
    return cli(
        "apply", str(plan), "--expect-pull-request", pull, "--expect-head-sha", head,
        "--expect-files", str(files), server=server, RECONCILER_PLAN_KEY=PLAN_KEY,
    )  # fmt: skip


def test_the_plan_records_its_review_inside_what_is_signed(reviewed: Path) -> None:
    review = json.loads(reviewed.read_text())["review"]
    assert review["pull_request"] == 42 and review["head_sha"] == HEAD
    assert review["files"].startswith("hmac-sha256:")
    assert PLAN_KEY not in reviewed.read_text()


@pytest.mark.parametrize(
    ("pull", "head", "text", "named"),
    [
        ("43", HEAD, None, "pull request differ"),
        ("42", "0" * 40, None, "head commit differ"),
        (
            "42",
            HEAD,
            QUICKSTART.read_text().replace("Katherine", "Kathryn"),
            "desired-state files differ",
        ),
    ],
    ids=["another pull request", "another commit", "other files at merge"],
)
def test_a_plan_reviewed_for_something_else_sends_nothing(
    demo: SandboxServer, reviewed: Path, tmp_path: Path, pull: str, head: str, text, named: str
) -> None:
    since = request_seq(demo)
    refused = _apply(demo, reviewed, pull, head, _merged(tmp_path, text))
    assert refused.returncode == 1
    assert f"was not reviewed for this merge ({named}" in refused.stderr
    assert f"planned for pull request #42 at commit {HEAD}" in refused.stderr
    assert _writes(demo, since) == []


def test_the_reviewed_plan_of_the_merge_applies(
    demo: SandboxServer, reviewed: Path, tmp_path: Path
) -> None:
    applied = _apply(demo, reviewed, "42", HEAD, _merged(tmp_path))
    assert applied.returncode == 0, applied.stderr


def test_the_pull_request_is_recorded_only_in_a_saved_plan(demo: SandboxServer) -> None:
    alone = cli("plan", str(QUICKSTART), "--pull-request", "42", "--head-sha", HEAD, server=demo)
    assert alone.returncode == 1 and "add --out" in alone.stderr
    half = cli("plan", str(QUICKSTART), "--out", "x.json", "--pull-request", "42", server=demo)
    assert half.returncode == 1 and "go together" in half.stderr
    short = cli(
        "plan", str(QUICKSTART), "--head-sha", "9fceb02", "--pull-request", "1", server=demo
    )
    assert short.returncode == 1 and "not a full commit SHA" in short.stderr


def test_the_comment_of_a_saved_plan_names_the_commit_it_planned(
    demo: SandboxServer, reviewed: Path
) -> None:
    body = cli("comment", str(reviewed), server=demo, RECONCILER_PLAN_KEY=PLAN_KEY)
    assert body.returncode == 0, body.stderr
    assert body.stdout.startswith("<!-- reconciler:plan -->\n### reconciler plan\n")
    assert f"\n\nPlanned at commit `{HEAD}`.\n" in body.stdout


def test_the_expect_options_check_a_saved_plan_and_need_the_files(
    demo: SandboxServer, reviewed: Path
) -> None:
    on_a_file = cli("apply", str(QUICKSTART), "--expect-pull-request", "42", server=demo)
    assert on_a_file.returncode == 1 and "check a saved plan" in on_a_file.stderr
    since = request_seq(demo)
    no_files = cli(
        "apply", str(reviewed), "--expect-pull-request", "42", "--expect-head-sha", HEAD,
        server=demo, RECONCILER_PLAN_KEY=PLAN_KEY,
    )  # fmt: skip
    assert no_files.returncode == 1 and "need --expect-files" in no_files.stderr
    assert _writes(demo, since) == []
