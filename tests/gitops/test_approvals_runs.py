"""Money under dual control, through the composite action's runs as they are (issue 46): pull
requests planned by its pull-request mode, merges applied by its apply mode, against the
sandbox and the fake GitHub answering `pulls/{n}`, `pulls/{n}/reviews` and `pulls/{n}/commits`.

The account's policy asks one approval of alice, bob or dave for a payrun total over 0.00, and
two over 150.00. It comes in force with the first merge (none in force before: it needs no
approval), which hires W-1; W-1 then accepts and the wallet is topped up, so a payrun can pay.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reconciler.sandbox import SandboxServer
from tests.gitops import test_action_apply_order as apply_order
from tests.gitops.action_runner import Job, run_action
from tests.gitops.fake_github import FakeGitHub
from tests.gitops.github_people import pull_commit, review, user
from tests.gitops.test_action_apply_order import (
    TOKEN,
    Repository,
    activate,
    last_state,
    logs,
    outcome,
    paylists,
    state,
)
from tests.gitops.workflow_runner import Runner
from tests.sandbox.support import Controls

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "github"
github = apply_order.github  # the fake GitHub, as the action's apply-order runs have it

ALICE, BOB, DAVE = user("alice", 11), user("bob", 12), user("dave", 14)
CAROL, ERIN = user("carol", 13), user("erin", 15)  # the author, and someone who pushed
POLICY = (
    "policy:\n  approvals:\n"
    '    - {over: "0.00", count: 1, from: [alice, bob, dave]}\n'
    '    - {over: "150.00", count: 2, from: [alice, bob, dave]}\n'
)
LOOSER = 'policy:\n  approvals:\n    - {over: "0.00", count: 1, from: [alice, bob, dave]}\n'


def payrun(amount: str, description: str = "November retainer") -> str:
    return (
        "payruns:\n  - id: 2026-11-retainer\n    description: November retainer\n"
        "    payments:\n"
        f'      - {{email: w-1@example.com, amount: "{amount}", description: {description}}}\n'
    )


class Dual(Repository):
    """The repository, with who wrote, pushed and reviewed each pull request on GitHub."""

    def __init__(self, tmp_path: Path, sandbox: SandboxServer, github: FakeGitHub) -> None:
        super().__init__(tmp_path, sandbox, github)
        for one in (ALICE, BOB, CAROL, DAVE, ERIN):
            github.state.users[one["login"]] = one
        self.at = 0

    def open(self, branch: str, text: str, pr: int, *, by: dict[str, Any] = CAROL) -> str:
        """Pull request `pr` by `by` (its only commit theirs), planned; its head."""
        head = self.propose(branch, text, pr)
        self.github.state.pulls[pr]["user"] = by
        self.github.state.pull_commits[pr] = [pull_commit(head, by, by)]
        return head

    def push(self, branch: str, text: str, pr: int, *, by: dict[str, Any] = CAROL) -> str:
        """Another commit on the pull request, by `by`, planned again; the new head."""
        head = self.history.commit({"workforce/workforce.yaml": text}, f"#{pr} again", branch)
        pull = self.github.state.pulls[pr]
        pull["head"]["sha"] = head
        pull["commits"] = pull.get("commits", 1) + 1
        self.github.state.pull_commits[pr].append(pull_commit(head, by, by))
        self.plan(pr, head)
        return head

    def plan(self, pr: int, head: str) -> Job:
        """The plan workflow's run for `pr` at `head` (run 6000 + N, a new artifact)."""
        run_id = 6000 + pr * 10 + len(self.github.state.pull_commits.get(pr, []))
        planned = run_action(self.job("pull-request", head, str(run_id),
                                      **{"pull-request": str(pr), "head-sha": head}))  # fmt: skip
        assert planned.failed is None, logs(planned)
        main, name = self.main(), f"reconciler-plan-{head}"
        self.artifacts[f"{run_id}/{name}"] = planned.artifacts[name]
        self.github.state.runs[run_id] = {**self.github.state.runs[5000 + pr], "id": run_id}
        self.github.state.artifacts.append({
            "id": run_id, "name": name, "expired": False, "created_at": "2026-11-26T09:30:00Z",
            "workflow_run": {"id": run_id, "head_branch": "main", "head_sha": main},
        })  # fmt: skip
        return planned

    def approve(self, pr: int, who: dict[str, Any], commit: str, state: str = "APPROVED") -> None:
        self.at += 1
        at = f"2026-11-26T09:{self.at:02d}:00Z"
        self.github.state.reviews.setdefault(pr, []).append(review(who, state, commit, at))

    def in_force(self) -> str:
        """The policy comes in force with PR 30, which hires W-1; W-1 is then ACTIVE."""
        head = self.open("hire", state(["W-1"], POLICY), 30)
        merged = self.merge("hire", head, 30)
        applied = self.apply(merged, "7030")
        assert applied.failed is None, logs(applied)
        return merged


@pytest.fixture
def dual(tmp_path: Path, sandbox: SandboxServer, controls: Controls, github: FakeGitHub) -> Dual:
    repository = Dual(tmp_path, sandbox, github)
    repository.in_force()
    activate(sandbox, controls)
    return repository


def status(github: FakeGitHub, sha: str, context: str = "reconciler/approvals") -> dict[str, Any]:
    """The newest commit status `context` on `sha`."""
    found = [s for s in github.state.statuses.get(sha, []) if s["context"] == context]
    assert found, f"no {context} status on {sha[:12]}"
    return found[-1]


def description(github: FakeGitHub, sha: str) -> str:
    (record, *_) = [d for d in reversed(github.state.deployments) if d["sha"] == sha]
    return str(github.state.deployment_statuses[record["id"]][-1]["description"])


def records(github: FakeGitHub) -> dict[str, Any]:
    """The records kept on the branch reconciler/records, by path."""
    if "reconciler/records" not in github.state.refs:
        return {}
    return {
        path: json.loads(text) for path, text in github.branch_files("reconciler/records").items()
    }


def test_the_author_s_and_a_pusher_s_approvals_do_not_count(
    dual: Dual, sandbox: SandboxServer, github: FakeGitHub
) -> None:
    """Carol opens the payrun, Erin pushes a commit to it (no money changed); both approve:
    neither counts, nothing is paid, the merge counts as applied and says what is missing.
    Today's main pays it (it reads no review)."""
    head = dual.open("pay", state(["W-1"], POLICY + payrun("100.00")), 31)
    head = dual.push("pay", state(["W-1"], POLICY + payrun("100.00")) + "# checked\n", 31, by=ERIN)
    dual.approve(31, CAROL, head)
    dual.approve(31, ERIN, head)
    merged = dual.merge("pay", head, 31)

    done = dual.apply(merged, "7031")

    assert done.failed is None, logs(done)
    assert paylists(sandbox) == []
    said = outcome(github, 31)
    assert (
        "waiting for approvals" in said and 'paylist["2026-11-retainer"] needs 1 of alice' in said
    )
    assert "waiting for approvals" in description(github, merged)
    assert last_state(github, merged) == "success"  # the merge counts as applied


def test_an_approval_lapses_when_the_money_changes_and_survives_a_commit_that_changes_none(
    dual: Dual, sandbox: SandboxServer, github: FakeGitHub
) -> None:
    """Alice approves the payrun of 100.00; a push makes it 120.00: her approval is of other
    money, nothing is paid. On PR 32 she approves, then a push changes no money (a comment):
    her approval still counts, and the payrun is paid. Today's main pays the first."""
    first = dual.open("pay", state(["W-1"], POLICY + payrun("100.00")), 31)
    dual.approve(31, ALICE, first)
    changed = dual.push("pay", state(["W-1"], POLICY + payrun("120.00")), 31)
    done = dual.apply(dual.merge("pay", changed, 31), "7031")
    assert done.failed is None, logs(done)
    assert paylists(sandbox) == []
    assert "the money of this payrun changed since" in logs(done)

    again = dual.open("again", state(["W-1"], POLICY + payrun("120.00")), 32)
    dual.approve(32, ALICE, again)
    same = dual.push("again", state(["W-1"], POLICY + payrun("120.00")) + "# same\n", 32)
    paid = dual.apply(dual.merge("again", same, 32), "7032")
    assert paid.failed is None, logs(paid)
    assert len(paylists(sandbox)) == 1
    assert "approved" in outcome(github, 32) and "alice" in outcome(github, 32)


def test_over_the_threshold_one_approval_is_not_enough_and_two_are(
    dual: Dual, sandbox: SandboxServer, github: FakeGitHub
) -> None:
    """200.00 is over 150.00: alice alone leaves it waiting (the outcome says 1 of 2); with
    bob's approval too, a later pull request that only says so pays it, and names both."""
    head = dual.open("pay", state(["W-1"], POLICY + payrun("200.00")), 31)
    dual.approve(31, ALICE, head)
    first = dual.apply(dual.merge("pay", head, 31), "7031")
    assert first.failed is None, logs(first)
    assert paylists(sandbox) == []
    assert "needs 2 of alice, bob, dave: 1 (alice at" in outcome(github, 31)

    nudge = dual.open("nudge", state(["W-1"], POLICY + payrun("200.00")) + "# approved\n", 32)
    dual.approve(32, ALICE, nudge)
    dual.approve(32, BOB, nudge)
    merged = dual.merge("nudge", nudge, 32)
    paid = dual.apply(merged, "7032")
    assert paid.failed is None, logs(paid)
    assert len(paylists(sandbox)) == 1
    said = outcome(github, 32)
    assert "alice" in said and "bob" in said

    kept = records(github)
    (record,) = [value for path, value in kept.items() if path.startswith("records/")]
    assert sorted(a["login"] for a in record["approvals"]) == ["alice", "bob"]
    assert record["pull_request"] == 32 and record["merge_commit"] == merged


def test_the_head_s_status_says_what_is_missing_and_a_review_sets_it_again(
    dual: Dual, github: FakeGitHub, tmp_path: Path
) -> None:
    """The plan sets `reconciler/approvals` on the head: pending, saying what the payrun
    needs and has; alice approves, and examples/github/reconciler-approvals.yml, run on the
    review with no secret, sets it to success from the head's reviewed plan. Today's main sets
    no such status."""
    head = dual.open("pay", state(["W-1"], POLICY + payrun("100.00")), 31)
    pending = status(github, head)
    assert pending["state"] == "pending"
    assert pending["description"] == 'paylist["2026-11-retainer"] needs 1 of alice, bob, dave: 0'

    dual.approve(31, ALICE, head)
    runner = Runner(tmp_path / "review", dual.history.remote, {}, TOKEN, github.api_url)
    name = f"reconciler-plan-{head}"
    runner.artifacts[name] = runner.uploaded[("5031", name)] = dual.artifacts[f"5031/{name}"]
    event = {"pull_request": {"number": 31, "head": {"sha": head}}, "review": {"state": "approved"}}
    (job,) = runner.run(EXAMPLES / "reconciler-approvals.yml", sha=head, event=event,
                        inputs={})["approvals"]  # fmt: skip
    assert job.returncode == 0, "\n".join(job.logs)
    approved = status(github, head)
    assert (approved["state"], approved["description"]) == ("success", "approved by alice")


def test_an_unapproved_loosening_of_the_policy_pays_nothing_on_the_loosened_rule(
    dual: Dual, sandbox: SandboxServer, controls: Controls, github: FakeGitHub
) -> None:
    """PR 31 drops the two-approvals rule and adds a payrun of 200.00, approved by alice
    alone: the change of the policy needs the strictest rule in force (2), so nothing at all
    is applied, the merge stays pending and says so. Today's main pays it."""
    head = dual.open("loosen", state(["W-1"], LOOSER + payrun("200.00")), 31)
    dual.approve(31, ALICE, head)
    merged = dual.merge("loosen", head, 31)
    since = controls.last_seq()

    done = dual.apply(merged, "7031")

    assert done.failed is not None
    assert paylists(sandbox) == []
    assert not [e for e in controls.requests(since) if e["method"] != "GET"]
    assert "the change of its approvals policy waits" in outcome(github, 31)
    assert last_state(github, merged) == "failure"  # pending: the next run tries it again


@pytest.mark.parametrize("refused", [403, 404, 502])
def test_github_refusing_the_reviews_refuses_the_payrun_with_the_reason(
    dual: Dual, sandbox: SandboxServer, github: FakeGitHub, refused: int
) -> None:
    """The reviews cannot be read (403, 404, or 5xx after the retries): the payrun is not
    paid, and the outcome says why. Today's main pays it."""
    head = dual.open("pay", state(["W-1"], POLICY + payrun("100.00")), 31)
    dual.approve(31, ALICE, head)
    merged = dual.merge("pay", head, 31)
    github.faults["/repos/octo-org/workforce/pulls/31/reviews"] = refused

    done = dual.apply(merged, "7031")

    assert paylists(sandbox) == []
    said = logs(done)
    assert "the reviews could not be read" in said and f"pulls/31/reviews: {refused}" in said
    assert "waiting for approvals" in outcome(github, 31)
