"""The composite action's scripts, run locally against the sandbox and a fake GitHub.

Each test is one job of the example workflows: a pull request (validate, plan, artifact, one
plan comment), the merge (apply the reviewed plan, or refuse and say why on the pull request)
and the scheduled drift check (open, then close, one issue).
"""

from __future__ import annotations

import copy
import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.plan.saved import is_saved_plan
from reconciler.plan.signing import PlanKey, sign
from reconciler.sandbox import SandboxServer
from tests.gitops.action_runner import History, Job, run_action
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub, pull_request, workflow_run
from tests.gitops.support import FIXTURES, ROOT

TOKEN = "ghs_" + secrets.token_urlsafe(27)
QUICKSTART = ROOT / "examples" / "quickstart.yaml"
PR = 42
MERGE_SHA = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
HEAD_SHA = "9fceb02d0ae598e95dc970b74767f19372d61af8"
RUN_ID = 7001
#: The default branch's commit the plan workflow ran at (before the merge).
MAIN_SHA = "e5bd3914e2e596debea16f433f57875b5b90bcd6"
#: The plan job runs on the default branch: the artifact's name says which PR commit it planned.
ARTIFACT = f"reconciler-plan-{HEAD_SHA}"


@pytest.fixture
def demo() -> Iterator[SandboxServer]:
    with SandboxServer(seed=ROOT / "examples" / "sandbox-seed.yaml") as server:
        yield server


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(TOKEN, max_page_size=2) as fake:
        fake.state.comments[PR] = copy.deepcopy(
            json.loads((FIXTURES / "pr_comments.json").read_text())
        )
        fake.state.pulls[PR] = pull_request(PR, HEAD_SHA)
        yield fake


def job(
    tmp_path: Path, name: str, mode: str, path: Path, server: SandboxServer, github: FakeGitHub
) -> Job:
    return Job(
        inputs={
            "mode": mode,
            "path": str(path),
            "base-url": server.base_url,
            "service-token": server.token,
            "github-token": TOKEN,
            "client-id": str(server.client_id),  # as the example workflows set it
            **({"pull-request": str(PR), "head-sha": HEAD_SHA} if mode == "pull-request" else {}),
        },
        workdir=tmp_path / name,
        env={
            "GITHUB_REPOSITORY": OWNER_REPO,
            "GITHUB_API_URL": github.api_url,
            "GITHUB_SHA": MERGE_SHA,
        },
    )


def comment_writes(github: FakeGitHub) -> list[Any]:
    """What the job wrote to GitHub but the commit statuses."""
    return [r for r in github.writes() if "/statuses/" not in r.path]


def pull_request_job(
    tmp_path: Path, server: SandboxServer, github: FakeGitHub, path: Path = QUICKSTART
) -> Job:
    return run_action(job(tmp_path, "pr", "pull-request", path, server, github))


def test_pull_request_plans_keeps_the_plan_and_updates_one_comment(
    demo: SandboxServer, github: FakeGitHub, tmp_path: Path
) -> None:
    done = pull_request_job(tmp_path, demo, github)

    assert done.failed is None, done.failed
    assert done.step("Validate (annotations on the changed lines)").stdout == ""  # no errors
    comment = next(c for c in github.state.comments[PR] if c["id"] == 1006)
    assert comment["body"].startswith("<!-- reconciler:plan -->\n### reconciler plan\n")
    assert f"\n\nPlanned at commit `{HEAD_SHA}`.\n" in comment["body"]
    assert "| 0 | 1 | 0 | 0 | 1 | 1 | 1 | 2 |" in comment["body"]
    assert [r.method for r in comment_writes(github)] == ["PATCH"]
    # The check branch protection can require, on the head: pending, then the counts.
    plan = [s for s in github.state.statuses[HEAD_SHA] if s["context"] == "reconciler/plan"]
    pending, planned = plan
    assert (pending["state"], pending["context"]) == ("pending", "reconciler/plan")
    assert (planned["state"], planned["context"]) == ("success", "reconciler/plan")
    assert planned["description"].startswith("plan: ") and "to invite" in planned["description"]
    artifact = done.artifacts[ARTIFACT]
    assert sorted(p.name for p in artifact.iterdir()) == ["comment.md", "plan.json", "plan.md"]
    assert is_saved_plan(artifact / "plan.json")
    for kept in artifact.iterdir():  # the artifact outlives the run: no token in it
        assert demo.token not in kept.read_text() and TOKEN not in kept.read_text()
    assert (artifact / "comment.md").read_text() == comment["body"]
    # The job summary has the full plan, every change: what the comment may leave out.
    assert (artifact / "plan.md").read_text() in done.summary

    again = pull_request_job(tmp_path / "again", demo, github)
    assert again.failed is None
    assert "unchanged the plan comment" in again.step("Post or update the plan comment").stdout
    assert [r.method for r in comment_writes(github)] == ["PATCH"]


def test_an_invalid_file_is_annotated_and_nothing_is_posted(
    demo: SandboxServer, github: FakeGitHub, tmp_path: Path
) -> None:
    broken = tmp_path / "workforce.yaml"
    broken.write_text("version: 1\nworkers:\n  - externalId: ENG-001\n    countryIso: XX\n")

    done = run_action(job(tmp_path, "pr", "pull-request", broken, demo, github))

    assert done.failed is not None and done.failed.name.startswith("Validate")
    assert f"::error file={broken},line=" in done.failed.stdout
    assert comment_writes(github) == [] and done.artifacts == {}
    states = [status["state"] for status in github.state.statuses[HEAD_SHA]]
    assert states == ["pending", "failure"]  # the head's check fails


def merge_job(
    tmp_path: Path,
    server: SandboxServer,
    github: FakeGitHub,
    reviewed: Job,
    artifact: str = ARTIFACT,
    path: Path = QUICKSTART,
) -> Job:
    """The push to main after the pull request's run `reviewed`: `path`'s text merged as
    pull request 42 into a repository's main, checked out; the artifact is findable, as the
    plan workflow's run on the default branch uploaded it (`artifact` of `reviewed`)."""
    history = History(tmp_path / "history")
    merged = history.commit({path.name: path.read_text()}, f"Merge pull request #{PR}")
    github.state.commit_pulls[merged] = [
        {"number": PR, "merged_at": "2026-11-21T10:00:00Z", "merge_commit_sha": merged,
         "head": {"sha": HEAD_SHA, "ref": "change"}, "base": {"ref": "main"}}
    ]  # fmt: skip
    github.state.artifacts = [
        {"id": 1, "name": ARTIFACT, "expired": False, "created_at": "2026-11-21T09:00:00Z",
         "workflow_run": {"id": RUN_ID, "head_branch": "main", "head_sha": MAIN_SHA}}
    ]  # fmt: skip
    github.state.runs[RUN_ID] = workflow_run(RUN_ID, MAIN_SHA)
    github.state.default_branch_commits.add(MAIN_SHA)
    github.state.remote = history.remote
    checkout = history.checkout(merged, tmp_path / "checkout")
    merge = job(tmp_path, "merge", "apply", checkout / path.name, server, github)
    merge.env["GITHUB_SHA"] = merged
    merge.artifacts[f"{RUN_ID}/{ARTIFACT}"] = reviewed.artifacts[artifact]
    return run_action(merge)


def refusal(github: FakeGitHub) -> str:
    """The comment saying why the merge was not applied (the outcome comment follows it)."""
    (said,) = [c["body"] for c in github.state.comments[PR]
               if c["body"].startswith("<!-- reconciler:apply -->")]  # fmt: skip
    return str(said)


def live_status(server: SandboxServer, external_id: str) -> list[str]:
    answer = httpx.get(
        f"{server.base_url}/contract/workers/list",
        headers={"Authorization": f"Bearer {server.token}"},
    )
    answer.raise_for_status()
    return [w["status"] for w in answer.json()["content"] if w.get("externalId") == external_id]


def test_a_merge_whose_plan_changed_is_refused_and_explained(
    demo: SandboxServer, github: FakeGitHub, tmp_path: Path
) -> None:
    reviewed = pull_request_job(tmp_path, demo, github)
    # Someone invites ENG-004 by hand after the review: the reviewed invitation is stale, and
    # the plan at merge no longer has it.
    invited = httpx.post(
        f"{demo.base_url}/contract/workers/inviteWorkersBulkLocked",
        headers={"Authorization": f"Bearer {demo.token}"},
        json=[{"externalId": "ENG-004", "typeOfWorker": "Worker", "workerName": "Katherine",
               "workerSurname": "Johnson", "workerEmail": "katherine@example.com",
               "countryIso": "US"}],
    )  # fmt: skip
    assert invited.is_success, invited.text

    done = merge_job(tmp_path, demo, github, reviewed)

    assert done.failed is not None and done.failed.name.startswith("Apply the reviewed plan")
    assert "differs from the reviewed plan: nothing was applied" in done.failed.stdout
    said = refusal(github)
    assert said.startswith("<!-- reconciler:apply -->\n:no_entry: **Not applied")
    assert '`worker["ENG-004"] (invite)`: reviewed, but no longer planned' in said
    assert "<details><summary>The plan at merge</summary>" in said
    assert live_status(demo, "ENG-006") == ["ACTIVE"]  # the reviewed inactivation did not run


def test_a_merge_applies_the_fresh_reviewed_plan(
    demo: SandboxServer, github: FakeGitHub, tmp_path: Path
) -> None:
    reviewed = pull_request_job(tmp_path, demo, github)

    done = merge_job(tmp_path, demo, github, reviewed)

    assert done.failed is None, done.failed
    assert done.outputs["apply"]["applied"] == "reviewed"
    assert live_status(demo, "ENG-006") == ["INACTIVATED"]


def test_a_merge_with_a_stale_but_equal_plan_applies_the_new_one(
    demo: SandboxServer, github: FakeGitHub, tmp_path: Path
) -> None:
    reviewed = pull_request_job(tmp_path, demo, github)
    plan = reviewed.artifacts[ARTIFACT] / "plan.json"
    document = json.loads(plan.read_text())
    document["created_at"] = "2020-01-01T00:00:00Z"  # older than any expiry
    # As if time had passed: signed again with the plan key (here the token), since any
    # edit of a saved plan is refused.
    document["mac"] = sign(document, PlanKey(demo.token.encode(), "the token"))
    plan.write_text(json.dumps(document))

    done = merge_job(tmp_path, demo, github, reviewed)

    assert done.failed is None, done.failed
    assert done.outputs["apply"]["applied"] == "replanned"
    assert live_status(demo, "ENG-006") == ["INACTIVATED"]


def test_a_push_without_a_reviewed_plan_applies_nothing(
    demo: SandboxServer, github: FakeGitHub, tmp_path: Path
) -> None:
    history = History(tmp_path / "history")
    pushed = history.commit({QUICKSTART.name: QUICKSTART.read_text()}, "pushed to main")
    github.state.remote = history.remote
    checkout = history.checkout(pushed, tmp_path / "checkout")
    push = job(tmp_path, "merge", "apply", checkout / QUICKSTART.name, demo, github)
    push.env["GITHUB_SHA"] = pushed

    done = run_action(push)

    assert done.failed is not None and done.failed.name.startswith("Apply the reviewed plan")
    assert "no plan reviewed on a pull request for" in done.failed.stdout
    assert "nothing was applied" in done.failed.stdout
    assert live_status(demo, "ENG-006") == ["ACTIVE"]


def test_the_drift_job_opens_then_closes_one_issue(
    sandbox: SandboxServer, github: FakeGitHub, tmp_path: Path
) -> None:
    desired = tmp_path / "workforce.yaml"
    desired.write_text(
        "version: 1\nworkers:\n  - {externalId: ENG-001, typeOfWorker: Worker, workerName: Ada,"
        " workerSurname: Lovelace, workerEmail: ada@example.com, countryIso: GB}\n"
    )
    drifted = run_action(job(tmp_path, "drift1", "drift", desired, sandbox, github))
    assert drifted.failed is None, drifted.failed
    assert drifted.outputs["drift"]["action"] == "open"
    (issue,) = github.state.issues
    assert issue["body"].startswith("<!-- reconciler:drift -->\n### reconciler drift report")

    broken = job(tmp_path, "drift2", "drift", desired, sandbox, github)
    broken.inputs["service-token"] = "not-the-token"
    failed = run_action(broken)
    assert (
        failed.failed is not None and "the drift issue was left as it was" in failed.failed.stdout
    )
    assert issue["state"] == "open"

    desired.write_text("version: 1\nworkers: []\n")
    in_sync = run_action(job(tmp_path, "drift3", "drift", desired, sandbox, github))
    assert in_sync.failed is None, in_sync.failed
    assert in_sync.outputs["drift"]["action"] == "close"
    assert [i["state"] for i in github.state.issues] == ["closed"]


def test_ignored_unmanaged_workers_leave_the_drift_issue_closed_and_strict_is_an_input(
    demo: SandboxServer, github: FakeGitHub, tmp_path: Path
) -> None:
    """The demo account's unmanaged workers (OPS-001, and Freelance Fred with no externalId)
    keep `drift --strict` at exit 2 and open the issue; ignore rules naming them leave it
    closed, and so does the drift mode's `strict: false` without them."""
    from tests.adopt.test_ignore_rules import rules
    from tests.plan.test_plan_cli import IN_SYNC_BUT_DRIFTED

    desired = tmp_path / "workforce.yaml"
    desired.write_text(IN_SYNC_BUT_DRIFTED + rules('worker["ENG-002"].jobTitle'))
    drifted = run_action(job(tmp_path, "drift1", "drift", desired, demo, github))
    assert drifted.failed is None, drifted.failed
    assert drifted.outputs["drift"]["action"] == "open"
    github.state.issues.clear()

    relaxed = job(tmp_path, "drift2", "drift", desired, demo, github)
    relaxed.inputs["strict"] = "false"
    assert run_action(relaxed).outputs["drift"]["action"] == "nothing"

    desired.write_text(
        IN_SYNC_BUT_DRIFTED
        + rules('worker["ENG-002"].jobTitle', 'worker["OPS-*"]', 'worker[email="freelance@*"]')
    )
    ignored = run_action(job(tmp_path, "drift3", "drift", desired, demo, github))
    assert ignored.failed is None, ignored.failed
    assert ignored.outputs["drift"]["action"] == "nothing"
    assert github.state.issues == []


def test_a_key_gives_an_account_its_own_comment_and_artifact(
    demo: SandboxServer, github: FakeGitHub, tmp_path: Path
) -> None:
    keyed = job(tmp_path, "pr", "pull-request", QUICKSTART, demo, github)
    keyed.inputs["key"] = "eu"

    done = run_action(keyed)

    assert done.failed is None, done.failed
    assert list(done.artifacts) == [f"reconciler-plan-eu-{HEAD_SHA}"]
    assert [r.method for r in comment_writes(github)] == ["POST"]  # no comment of this key yet
    assert {s["context"] for s in github.state.statuses[HEAD_SHA]} == {
        "reconciler/plan/eu", "reconciler/approvals/eu"}  # fmt: skip
    created = github.state.comments[PR][-1]
    assert created["body"].startswith('<!-- reconciler:plan key="eu" -->\n### reconciler plan\n')


NEWER_HEAD = "1f2e3d4c5b6a79881726354453627180a9b8c7d6"


def test_a_plan_request_for_a_commit_not_the_pull_requests_head_plans_nothing(
    demo: SandboxServer, github: FakeGitHub, tmp_path: Path
) -> None:
    # `gh workflow run reconciler-plan.yml -f pull-request=42 -f head-sha=<another commit>`,
    # or a request overtaken by a newer push: pull request 42's head is now another commit.
    github.state.pulls[PR] = pull_request(PR, NEWER_HEAD)

    done = pull_request_job(tmp_path, demo, github)

    assert done.failed is not None
    assert done.failed.name == "Check that the commit is the pull request's head"
    assert f"{HEAD_SHA} is not the head of pull request #{PR}" in done.failed.stderr
    assert NEWER_HEAD in done.failed.stderr
    assert github.writes() == [] and done.artifacts == {}
    github.state.pulls[PR] = pull_request(PR, HEAD_SHA, state="closed")
    closed = pull_request_job(tmp_path / "closed", demo, github)
    assert closed.failed is not None and "is closed, not open" in closed.failed.stderr


ATTACKER_PR = 43
ATTACKER_HEAD = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
MALLORY = """\
  - externalId: ENG-666
    typeOfWorker: Worker
    workerName: Mallory
    workerSurname: Example
    workerEmail: mallory@example.com
    countryIso: GB
"""


def test_a_merge_never_applies_another_pull_requests_plan(
    demo: SandboxServer, github: FakeGitHub, tmp_path: Path
) -> None:
    # Pull request 43, never approved, invites mallory; its plan is validly signed.
    unapproved = tmp_path / "attacker.yaml"
    unapproved.write_text(QUICKSTART.read_text().replace("webhook:\n", MALLORY + "webhook:\n", 1))
    github.state.pulls[ATTACKER_PR] = pull_request(ATTACKER_PR, ATTACKER_HEAD)
    planned = job(tmp_path, "attacker", "pull-request", unapproved, demo, github)
    planned.inputs |= {"pull-request": str(ATTACKER_PR), "head-sha": ATTACKER_HEAD}
    attacker = run_action(planned)
    assert attacker.failed is None, attacker.failed
    # It reaches the merge of pull request 42 under 42's artifact name (as if every check
    # of the artifact's run had been passed): the plan itself says whose it is.
    done = merge_job(tmp_path, demo, github, attacker, artifact=f"reconciler-plan-{ATTACKER_HEAD}")

    assert done.failed is not None and done.failed.name.startswith("Apply the reviewed plan")
    assert "was not reviewed for this merge (pull request and head commit and desired-state" in (
        done.failed.stderr
    )
    assert "differs from the reviewed plan: nothing was applied" in done.failed.stdout
    assert refusal(github).startswith("<!-- reconciler:apply -->\n:no_entry: **Not applied")
    assert live_status(demo, "ENG-666") == []  # mallory was never invited
    assert live_status(demo, "ENG-006") == ["ACTIVE"]


def test_a_merge_whose_files_differ_from_the_reviewed_ones_replans(
    demo: SandboxServer, github: FakeGitHub, tmp_path: Path
) -> None:
    # Reviewed at the head of 42; at merge the files differ (here only by a comment, as when
    # another pull request was merged first): the new plan is applied only as it is equal.
    reviewed = pull_request_job(tmp_path, demo, github)
    merged = tmp_path / "merged" / "quickstart.yaml"
    merged.parent.mkdir()
    merged.write_text(QUICKSTART.read_text() + "# merged after another pull request\n")

    done = merge_job(tmp_path, demo, github, reviewed, path=merged)

    assert done.failed is None, done.failed
    assert (
        "desired-state files differ"
        in done.step("Apply the reviewed plan, or a new plan only if it is the same").stderr
    )
    assert done.outputs["apply"]["applied"] == "replanned"
    assert live_status(demo, "ENG-006") == ["INACTIVATED"]
