"""Money under dual control through GitLab's pipeline (issue 46), as far as its API shows
approvals: the jobs of examples/gitlab/accounts.gitlab-ci.yml run as written against the sandbox
and the fake GitLab (tests/gitops/gitlab_runner.py).

eu's entry in reconciler.yaml asks one approval of alice for any payrun; it is in force from
the start (the account's last successful apply is at the commit that wrote it). GitLab does not
say which commit an approval was given to, nor name a commit's account: an approval counts only
in a project whose settings reset approvals on a push and refuse the author's and committers'.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reconciler.sandbox import SandboxServer
from tests.gitops.fake_gitlab import FakeGitLab
from tests.gitops.gitlab_runner import GitLabRunner
from tests.gitops.test_accounts_apply_order import activate, paylists
from tests.gitops.test_accounts_workflow_runs import CLIENT_IDS, commit, git, state
from tests.gitops.test_gitlab_accounts_runs import (
    _branch,
    clients,
    gitlab,
    merge,
    merge_request_pipeline,
    push_pipeline,
    repo,
    runner,
)
from tests.sandbox.support import ClientAccess, Controls

__all__ = ["clients", "gitlab", "repo", "runner"]  # the fixtures, as the GitLab runs have them

CAROL, ALICE = {"id": 31, "username": "carol"}, {"id": 32, "username": "alice"}
PAYRUN = (
    "payruns:\n  - id: 2026-11-retainer\n    description: November retainer\n    payments:\n"
    '      - {email: w-1@example.com, amount: "100.00", description: November retainer}\n'
)


def with_policy(base_url: str) -> str:
    """reconciler.yaml, eu's entry with its approvals policy."""
    return (
        f"version: 1\naccounts:\n"
        f"  - name: eu\n    path: accounts/eu\n    baseUrl: {base_url}\n"
        f"    tokenEnv: RECONCILER_TOKEN_EU\n    clientId: {CLIENT_IDS['eu']}\n"
        "    policy:\n      approvals:\n"
        '        - {over: "0.00", count: 1, from: [alice]}\n'
        f"  - name: us\n    path: accounts/us\n    baseUrl: {base_url}\n"
        f"    tokenEnv: RECONCILER_TOKEN_US\n    clientId: {CLIENT_IDS['us']}\n"
    )


def review(gitlab: FakeGitLab, iid: int, *approvers: dict[str, Any]) -> None:
    """Merge request `iid` by carol, approved by `approvers` (GitLab's `approved_by`)."""
    gitlab.state.merge_requests[iid].update(author=CAROL, source_branch=f"b{iid}")
    gitlab.state.approvals[iid] = [{"user": user} for user in approvers]


def note(gitlab: FakeGitLab, iid: int) -> str:
    (found,) = [n["body"] for n in gitlab.state.notes[iid] if "reconciler:outcome" in n["body"]]
    return str(found)


def test_an_approval_counts_only_under_the_settings_that_bind_it_to_the_head(
    runner: GitLabRunner,
    repo: Path,
    sandbox: SandboxServer,
    controls: Controls,
    clients: dict[str, ClientAccess],
    gitlab: FakeGitLab,
) -> None:
    """!31 hires W-1; !32 pays it, approved by alice, in a project that keeps approvals after a
    push: nothing is paid, the outcome note says which setting; with the settings on, !33 (it
    only says so) approved by alice pays it, and its record, naming alice, is kept on the
    branch reconciler/records. Today's main pays !32 (it reads no approval)."""
    gitlab.state.users = [ALICE, CAROL]
    policy = commit(repo, {"reconciler.yaml": with_policy(sandbox.base_url)}, "eu's policy")
    for name in ("eu", "us"):
        gitlab.deploy(f"production-{name}", policy, "https://gitlab.example.com/-/jobs/2",
                      "success")  # fmt: skip
    hire = _branch(repo, "hire", {"accounts/eu/workforce.yaml": state(["W-1"])})
    merge_request_pipeline(runner, gitlab, hire, 31)
    review(gitlab, 31)
    applies, _ = push_pipeline(runner, gitlab, merge(runner, gitlab, repo, "hire", 31))
    assert applies["eu"].returncode == 0, applies["eu"].log
    activate(sandbox, controls, clients["eu"])

    gitlab.state.approval_settings["reset_approvals_on_push"] = False
    pay = _branch(repo, "pay", {"accounts/eu/workforce.yaml": state(["W-1"]) + PAYRUN})
    merge_request_pipeline(runner, gitlab, pay, 32)
    review(gitlab, 32, ALICE)
    applies, _ = push_pipeline(runner, gitlab, merge(runner, gitlab, repo, "pay", 32))
    assert applies["eu"].returncode == 0, applies["eu"].log
    assert paylists(sandbox, clients["eu"]) == []
    said = note(gitlab, 32)
    assert 'waiting for approvals: paylist["2026-11-retainer"] needs 1 of alice: 0' in said
    assert 'turn on "Reset approvals on push"' in said

    gitlab.state.approval_settings["reset_approvals_on_push"] = True
    nudge = _branch(repo, "nudge", {"accounts/eu/workforce.yaml": state(["W-1"]) + PAYRUN
                                    + "# approved\n"})  # fmt: skip
    merge_request_pipeline(runner, gitlab, nudge, 33)
    review(gitlab, 33, ALICE)
    merged = merge(runner, gitlab, repo, "nudge", 33)
    applies, _ = push_pipeline(runner, gitlab, merged)
    assert applies["eu"].returncode == 0, applies["eu"].log
    assert len(paylists(sandbox, clients["eu"])) == 1
    assert "alice" in note(gitlab, 33)
    (record,) = [
        json.loads(text)
        for path, text in gitlab.state.branches["reconciler/records"][1].items()
        if path.startswith("records/eu/")
    ]
    assert [a["login"] for a in record["approvals"]] == ["alice"]
    assert record["merge_commit"] == merged and git(repo, "rev-parse", "main") == merged
