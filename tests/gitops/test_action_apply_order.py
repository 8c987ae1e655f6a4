"""The single-account action's merges land in order, none is lost, and each pull request sees
its outcome: the composite action's apply mode run as it is, several merges one after the
other of a repository's git history, against the sandbox and the fake GitHub.

The last successful apply is a deployment in the apply job's environment (`production`): a run
applies from there to the commit it runs at, not from the push's `before`; a run (a re-run, a
late approval, a run queued out of order) whose commit's files are not the default branch's
head's is superseded and applies nothing. Each run keeps one outcome comment per pull request.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.sandbox import SandboxServer
from tests.gitops.action_runner import History, Job, git, run_action
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub, pull_request, workflow_run
from tests.sandbox.support import Controls, service_client

TOKEN = "ghs_" + secrets.token_urlsafe(27)
PAYRUN = (
    "payruns:\n  - id: 2026-11-retainer\n    description: November retainer\n    payments:\n"
    '      - {email: w-1@example.com, amount: "100.00", description: November retainer}\n'
)
OUTCOME = '<!-- reconciler:outcome key="default" -->'


def state(workers: list[str], extra: str = "") -> str:
    body = "".join(
        f"  - externalId: {external_id}\n    typeOfWorker: Worker\n    workerName: Ada\n"
        f"    workerSurname: Lovelace\n    workerEmail: {external_id.lower()}@example.com\n"
        "    countryIso: GB\n"
        for external_id in workers
    )
    listed = body or "  []\n"
    return f'version: 1\nscope:\n  externalIdPrefix: "W-"\nworkers:\n{listed}{extra}'


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(TOKEN) as fake:
        yield fake


class Repository:
    """One repository with the example workflows: its pull requests are planned by the
    action's pull-request mode (run 5000 + N), its merges applied by its apply mode."""

    def __init__(self, tmp_path: Path, sandbox: SandboxServer, github: FakeGitHub) -> None:
        self.tmp_path, self.sandbox, self.github = tmp_path, sandbox, github
        self.history = History(tmp_path / "history")
        self.history.commit({"workforce/workforce.yaml": state([])}, "start")
        github.state.remote = self.history.remote
        self.artifacts: dict[str, Path] = {}
        self.jobs = 0

    def job(self, mode: str, sha: str, run_id: str, **inputs: str) -> Job:
        self.jobs += 1
        folder = self.tmp_path / f"checkout-{self.jobs}"
        checkout = self.history.checkout(sha, folder, pushed=mode != "pull-request")
        return Job(
            inputs={"mode": mode, "path": str(checkout / "workforce"),
                    "base-url": self.sandbox.base_url, "service-token": self.sandbox.token,
                    "github-token": TOKEN, "client-id": str(self.sandbox.client_id), **inputs},
            workdir=self.tmp_path / f"job-{self.jobs}",
            env={"GITHUB_REPOSITORY": OWNER_REPO, "GITHUB_API_URL": self.github.api_url,
                 "GITHUB_SHA": sha, "GITHUB_RUN_ID": run_id},
        )  # fmt: skip

    def propose(self, branch: str, text: str, pr: int) -> str:
        """Pull request `pr` from main with the desired state `text`, planned; its head."""
        main = self.main()
        head = self.history.commit({"workforce/workforce.yaml": text}, f"#{pr}", branch)
        self.github.state.pulls[pr] = pull_request(pr, head)
        planned = run_action(self.job("pull-request", head, str(5000 + pr),
                                      **{"pull-request": str(pr), "head-sha": head}))  # fmt: skip
        assert planned.failed is None, planned.failed
        name = f"reconciler-plan-{head}"
        self.artifacts[f"{5000 + pr}/{name}"] = planned.artifacts[name]
        self.github.state.runs[5000 + pr] = workflow_run(5000 + pr, main)
        self.github.state.default_branch_commits.add(main)
        self.github.state.artifacts.append({
            "id": pr, "name": name, "expired": False, "created_at": "2026-11-26T09:00:00Z",
            "workflow_run": {"id": 5000 + pr, "head_branch": "main", "head_sha": main},
        })  # fmt: skip
        return head

    def main(self) -> str:
        return git(self.history.work, "rev-parse", "main")

    def merge(self, branch: str, head: str, pr: int, squashed: str | None = None) -> str:
        """Merge pull request `pr` (squashed: as one commit of `squashed` on main)."""
        if squashed is None:
            merged = self.history.merge(branch, pr)
        else:
            merged = self.history.commit({"workforce/workforce.yaml": squashed}, f"#{pr}")
        self.github.state.commit_pulls[merged] = [
            {"number": pr, "merged_at": "2026-11-26T10:00:00Z", "merge_commit_sha": merged,
             "head": {"sha": head}}
        ]  # fmt: skip
        self.github.state.default_branch_commits.add(merged)
        return merged

    def apply(self, sha: str, run_id: str, **inputs: str) -> Job:
        """The apply mode's run for the push of `sha` (again: a re-run, or a late approval)."""
        applying = self.job("apply", sha, run_id, **inputs)
        applying.artifacts.update(self.artifacts)
        return run_action(applying)


@pytest.fixture
def repository(tmp_path: Path, sandbox: SandboxServer, github: FakeGitHub) -> Repository:
    return Repository(tmp_path, sandbox, github)


def logs(job: Job) -> str:
    return "\n".join(step.stdout + step.stderr for step in job.steps)


def outcome(github: FakeGitHub, pr: int) -> str:
    (comment,) = [c for c in github.state.comments.get(pr, []) if c["body"].startswith(OUTCOME)]
    return str(comment["body"])


def live(sandbox: SandboxServer) -> list[str]:
    with service_client(sandbox.base_url, sandbox.token) as api:
        answer = api.get("/contract/workers/list")
    answer.raise_for_status()
    return sorted(w["externalId"] for w in answer.json()["content"] if w.get("externalId"))


def paylists(sandbox: SandboxServer) -> list[Any]:
    with service_client(sandbox.base_url, sandbox.token) as api:
        answer = api.get("/payment-agent/paylists")
    answer.raise_for_status()
    return list(answer.json()["content"])


def activate(sandbox: SandboxServer, controls: Controls) -> None:
    """W-1 accepted: its agreement ACTIVE, and the wallet holds 500.00 to pay it."""
    with service_client(sandbox.base_url, sandbox.token) as api:
        (worker,) = [w for w in api.get("/contract/workers/list").json()["content"]
                     if w.get("externalId") == "W-1"]  # fmt: skip
    controls.move_agreement(worker["agreementId"], "ACTIVE")
    topped = controls.http.post(f"/_sandbox/clients/{sandbox.client_id}/top-up",
                                json={"amount": "500.00"})  # fmt: skip
    assert topped.is_success, topped.text


def last_state(github: FakeGitHub, sha: str) -> str:
    (record, *_) = [d for d in reversed(github.state.deployments) if d["sha"] == sha]
    assert (record["environment"], record["task"]) == ("production", "deploy:reconciler")
    return str(github.state.deployment_statuses[record["id"]][-1]["state"])


def test_a_re_run_of_an_older_merge_s_apply_pays_nothing_a_later_merge_removed(
    repository: Repository, sandbox: SandboxServer, controls: Controls, github: FakeGitHub
) -> None:
    """Issue 37's first problem, for the single account: PR 31 adds a payrun of 100.00 to
    W-1, merged as B; B's apply fails before sending anything (the token is missing). PR 32
    removes the payrun, merged as C and applied. Re-running B's apply: superseded by C,
    nothing paid, and pull request 31's outcome comment says so."""
    hired = repository.propose("hire", state(["W-1"]), 30)
    merged_a = repository.merge("hire", hired, 30)
    first = repository.apply(merged_a, "7030")
    assert first.failed is None, logs(first)
    assert first.outputs["apply"]["applied"] == "reviewed"
    assert last_state(github, merged_a) == "success"
    (record,) = [d for d in github.state.deployments if d["sha"] == merged_a]
    assert record["payload"]["pull_request"] == 30
    assert record["payload"]["plan_digest"].startswith("hmac-sha256:")
    (said,) = github.state.deployment_statuses[record["id"]][-1:]
    assert said["description"].startswith("applied: the reviewed plan was applied: 1 to invite")
    assert said["log_url"] == "https://github.com/octo-org/workforce/actions/runs/7030"
    activate(sandbox, controls)

    head_b = repository.propose("pay", state(["W-1"], PAYRUN), 31)
    merged_b = repository.merge("pay", head_b, 31)
    failed = repository.apply(merged_b, "7031", **{"service-token": ""})
    assert failed.failed is not None, logs(failed)
    assert paylists(sandbox) == []
    assert "| `default` | :x: failed" in outcome(github, 31)

    head_c = repository.propose("unpay", state(["W-1"]), 32)
    merged_c = repository.merge("unpay", head_c, 32)
    applied = repository.apply(merged_c, "7032")
    assert applied.failed is None, logs(applied)
    assert paylists(sandbox) == []

    since = controls.last_seq()
    rerun = repository.apply(merged_b, "7031")

    said = logs(rerun)
    assert rerun.failed is None, said
    assert f"default: superseded by {merged_c[:12]} (#32)" in said
    assert paylists(sandbox) == []
    assert not [e for e in controls.requests(since) if e["method"] != "GET"]
    assert "| `default` | :fast_forward: superseded by" in outcome(github, 31)
    assert last_state(github, merged_b) == "inactive"
    assert last_state(github, merged_c) == "success"


def test_three_quick_merges_with_the_middle_apply_cancelled_are_all_applied_in_order(
    repository: Repository, sandbox: SandboxServer, github: FakeGitHub
) -> None:
    """PR 31 hires W-1 (applied); PR 32 adds W-2 and its run is cancelled before it applies
    (GitHub cancels the older pending run); PR 33 adds W-3. PR 33's run applies from the last
    apply: W-2 and W-3; pull requests 32 and 33 each get the outcome; the drift check before
    it says the account is pending since PR 31's merge, #32; a run again has nothing to do."""
    one = repository.propose("one", state(["W-1"]), 31)
    merged_1 = repository.merge("one", one, 31)
    assert repository.apply(merged_1, "7031").failed is None
    two = repository.propose("two", state(["W-1", "W-2"]), 32)
    merged_2 = repository.merge("two", two, 32)  # its apply was cancelled: it never ran

    drift = run_action(repository.job("drift", merged_2, "7100"))
    reported = drift.step("Say whether the default branch's head is applied").stdout
    assert f"default: not applied at {merged_2[:12]}: pending since {merged_1[:12]}, #32" in (
        reported
    )

    three = repository.propose("three", state(["W-1", "W-2", "W-3"]), 33)
    merged_3 = repository.merge("three", three, 33)
    done = repository.apply(merged_3, "7033")

    assert done.failed is None, logs(done)
    assert live(sandbox) == ["W-1", "W-2", "W-3"]
    for pr in (32, 33):
        assert "| `default` | :white_check_mark: applied: the reviewed plan was applied: 2 to " \
            "invite" in outcome(github, pr)  # fmt: skip
    assert "1 to invite" in outcome(github, 31)  # PR 31's own run, untouched since
    assert last_state(github, merged_3) == "success"

    again = repository.apply(merged_3, "7034")
    assert again.failed is None, logs(again)
    assert f"default: nothing to do: applied at {merged_3[:12]}" in logs(again)
    synced = run_action(repository.job("drift", merged_3, "7101"))
    assert (
        f"default: applied at {merged_3[:12]}"
        in synced.step("Say whether the default branch's head is applied").stdout
    )


def test_a_merge_not_covered_by_a_reviewed_plan_fails_naming_the_pull_requests_pending(
    repository: Repository, sandbox: SandboxServer, github: FakeGitHub
) -> None:
    """PR 32 adds W-2, its apply never runs; PR 33, opened before 32 was merged, adds W-3:
    its reviewed plan does not have W-2, so the run of its merge applies nothing and says
    which pull requests are pending; the next run that a reviewed plan covers applies both."""
    base = repository.propose("one", state(["W-1"]), 31)
    assert repository.apply(repository.merge("one", base, 31), "7031").failed is None
    merged_1 = repository.main()
    three = repository.propose("three", state(["W-1", "W-3"]), 33)
    two = repository.propose("two", state(["W-1", "W-2"]), 32)
    repository.merge("two", two, 32)  # its apply never ran
    merged_3 = repository.merge("three", three, 33, squashed=state(["W-1", "W-2", "W-3"]))

    done = repository.apply(merged_3, "7033")

    assert done.failed is not None
    assert f"pending since {merged_1[:12]}, #32, #33" in logs(done)
    assert live(sandbox) == ["W-1"]
    assert ":no_entry: refused: the plan at merge differs" in outcome(github, 33)
    assert last_state(github, merged_3) == "failure"


def test_a_run_queued_out_of_order_applies_no_older_state(
    repository: Repository, sandbox: SandboxServer, controls: Controls, github: FakeGitHub
) -> None:
    """PR 31 hires W-1 (merged as B), PR 32 from B adds W-2 (merged as C); C's run starts
    first and applies both; B's run, queued behind it (or approved late), then starts: it is
    superseded by C, changes nothing in the account (B's files would leave W-2 out) and passes."""
    one = repository.propose("one", state(["W-1"]), 31)
    merged_b = repository.merge("one", one, 31)
    two = repository.propose("two", state(["W-1", "W-2"]), 32)
    merged_c = repository.merge("two", two, 32)
    first = repository.apply(merged_c, "7032")
    assert first.failed is None, logs(first)
    assert live(sandbox) == ["W-1", "W-2"]

    since = controls.last_seq()
    late = repository.apply(merged_b, "7031")

    assert late.failed is None, logs(late)
    assert f"default: superseded by {merged_c[:12]} (#32)" in logs(late)
    assert not [e for e in controls.requests(since) if e["method"] != "GET"]
    assert live(sandbox) == ["W-1", "W-2"]
    assert "applied: the reviewed plan was applied: 2 to invite" in outcome(github, 32)
    assert last_state(github, merged_b) == "inactive"


def test_a_merge_pushed_after_the_run_checked_out_supersedes_it(
    repository: Repository, sandbox: SandboxServer, controls: Controls, github: FakeGitHub
) -> None:
    """PR 31 hires W-1 (merged as B); B's run checks out B, then waits (an approval, a slow
    queue) while PR 32 adds W-2 and is merged as C. GitHub says main is at C, which B's
    checkout does not hold: B's run is superseded and sends nothing; C's run applies both."""
    one = repository.propose("one", state(["W-1"]), 31)
    merged_b = repository.merge("one", one, 31)
    waiting = repository.job("apply", merged_b, "7031")  # checked out now
    waiting.artifacts.update(repository.artifacts)
    two = repository.propose("two", state(["W-1", "W-2"]), 32)
    merged_c = repository.merge("two", two, 32)

    since = controls.last_seq()
    late = run_action(waiting)

    assert late.failed is None, logs(late)
    assert (
        f"default: superseded by {merged_c[:12]}, the default branch's head, which this run's "
        "checkout does not hold"
    ) in logs(late)
    assert not [e for e in controls.requests(since) if e["method"] != "GET"]
    assert live(sandbox) == []
    assert last_state(github, merged_b) == "inactive"
    assert repository.apply(merged_c, "7032").failed is None
    assert live(sandbox) == ["W-1", "W-2"]
