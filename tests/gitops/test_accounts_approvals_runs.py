"""Money under dual control through the accounts workflows (examples/github/accounts/), run as
they are against the sandbox and the fake GitHub (issue 46): eu's entry in reconciler.yaml asks
one approval of alice or bob for any payrun, in force since the commit that wrote it (eu's last
successful apply); us has no policy. The fixtures are tests/gitops/test_accounts_workflow_runs.py's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reconciler.sandbox import SandboxServer
from tests.gitops import test_accounts_workflow_runs as runs_module
from tests.gitops.fake_github import FakeGitHub
from tests.gitops.github_people import pull_commit, review, user
from tests.gitops.test_accounts_apply_order import (
    activate,
    apply_run,
    logs,
    merge,
    outcome,
    paylists,
    propose,
)
from tests.gitops.test_accounts_workflow_runs import FOLDER, accounts_file, applied, commit, state
from tests.gitops.workflow_runner import Runner
from tests.sandbox.support import ClientAccess, Controls

github = runs_module.github
clients = runs_module.clients
repo = runs_module.repo
runner = runs_module.runner

ALICE, BOB, CAROL = user("alice", 11), user("bob", 12), user("carol", 13)
PAYRUN = (
    "payruns:\n  - id: 2026-11-retainer\n    description: November retainer\n    payments:\n"
    '      - {email: w-1@example.com, amount: "100.00", description: November retainer}\n'
)
EU = "accounts/eu/workforce.yaml"


def with_policy(base_url: str) -> str:
    """reconciler.yaml with eu's approvals policy in its entry."""
    text = accounts_file(base_url, base_url)
    eu_end = text.index("  - name: us")
    policy = (
        '    policy:\n      approvals:\n        - {over: "0.00", count: 1, from: [alice, bob]}\n'
    )
    return text[:eu_end] + policy + text[eu_end:]


def status(github: FakeGitHub, sha: str) -> dict[str, Any]:
    found = [
        s for s in github.state.statuses.get(sha, []) if s["context"] == "reconciler/approvals"
    ]
    assert found, f"no reconciler/approvals status on {sha[:12]}"
    return found[-1]


def test_an_account_s_payrun_is_paid_with_its_approvals_named_and_its_status_follows_reviews(
    runner: Runner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    github: FakeGitHub,
) -> None:
    """PR 31 pays W-1 in eu. Planned: `reconciler/approvals` is pending and names eu's payrun
    and what it needs. Carol, its author, approves, and so does alice: the review workflow,
    with no secret, sets the status to success (alice alone counts). Merged: the payrun is paid,
    the outcome comment names alice, and the record on reconciler/records names her approval,
    the pull request and the merge. Today's main has no such status and pays with none."""
    for one in (ALICE, BOB, CAROL):
        github.state.users[one["login"]] = one
    policy = commit(repo, {"reconciler.yaml": with_policy(sandbox.base_url)}, "eu's policy")
    applied(github, policy, "eu", "us")
    hired = propose(github, runner, repo, "hire", {EU: state(["W-1"])}, 30)
    hire = apply_run(runner, *merge(github, repo, "hire", hired, 30), "7030")
    assert all(job.returncode == 0 for job in hire["apply"]), logs(hire["apply"])
    activate(sandbox, controls, clients["eu"])

    head = propose(github, runner, repo, "pay", {EU: state(["W-1"]) + PAYRUN}, 31)
    pending = status(github, head)
    assert pending["state"] == "pending"
    assert pending["description"] == 'eu: paylist["2026-11-retainer"] needs 1 of alice, bob: 0'

    github.state.pulls[31]["user"] = CAROL
    github.state.pull_commits[31] = [pull_commit(head, CAROL, CAROL)]
    github.state.reviews[31] = [
        review(CAROL, "APPROVED", head, "2026-11-26T09:10:00Z"),
        review(ALICE, "APPROVED", head, "2026-11-26T09:20:00Z"),
    ]
    event = {"pull_request": {"number": 31, "head": {"sha": head}}}
    reviewed = runner.run(FOLDER / "reconciler-accounts-approvals.yml", sha=head, event=event,
                          inputs={}, run_id="6031")["approvals"]  # fmt: skip
    assert [job.returncode for job in reviewed] == [0], logs(reviewed)
    approved = status(github, head)
    assert (approved["state"], approved["description"]) == ("success", "approved by alice")

    before, merged = merge(github, repo, "pay", head, 31)
    paid = apply_run(runner, before, merged, "7031")
    assert all(job.returncode == 0 for job in paid["apply"]), logs(paid["apply"])
    assert len(paylists(sandbox, clients["eu"])) == 1
    said = outcome(github, 31)
    assert "alice" in said and "carol" not in said
    (record,) = [
        json.loads(text)
        for path, text in github.branch_files("reconciler/records").items()
        if path.startswith("records/eu/")
    ]
    assert [a["login"] for a in record["approvals"]] == ["alice"]
    assert (record["pull_request"], record["merge_commit"]) == (31, merged)
