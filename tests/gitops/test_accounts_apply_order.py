"""Merges land in order and none is lost: the accounts apply workflow run as it is, several
merges one after the other, against the sandbox and the fake GitHub.

Each account's last successful apply is its deployment in `production-<name>`: a run applies
each account from there to the commit it runs at, not from the push's `before`; a run (a
re-run, a late approval) whose commit's files for an account are not the default branch's
head's is superseded and applies nothing. The fixtures (two accounts, eu and us, applied at
main's first commit) are those of tests/gitops/test_accounts_workflow_runs.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reconciler.sandbox import SandboxServer
from tests.gitops import test_accounts_workflow_runs as runs_module
from tests.gitops.fake_github import FakeGitHub, workflow_run
from tests.gitops.test_accounts_workflow_runs import (
    FOLDER,
    PLAN_WORKFLOW,
    applied,
    git,
    live,
    plan_pull_request,
    set_variables,
    state,
    variables_in,
)
from tests.gitops.workflow_runner import JobRun, Runner
from tests.sandbox.support import ClientAccess, Controls, service_client

github = runs_module.github
clients = runs_module.clients
repo = runs_module.repo
runner = runs_module.runner

APPLY = FOLDER / "reconciler-accounts-apply.yml"
PAYRUN = (
    "payruns:\n  - id: 2026-11-retainer\n    description: November retainer\n    payments:\n"
    '      - {email: w-1@example.com, amount: "100.00", description: November retainer}\n'
)


def propose(
    github: FakeGitHub, runner: Runner, repo: Path, branch: str, files: dict[str, str], pr: int
) -> str:
    """Open pull request `pr` from main with `files` and plan it (run 5000 + pr); its head."""
    main = git(repo, "rev-parse", "main")
    head, runs = plan_pull_request(
        github, runner, repo, branch, files, pr=pr, run_id=str(5000 + pr)
    )
    assert all(run.returncode == 0 for jobs in runs.values() for run in jobs), runs
    github.state.runs[5000 + pr] = workflow_run(5000 + pr, main, path=PLAN_WORKFLOW)
    github.state.default_branch_commits.add(main)
    github.state.artifacts.append({
        "id": pr, "name": f"reconciler-plans-{head}", "expired": False,
        "created_at": "2026-11-26T09:00:00Z",
        "workflow_run": {"id": 5000 + pr, "head_branch": "main", "head_sha": main},
    })  # fmt: skip
    return head


def merge(github: FakeGitHub, repo: Path, branch: str, head: str, pr: int) -> tuple[str, str]:
    """Merge pull request `pr` into main; (the commit before, the merge commit)."""
    before = git(repo, "rev-parse", "main")
    git(repo, "merge", "--quiet", "--no-ff", branch, "-m", f"Merge pull request #{pr}")
    merged = git(repo, "rev-parse", "main")
    github.state.commit_pulls[merged] = [
        {"number": pr, "merged_at": "2026-11-26T10:00:00Z", "merge_commit_sha": merged,
         "head": {"sha": head}}
    ]  # fmt: skip
    github.state.default_branch_commits |= {before, merged}
    return before, merged


def apply_run(
    runner: Runner,
    before: str,
    merged: str,
    run_id: str,
    rerun_failed: dict[str, list[JobRun]] | None = None,
) -> dict[str, list[JobRun]]:
    """The apply workflow's run for the push of `merged` (or a re-run of its failed jobs)."""
    event = {"before": before, "repository": {"default_branch": "main"}}
    return runner.run(
        APPLY, sha=merged, event=event, inputs={}, run_id=run_id, rerun_failed=rerun_failed
    )


def logs(jobs: list[JobRun]) -> str:
    return "\n".join(log for job in jobs for log in job.logs)


def paylists(sandbox: SandboxServer, client: ClientAccess) -> list[Any]:
    with service_client(sandbox.base_url, client.token) as api:
        answer = api.get("/payment-agent/paylists")
    answer.raise_for_status()
    return list(answer.json()["content"])


def activate(sandbox: SandboxServer, controls: Controls, client: ClientAccess) -> None:
    """The worker accepted: its agreement ACTIVE, and the wallet holds 500.00 to pay it."""
    with service_client(sandbox.base_url, client.token) as api:
        (worker,) = api.get("/contract/workers/list").json()["content"]
    controls.move_agreement(worker["agreementId"], "ACTIVE")
    topped = controls.http.post(f"/_sandbox/clients/{client.client_id}/top-up",
                                json={"amount": "500.00"})  # fmt: skip
    assert topped.is_success, topped.text


def outcome(github: FakeGitHub, pr: int) -> str:
    (comment,) = [
        c for c in github.state.comments.get(pr, [])
        if c["body"].startswith('<!-- reconciler:outcome key="accounts" -->')
    ]  # fmt: skip
    return str(comment["body"])


def test_a_re_run_of_an_older_merge_s_apply_pays_nothing_a_later_merge_removed(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    """Problem 1: PR 31 adds a payrun of 100.00 to W-1, merged as B; B's apply fails before
    sending anything (eu's secret is missing). PR 32 removes the payrun, merged as C and
    applied. "Re-run failed jobs" on B's run: superseded by C, nothing paid."""
    eu = clients["eu"]
    hired = propose(
        github, runner, repo, "hire", {"accounts/eu/workforce.yaml": state(["W-1"])}, 30
    )
    assert (
        apply_run(runner, *merge(github, repo, "hire", hired, 30), "7030")["apply"][0].returncode
        == 0
    )
    activate(sandbox, controls, eu)

    pay = {"accounts/eu/workforce.yaml": state(["W-1"]) + PAYRUN}
    head_b = propose(github, runner, repo, "pay", pay, 31)
    assert "2026-11-retainer" in github.state.comments[31][0]["body"]
    before_b, merged_b = merge(github, repo, "pay", head_b, 31)
    token = variables_in(runner, "production-eu")
    set_variables(runner, "production-eu", {})
    failed = apply_run(runner, before_b, merged_b, "7031")
    assert [job.returncode for job in failed["apply"]] == [1], logs(failed["apply"])
    assert paylists(sandbox, eu) == []
    assert "`eu` | :x: failed" in outcome(github, 31)

    git(repo, "checkout", "--quiet", "main")
    unpay = {"accounts/eu/workforce.yaml": state(["W-1"])}
    head_c = propose(github, runner, repo, "unpay", unpay, 32)
    set_variables(runner, "production-eu", token)
    applied = apply_run(runner, *merge(github, repo, "unpay", head_c, 32), "7032")
    # eu's files are those of its last apply: nothing pending (today: applied, no changes)
    assert all(job.returncode == 0 for job in applied["apply"]), logs(applied["apply"])
    assert paylists(sandbox, eu) == []

    since = controls.last_seq()
    rerun = apply_run(runner, before_b, merged_b, "7031", rerun_failed=failed)

    said = logs(rerun["apply"])
    assert [job.returncode for job in rerun["apply"]] == [0], said
    merged_c = git(repo, "rev-parse", "main")
    assert f"eu: superseded by {merged_c[:12]} (#32)" in said
    assert paylists(sandbox, eu) == []
    assert not [e for e in controls.requests(since) if e["method"] != "GET"]
    assert "`eu` | :fast_forward: superseded by" in outcome(github, 31)  # the same comment
    (record, *_) = [d for d in reversed(github.state.deployments) if d["sha"] == merged_b]
    assert github.state.deployment_statuses[record["id"]][-1]["state"] == "inactive"


def test_three_quick_merges_with_the_middle_apply_cancelled_are_all_applied_in_order(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    """Problem 2: PR 31 hires W-1 in eu (applied); PR 32 adds W-2 to eu, and its run is
    cancelled before it applies (GitHub cancels the older pending run); PR 33 changes us only.
    PR 33's run applies eu from its last apply (W-2) and us (W-3); each pull request's outcome
    comment says so."""
    first = propose(github, runner, repo, "one", {"accounts/eu/workforce.yaml": state(["W-1"])}, 31)
    _, merged_1 = merge(github, repo, "one", first, 31)
    assert apply_run(runner, "0" * 40, merged_1, "7031")["apply"][0].returncode == 0
    second = propose(github, runner, repo, "two", {"accounts/eu/workforce.yaml":
                                                    state(["W-1", "W-2"])}, 32)  # fmt: skip
    merge(github, repo, "two", second, 32)  # its run was cancelled: never ran

    third = propose(
        github, runner, repo, "three", {"accounts/us/workforce.yaml": state(["W-3"])}, 33
    )
    before_3, merged_3 = merge(github, repo, "three", third, 33)
    runs = apply_run(runner, before_3, merged_3, "7033")

    by_account = {job.matrix["account"]: job for job in runs["apply"]}
    assert sorted(by_account) == ["eu", "us"], runs["accounts"][0].logs
    assert all(job.returncode == 0 for job in by_account.values()), logs(runs["apply"])
    assert by_account["eu"].matrix["pull-request"] == "32"
    assert live(sandbox, clients["eu"]) == ["W-1", "W-2"] and live(sandbox, clients["us"]) == [
        "W-3"
    ]
    assert "eu" in outcome(
        github, 32
    ) and "applied: the reviewed plan was applied: 1 to invite" in (outcome(github, 32))
    assert "`us`" in outcome(github, 33) and "`eu`" not in outcome(github, 33)

    again = apply_run(runner, merged_3, merged_3, "7034")  # nothing pending any more
    assert again["apply"] == [] and again["accounts"][0].outputs["names"] == ""


def test_the_drift_check_reports_an_account_whose_head_is_not_applied(
    runner: Runner, repo: Path, github: FakeGitHub
) -> None:
    """PR 31's merge is applied; PR 32's apply never ran: the drift check says eu is pending
    since PR 31's merge, #32, and us is not named."""
    first = propose(github, runner, repo, "one", {"accounts/eu/workforce.yaml": state(["W-1"])}, 31)
    _, merged_1 = merge(github, repo, "one", first, 31)
    assert apply_run(runner, "0" * 40, merged_1, "7031")["apply"][0].returncode == 0
    second = propose(github, runner, repo, "two", {"accounts/eu/workforce.yaml":
                                                    state(["W-1", "W-2"])}, 32)  # fmt: skip
    merge(github, repo, "two", second, 32)  # its run was cancelled: never ran
    main = git(repo, "rev-parse", "main")

    drift = runner.run(FOLDER / "reconciler-accounts-drift.yml", sha=main, event={}, inputs={},
                       run_id="7100")  # fmt: skip

    said = logs(drift["accounts"])
    assert f"eu: not applied at {main[:12]}: pending since {merged_1[:12]}, #32" in said
    assert "us:" not in said and "1 of 2 accounts not applied" in said


def test_the_plan_s_status_on_the_pull_request_s_head(
    runner: Runner, repo: Path, github: FakeGitHub
) -> None:
    """`reconciler/plan` on the head: pending while planning, then success with each
    account's counts; an account whose plan failed (us's secret missing) makes it a failure."""
    hire = {"accounts/eu/workforce.yaml": state(["W-1"]), "accounts/us/workforce.yaml": state([])}
    head = propose(github, runner, repo, "hire", hire, 31)

    def plan_statuses(sha: str) -> list[dict[str, Any]]:
        return [s for s in github.state.statuses[sha] if s["context"] == "reconciler/plan"]

    pending, done = plan_statuses(head)
    assert (pending["state"], pending["context"]) == ("pending", "reconciler/plan")
    assert (done["state"], done["context"]) == ("success", "reconciler/plan")
    assert done["description"] == "eu: 1 to invite"
    assert done["target_url"] == "https://github.com/octo-org/workforce/actions/runs/5031"

    set_variables(runner, "reconciler-us", {})
    git(repo, "checkout", "--quiet", "main")
    both = {"accounts/eu/workforce.yaml": state(["W-1"]), "accounts/us/workforce.yaml":
            state(["W-2"])}  # fmt: skip
    head, planned = plan_pull_request(github, runner, repo, "both", both, pr=32, run_id="5032")

    assert [job.returncode for job in planned["plan"]] == [0, 1]
    _, failed = plan_statuses(head)
    assert failed["state"] == "failure"
    assert failed["description"] == "not planned: us; eu: 1 to invite"
    (comment,) = github.state.comments[32]
    assert comment["body"].startswith('<!-- reconciler:plan key="accounts" -->\nPlanned at commit')
    assert ":x: **Not planned:** us: see [the run](" in comment["body"]


def test_a_run_queued_out_of_order_applies_no_older_state(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    """PR 31 hires W-1 (merged as B), PR 32 from B adds W-2 (merged as C); C's run starts
    first and applies both; B's run, queued behind it, then starts: eu is superseded by C, no
    request changes the account (B's files would leave W-2 out), and the job passes."""
    one = propose(github, runner, repo, "one", {"accounts/eu/workforce.yaml": state(["W-1"])}, 31)
    before_b, merged_b = merge(github, repo, "one", one, 31)
    two = propose(github, runner, repo, "two", {"accounts/eu/workforce.yaml":
                                                 state(["W-1", "W-2"])}, 32)  # fmt: skip
    before_c, merged_c = merge(github, repo, "two", two, 32)
    first = apply_run(runner, before_c, merged_c, "7032")
    assert [job.returncode for job in first["apply"]] == [0], logs(first["apply"])
    assert live(sandbox, clients["eu"]) == ["W-1", "W-2"]

    since = controls.last_seq()
    late = apply_run(runner, before_b, merged_b, "7031")

    said = logs(late["apply"])
    assert [job.returncode for job in late["apply"]] == [0], said
    assert f"eu: superseded by {merged_c[:12]} (#32)" in said
    assert not [e for e in controls.requests(since) if e["method"] != "GET"]
    assert live(sandbox, clients["eu"]) == ["W-1", "W-2"]
    # C's run applied both merges: each pull request says so; B's late run changes neither.
    for pr in (31, 32):
        assert "`eu` | :white_check_mark: applied: the reviewed plan was applied: 2 to invite" in (
            outcome(github, pr)
        )
    (record, *_) = [d for d in reversed(github.state.deployments) if d["sha"] == merged_b]
    assert github.state.deployment_statuses[record["id"]][-1]["state"] == "inactive"


def test_an_account_whose_record_cannot_be_read_fails_alone(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    """eu's last successful apply is at a commit main no longer holds (main was rewritten): what
    was applied there is unknown. PR 31 changes both accounts: us is applied, eu's job fails
    saying why and applies nothing, and the pending job and the drift check go on (before, one
    such record failed the pending job, so no account was applied)."""
    gone = "e" * 40
    applied(github, gone, "eu")
    files = {"accounts/eu/workforce.yaml": state(["W-1"]), "accounts/us/workforce.yaml":
             state(["W-2"])}  # fmt: skip
    head = propose(github, runner, repo, "both", files, 31)
    before, merged = merge(github, repo, "both", head, 31)

    runs = apply_run(runner, before, merged, "7031")

    assert [job.returncode for job in runs["accounts"]] == [0], logs(runs["accounts"])
    by_account = {job.matrix["account"]: job for job in runs["apply"]}
    assert (by_account["eu"].returncode, by_account["us"].returncode) == (1, 0), logs(runs["apply"])
    said = logs([by_account["eu"]])
    assert f"is at {gone[:12]}, which this checkout does not hold" in said, said
    assert "where it stands is unknown" in said and "Traceback" not in said
    assert live(sandbox, clients["eu"]) == [] and live(sandbox, clients["us"]) == ["W-2"]
    comment = outcome(github, 31)
    assert "`eu` | :x: failed: where it stands is unknown" in comment, comment
    assert "`us` | :white_check_mark: applied" in comment, comment

    drift = runner.run(FOLDER / "reconciler-accounts-drift.yml", sha=merged, event={}, inputs={},
                       run_id="7100")  # fmt: skip
    reported = logs(drift["accounts"])
    assert f"::error::eu: not applied at {merged[:12]}: where it stands is unknown" in reported
    assert "us:" not in reported and "1 of 2 accounts not applied" in reported
