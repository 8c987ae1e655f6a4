"""The approvals gate of `apply` (issue 46), through the command line against the demo sandbox
and the fake GitHub, over real HTTP, in a git repository whose commits are the approved ones.

A payrun its approvals do not cover waits (nothing of it sent, the other changes go, exit 0);
the author's and a pusher's approvals do not count; an approval lapses when the money changes
after it and survives a commit that changes none; over a threshold one approval is not enough
and two are; with no forge, or reviews GitHub refuses, nothing is paid; `--force` changes
nothing; a policy changed without the approvals of the policy in force applies nothing (4).
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.apply.support import NOVEMBER, QUICKSTART
from tests.cli import reconciler
from tests.gitops.action_runner import git
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub, pull_request
from tests.gitops.github_people import pull_commit, review, user

TOKEN = "ghs_" + secrets.token_urlsafe(27)
ALICE, BOB, DAVE, CAROL = user("alice", 11), user("bob", 12), user("dave", 14), user("carol", 13)
ONE_OF = '    - {over: "0.00", count: 1, from: [alice, bob, dave]}\n'
TWO_OVER_1000 = '    - {over: "1000.00", count: 2, from: [alice, bob, dave]}\n'


def state(rules: str = ONE_OF, payruns: str = NOVEMBER, title: str = "Engineer") -> str:
    """The quickstart's files with an approvals policy and the November payrun."""
    text = QUICKSTART.read_text().replace("jobTitle: Engineer\n", f"jobTitle: {title}\n", 1)
    if rules:
        text = text.replace("  prune: all\n", "  prune: all\n  approvals:\n" + rules, 1)
    return text + payruns


def commit(repo: Path, text: str, message: str = "change") -> str:
    (repo / "workforce.yaml").write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    git(folder, "init", "--quiet", "-b", "main")
    return folder


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(TOKEN) as fake:
        for one in (ALICE, BOB, DAVE, CAROL):
            fake.state.users[one["login"]] = one
        yield fake


def pull(github: FakeGitHub, number: int, head: str, *reviews: dict[str, Any], **kw: Any) -> None:
    """Pull request `number` by carol, its one commit `head` carol's, with `reviews`."""
    github.state.pulls[number] = pull_request(number, head, author=kw.get("author", CAROL))
    github.state.pull_commits[number] = kw.get("commits", [pull_commit(head, CAROL, CAROL)])
    github.state.reviews[number] = list(reviews)


def run(
    repo: Path, demo: SandboxServer, github: FakeGitHub | None, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """`reconciler ARGS` in `repo` against the sandbox, in a job of the fake GitHub's
    repository (none: outside CI)."""
    if github is not None:
        env |= {"GITHUB_REPOSITORY": OWNER_REPO, "GITHUB_TOKEN": TOKEN}
        env |= {"GITHUB_API_URL": github.api_url}
    return reconciler(*args, server=demo, cwd=repo, **env)


def apply(
    repo: Path, demo: SandboxServer, github: FakeGitHub | None, *args: str
) -> subprocess.CompletedProcess[str]:
    """`apply workforce.yaml --auto-approve --format json ARGS`."""
    command = ("apply", "workforce.yaml", "--auto-approve", "--format", "json", *args)
    return run(repo, demo, github, *command)


def plan(
    repo: Path, demo: SandboxServer, github: FakeGitHub | None, *args: str
) -> subprocess.CompletedProcess[str]:
    return run(repo, demo, github, "plan", "workforce.yaml", *args)


def paylists(server: SandboxServer) -> list[dict[str, Any]]:
    headers = {"Authorization": f"Bearer {server.token}"}
    listed = httpx.get(f"{server.base_url}/payment-agent/paylists", headers=headers).json()
    return list(listed["content"])


def pay_rows(result: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    ledger = json.loads(result.stdout)
    return [row for row in ledger["changes"] if row["action"] == "pay"]


def test_no_forge_pays_nothing_and_the_rest_goes_even_with_force(
    demo: SandboxServer, repo: Path
) -> None:
    commit(repo, state())
    for number, args in enumerate(((), ("--force",))):
        result = apply(repo, demo, None, "--approvals-from", "7", *args)
        assert result.returncode == 0, result.stdout + result.stderr
        if number == 0:  # the other changes go: ENG-004 is invited
            rows = json.loads(result.stdout)["changes"]
            assert {"address": 'worker["ENG-004"]', "outcome": "applied"}.items() <= rows[0].items()
        (row,) = pay_rows(result)
        assert row["outcome"] == "waiting"
        assert row["detail"] == (
            "waiting for approvals: needs 1 of alice, bob, dave: 0 (no forge to read reviews "
            "from: holding the service token and the plan key is not an approval "
            "(policy.approvals of workforce.yaml))"
        )
        assert paylists(demo) == []
    text = apply(repo, demo, None).stderr
    assert 'paylist["2026-11-contractors"] is waiting for approvals, nothing is paid' in text


def test_without_a_policy_nothing_changes(demo: SandboxServer, repo: Path) -> None:
    commit(repo, state(rules=""))
    result = apply(repo, demo, None)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [row["outcome"] for row in pay_rows(result)] == ["applied", "applied"]


def test_the_author_and_a_pusher_do_not_count_an_approver_does(
    demo: SandboxServer, repo: Path, github: FakeGitHub
) -> None:
    head = commit(repo, state())
    pushed = [pull_commit(head, CAROL, DAVE)]  # dave committed (pushed) the head
    pull(
        github,
        7,
        head,
        review(CAROL, "APPROVED", head, "2026-11-20T10:00:00Z"),
        review(DAVE, "APPROVED", head, "2026-11-20T11:00:00Z"),
        commits=pushed,
    )
    waiting = apply(repo, demo, github, "--approvals-from", "7")
    assert waiting.returncode == 0, waiting.stdout + waiting.stderr
    (row,) = pay_rows(waiting)
    assert row["outcome"] == "waiting"
    assert row["detail"] == (
        "waiting for approvals: needs 1 of alice, bob, dave: 0; carol (#7): the author's "
        f"approval never counts; dave (#7): authored or committed commit {head[:7]} of the "
        "request"
    )
    assert paylists(demo) == []
    text = apply(repo, demo, github, "--approvals-from", "7").stderr
    assert "dave (#7): authored or committed commit" in text
    assert "carol (#7): the author's approval never counts" in text

    github.state.reviews[7].append(review(BOB, "APPROVED", head, "2026-11-20T12:00:00Z"))
    paid = apply(repo, demo, github, "--approvals-from", "7")
    assert paid.returncode == 0, paid.stdout + paid.stderr
    assert [row["outcome"] for row in pay_rows(paid)] == ["applied", "applied"]
    assert len(paylists(demo)) == 1


def test_an_approval_lapses_when_the_money_changes_and_survives_a_commit_that_changes_none(
    demo: SandboxServer, repo: Path, github: FakeGitHub
) -> None:
    approved = commit(repo, state(payruns=NOVEMBER.replace('"1500.00"', '"1400.00"')))
    head = commit(repo, state())  # the money changed after bob's approval
    commits = [pull_commit(approved, CAROL, CAROL), pull_commit(head, CAROL, CAROL)]
    pull(
        github, 7, head, review(BOB, "APPROVED", approved, "2026-11-20T10:00:00Z"), commits=commits
    )
    lapsed = apply(repo, demo, github, "--approvals-from", "7")
    assert lapsed.returncode == 0, lapsed.stdout + lapsed.stderr
    assert [row["outcome"] for row in pay_rows(lapsed)] == ["waiting"]
    assert (
        "the money of this payrun changed since"
        in apply(repo, demo, github, "--approvals-from", "7").stderr
    )

    renamed = commit(repo, state(title="Principal Engineer"))  # no money changes
    commits.append(pull_commit(renamed, CAROL, CAROL))
    pull(github, 7, renamed, review(BOB, "APPROVED", head, "2026-11-20T11:00:00Z"), commits=commits)
    kept = apply(repo, demo, github, "--approvals-from", "7")
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert [row["outcome"] for row in pay_rows(kept)] == ["applied", "applied"]


def test_over_a_threshold_one_approval_is_not_enough_and_two_are(
    demo: SandboxServer, repo: Path, github: FakeGitHub
) -> None:
    head = commit(repo, state(rules=ONE_OF + TWO_OVER_1000))  # 1,750.00 is over 1,000.00
    pull(github, 7, head, review(BOB, "APPROVED", head, "2026-11-20T10:00:00Z"))
    pull(github, 8, head, review(BOB, "APPROVED", head, "2026-11-20T10:00:00Z"))
    one = apply(repo, demo, github, "--approvals-from", "7,8")  # bob twice is one approver
    (row,) = pay_rows(one)
    assert row["detail"] == (
        f"waiting for approvals: needs 2 of alice, bob, dave: 1 (bob at {head[:7]})"
    )
    github.state.reviews[8].append(review(ALICE, "APPROVED", head, "2026-11-20T11:00:00Z"))
    two = apply(repo, demo, github, "--approvals-from", "7,8")
    assert [row["outcome"] for row in pay_rows(two)] == ["applied", "applied"]


@pytest.mark.parametrize("status", [403, 404, 502])
def test_reviews_github_refuses_pay_nothing(
    demo: SandboxServer, repo: Path, github: FakeGitHub, status: int
) -> None:
    head = commit(repo, state())
    pull(github, 7, head, review(BOB, "APPROVED", head, "2026-11-20T10:00:00Z"))
    github.faults[f"/repos/{OWNER_REPO}/pulls/7/reviews"] = status
    result = apply(repo, demo, github, "--approvals-from", "7")
    assert result.returncode == 0, result.stdout + result.stderr
    (row,) = pay_rows(result)
    assert row["outcome"] == "waiting"
    assert "refused: the reviews could not be read (" in row["detail"]
    assert paylists(demo) == []


def test_a_loosened_policy_without_the_approvals_in_force_applies_nothing(
    demo: SandboxServer, repo: Path, github: FakeGitHub
) -> None:
    strict = commit(repo, state(rules=TWO_OVER_1000.replace("1000.00", "0.00"), payruns=""))
    head = commit(repo, state())  # to one approval, and a payrun
    pull(github, 9, head, review(BOB, "APPROVED", head, "2026-11-20T10:00:00Z"))
    held = ("--approvals-from", "9", "--policy-at", strict, "--force", "--records-out", "out")
    result = apply(repo, demo, github, *held)
    assert result.returncode == 4, result.stdout + result.stderr
    (verdict,) = json.loads((repo / "out" / "approvals.json").read_text())["verdicts"]
    assert (verdict["payrun"], verdict["account"]) == ("policy.approvals", "default")
    assert verdict["needs_has"] == f"needs 2 of alice, bob, dave: 1 (bob at {head[:7]})"
    assert (
        "policy.approvals of workforce.yaml changed since the last apply "
        f"({strict[:12]}), and the change needs the approvals of the policy in force: needs 2 "
        f"of alice, bob, dave: it has needs 2 of alice, bob, dave: 1 (bob at {head[:7]}), so "
        "nothing was applied"
    ) in result.stderr
    assert paylists(demo) == []

    github.state.reviews[9].append(review(DAVE, "APPROVED", head, "2026-11-20T11:00:00Z"))
    approved = apply(repo, demo, github, "--approvals-from", "9", "--policy-at", strict)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    assert [row["outcome"] for row in pay_rows(approved)] == ["applied", "applied"]


def test_the_first_policy_needs_no_approval_and_an_unknown_record_refuses(
    demo: SandboxServer, repo: Path, github: FakeGitHub
) -> None:
    head = commit(repo, state())
    pull(github, 7, head, review(BOB, "APPROVED", head, "2026-11-20T10:00:00Z"))
    unknown = apply(repo, demo, github, "--approvals-from", "7", "--policy-at", "0" * 40)
    assert unknown.returncode == 0, unknown.stdout + unknown.stderr
    (row,) = pay_rows(unknown)
    assert row["outcome"] == "waiting"
    assert "the policy in force is unknown (the last apply's commit 000000000000:" in row["detail"]
    first = apply(repo, demo, github, "--approvals-from", "7", "--policy-at", "none")
    assert [row["outcome"] for row in pay_rows(first)] == ["applied", "applied"]


def test_the_plan_and_the_comment_say_what_each_payrun_needs_and_has(
    demo: SandboxServer, repo: Path, github: FakeGitHub
) -> None:
    head = commit(repo, state(rules=ONE_OF + TWO_OVER_1000))
    pull(github, 7, head, review(BOB, "APPROVED", head, "2026-11-20T10:00:00Z"))
    needs = f'paylist["2026-11-contractors"]: needs 2 of alice, bob, dave: 1 (bob at {head[:7]})'
    text = plan(repo, demo, github, "--approvals-from", "7")
    assert text.returncode == 0, text.stderr
    assert f"Approvals:\n  ! {needs}\n" in text.stdout
    document = json.loads(
        plan(repo, demo, github, "--approvals-from", "7", "--format", "json").stdout
    )
    (verdict,) = document["approvals"]["verdicts"]
    assert verdict["approvals"][0] | {"submitted_at": ""} == {
        "login": "bob", "id": 12, "commit": head, "submitted_at": "", "request": 7,
    }  # fmt: skip
    assert verdict["missing"] == "needs 2 of alice, bob, dave: has 1, 1 more approval needed"
    markdown = plan(repo, demo, github, "--approvals-from", "7", "--format", "markdown").stdout
    assert markdown.index("<summary>Approvals (1)</summary>") < markdown.index("Inactivations")
    assert f"!   {needs}" in markdown
    later = plan(repo, demo, github).stdout  # no pull request read: said at the merge
    assert (
        'paylist["2026-11-contractors"]: needs 2 of alice, bob, dave: checked at the merge' in later
    )
    comment = run(repo, demo, github, "comment", "workforce.yaml", "--approvals-from", "7")
    assert comment.returncode == 0, comment.stderr
    assert f"!   {needs}" in comment.stdout
    commit(repo, state(rules=""))
    unguarded = plan(repo, demo, None, "--format", "markdown").stdout
    assert "!   no approvals policy: any merge pays" in unguarded


def test_a_reviewed_saved_plan_is_judged_again_at_the_merge(
    demo: SandboxServer, repo: Path, github: FakeGitHub
) -> None:
    head = commit(repo, state(rules=ONE_OF + TWO_OVER_1000))
    pull(github, 7, head, review(BOB, "APPROVED", head, "2026-11-20T10:00:00Z"))
    review_of = ("--pull-request", "7", "--head-sha", head)
    made = plan(repo, demo, github, "--out", "plan.json", "--approvals-from", "7", *review_of)
    assert made.returncode == 0, made.stderr
    saved = json.loads((repo / "plan.json").read_text())
    (money,) = saved["approvals"]["money_at"].values()  # the money at bob's commit, kept
    assert list(saved["approvals"]["money_at"]) == [head]
    assert money["2026-11-contractors"].startswith("sha256:")
    assert saved["approvals"]["verdicts"][0]["needs_has"].endswith(f"1 (bob at {head[:7]})")
    expect = ("--expect-files", "workforce.yaml", "--expect-pull-request", "7",
              "--expect-head-sha", head)  # fmt: skip
    merge = ("plan.json", "--format", "json", "--approvals-from", "7", *expect)
    waiting = run(repo, demo, github, "apply", *merge)
    assert waiting.returncode == 0, waiting.stdout + waiting.stderr
    assert [row["outcome"] for row in pay_rows(waiting)] == ["waiting"]
    assert paylists(demo) == []

    github.state.reviews[7].append(review(DAVE, "APPROVED", head, "2026-11-20T11:00:00Z"))
    made = plan(repo, demo, github, "--out", "plan.json", "--approvals-from", "7", *review_of)
    assert made.returncode == 0, made.stderr
    paid = run(repo, demo, github, "apply", *merge)
    assert paid.returncode == 0, paid.stdout + paid.stderr
    assert [row["outcome"] for row in pay_rows(paid)] == ["applied", "applied"]


def test_an_account_s_entry_policy_gates_its_saved_plan_in_a_folder(
    demo: SandboxServer, repo: Path, github: FakeGitHub
) -> None:
    (repo / "reconciler.yaml").write_text(
        f"version: 1\naccounts:\n  - name: eu\n    path: workforce.yaml\n"
        f"    baseUrl: {demo.base_url}\n    tokenEnv: RECONCILER_TOKEN_EU\n"
        f"    policy:\n      approvals:\n  {ONE_OF}"
    )
    head = commit(repo, state(rules=""))
    pull(github, 7, head, review(CAROL, "APPROVED", head, "2026-11-20T10:00:00Z"))
    token = {"RECONCILER_TOKEN_EU": demo.token}
    made = run(repo, demo, github, "plan", "--account", "eu", "--out", "plans", **token)
    assert made.returncode == 0, made.stderr
    folder = ("apply", "plans", "--account", "eu", "--approvals-from", "7", "--format", "json")
    waiting = run(repo, demo, github, *folder, **token)
    assert waiting.returncode == 0, waiting.stdout + waiting.stderr
    ledger = json.loads(waiting.stdout)["accounts"][0]["ledger"]
    pays = [row for row in ledger["changes"] if row["action"] == "pay"]
    assert [row["outcome"] for row in pays] == ["waiting"]
    assert "account eu's policy.approvals" not in pays[0]["detail"]  # a forge was read
    assert paylists(demo) == []


def test_the_record_names_who_approved_what_was_paid_and_the_report_trusts_only_signed_ones(
    demo: SandboxServer, repo: Path, github: FakeGitHub
) -> None:
    head = commit(repo, state())
    pull(github, 7, head, review(BOB, "APPROVED", head, "2026-11-20T10:00:00Z"))
    github.state.pulls[7]["merged_by"] = DAVE
    run_url = "https://ci.example.com/runs/1"
    out = ("--records-out", "records", "--run-url", run_url)
    paid = apply(repo, demo, github, "--approvals-from", "7", *out)
    assert paid.returncode == 0, paid.stdout + paid.stderr
    (written,) = (repo / "records" / "default").glob("*.json")
    record = json.loads(written.read_text())
    assert written.name == f"{record['paylist_key']}.json"
    named = ("account", "payrun", "pull_request", "head", "merge_commit")
    assert {k: record[k] for k in named} == {
        "account": "default", "payrun": "2026-11-contractors", "pull_request": 7, "head": head,
        "merge_commit": git(repo, "rev-parse", "HEAD"),
    }  # fmt: skip
    assert (record["author"], record["merged_by"], record["run_url"]) == ("carol", "dave", run_url)
    assert [(a["login"], a["id"], a["commit"]) for a in record["approvals"]] == [("bob", 12, head)]
    assert record["rule"] == {"over": "0.00", "count": 1, "from": ["alice", "bob", "dave"]}
    (paylist,) = paylists(demo)
    assert [
        (p["email"], p["amount"], p["paylist_id"], p["status"]) for p in record["payments"]
    ] == [
        ("ada@example.com", "1500.00", paylist["paylistId"], "SUCCESS"),
        ("grace@example.com", "250.00", paylist["paylistId"], "SUCCESS"),
    ]
    assert all(isinstance(p["payment_id"], int) and p["agreement_id"] for p in record["payments"])
    assert record["key"]["check"].startswith("hmac-sha256:") and record["mac"]
    verdicts = json.loads((repo / "records" / "approvals.json").read_text())
    assert verdicts["accounts"]["default"]["verdicts"][0]["needs_has"].startswith("needs 1 of")

    shown = run(repo, demo, None, "report", "workforce.yaml", "--records", "records")
    assert shown.returncode == 0, shown.stderr
    assert f"{git(repo, 'rev-parse', 'HEAD')[:12]} #7 by carol approved by bob" in shown.stdout
    assert shown.stderr == ""

    shutil.copytree(repo / "records", repo / "kept")
    git(repo, "checkout", "--quiet", "-b", "reconciler/records")
    (repo / "records" / "approvals.json").unlink()
    git(repo, "add", "records")
    git(repo, "commit", "--quiet", "-m", "records")
    git(repo, "checkout", "--quiet", "main")
    from_ref = run(repo, demo, None, "report", "workforce.yaml", "--records", "reconciler/records")
    assert "#7 by carol approved by bob" in from_ref.stdout, from_ref.stderr

    kept = repo / "kept" / "default" / written.name
    edited = json.loads(kept.read_text())
    edited["approvals"][0]["login"] = "alice"  # an approver written in by hand
    kept.write_text(json.dumps(edited))
    tampered = run(repo, demo, None, "report", "workforce.yaml", "--records", "kept")
    assert (
        f"record default/{written.name}: not trusted: its signature does not match: it was "
        "changed after it was signed"
    ) in tampered.stderr
    assert f'paylist {paylist["paylistId"]} (payrun["2026-11-contractors"]) has no record' in (
        tampered.stderr
    )
    assert "approved by alice" not in tampered.stdout


def test_a_saved_plan_is_judged_under_the_policy_the_merge_puts_in_force(
    demo: SandboxServer, repo: Path, github: FakeGitHub
) -> None:
    """The plan recorded the strict policy; the checkout loosens it: a change of the policy."""
    strict = commit(repo, state(rules=TWO_OVER_1000.replace("1000.00", "0.00")))
    assert plan(repo, demo, github, "--out", "plan.json").returncode == 0
    head = commit(repo, state())  # one approval from now on
    pull(github, 9, head, review(BOB, "APPROVED", head, "2026-11-20T10:00:00Z"))
    merge = ("apply", "plan.json", "--approvals-from", "9", "--policy-at", strict)
    result = run(repo, demo, github, *merge)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "policy.approvals of workforce.yaml changed since the last apply" in result.stderr
    assert paylists(demo) == []
