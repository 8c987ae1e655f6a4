"""The CI half of the account lock: a laptop's apply with the forge's token and the merge job's
apply of one account exclude each other through the forge's record (issue 49, item 1).

Each apply here runs on a "machine" of its own (another lock directory each: the machine's lock
is no help), with the forge configured in its environment as a workflow's job has it
(GITHUB_TOKEN and GITHUB_REPOSITORY; the merge job's apply, the landing's child, has its run
too): the first is held in its paying window by the sandbox's latency on POSTs, the second
refuses at once naming the first and since when, or waits for it and finds the payment paid.
A claim whose holder died is taken over once its lease ran out; GitLab's claims (running
deployments) exclude the same way. Over real HTTP: the sandbox, and the fake forges.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reconciler.apply.forge_lock import ForgeLock, who_applies
from reconciler.apply.lock import AccountLocked, lock_name
from reconciler.gitops.github.forge import GitHubForge
from reconciler.gitops.github.lock_records import ENVIRONMENT
from reconciler.gitops.gitlab.forge import GitLabForge
from reconciler.plan.account import Account
from reconciler.sandbox import SandboxServer
from reconciler.secrets import Secret
from tests.apply.support import cli
from tests.apply.test_account_lock import _Background, _balance, _env, _payments, _saved_plans
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub
from tests.gitops.fake_gitlab import PROJECT_ID, FakeGitLab
from tests.sandbox.support import Controls

TOKEN = "forge-lock-token"
RUN = f"https://github.com/{OWNER_REPO}/actions/runs/4711"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(TOKEN) as fake:
        yield fake


def _on_github(server: SandboxServer, machine: Path, fake: FakeGitHub, **more: str) -> dict[
    str, str
]:  # fmt: skip
    """An apply's environment on a machine of its own, with GitHub's token and repository."""
    return _env(server, machine) | {
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": OWNER_REPO,
        "GITHUB_API_URL": fake.api_url,
        **more,
    }


def _held_claims(fake: FakeGitHub) -> list[int]:
    """The lock claims GitHub still holds in progress."""
    return [
        d["id"]
        for d in fake.state.deployments
        if d["environment"] == ENVIRONMENT
        and fake.state.deployment_statuses[d["id"]][-1]["state"] == "in_progress"
    ]


@pytest.mark.parametrize("wait", [False, True], ids=["refused-at-once", "waits-then-paid"])
def test_the_merge_jobs_apply_and_a_laptops_exclude_each_other_through_github(
    demo: SandboxServer, tmp_path: Path, github: FakeGitHub, wait: bool
) -> None:
    first_plan, second_plan = _saved_plans(demo, tmp_path, tmp_path / "locks")
    ci = _on_github(demo, tmp_path / "runner", github, GITHUB_RUN_ID="4711")
    laptop = _on_github(demo, tmp_path / "laptop", github)
    controls = Controls(demo.base_url)
    controls.set_faults(latency_ms=10_000, methods=["POST"])
    try:
        merge_job = _Background("apply", str(first_plan), server=demo, **ci)
        merge_job.wait_for("Applying the saved plan")
        options = ["--lock-timeout", "60s"] if wait else []
        second = cli("apply", str(second_plan), *options, server=demo, **laptop)
        status, stdout, stderr = merge_job.finish()
    finally:
        controls.set_faults()

    assert status == 0, stdout + stderr
    assert second.returncode == 1, second.stdout + second.stderr
    said = " ".join(second.stderr.split())
    holder = f"pid {merge_job.process.pid} on"
    if wait:
        assert "waiting up to 60 s for the lock of" in said, said
        assert f"on GitHub's deployments of reconciler-lock in {OWNER_REPO}" in said
        assert holder in said and f"the run {RUN}" in said
        assert "paid already in paylist" in second.stdout, second.stdout
    else:
        assert f"holds its lock on GitHub's deployments of reconciler-lock in {OWNER_REPO}" in said
        assert holder in said and f"reconciler apply {first_plan}" in said, said
        assert f"the run {RUN}" in said and " UTC, " in said and "s ago" in said
        assert "nothing was changed" in said and "--lock-timeout" in said
    paid = _payments(demo)
    assert [(p["worker_email"], p["amount"], p["status"]) for p in paid] == [
        ("ada@example.com", 100.0, "SUCCESS")
    ]
    assert _balance(demo) in ("9900.0", "9900.00", "9900")
    assert _held_claims(github) == []  # both released their claims
    assert not [d for d in github.state.deployments if d["environment"] == ENVIRONMENT]


def test_a_claim_whose_holder_died_is_taken_over_once_its_lease_ran_out(
    demo: SandboxServer, tmp_path: Path, github: FakeGitHub
) -> None:
    first_plan, _ = _saved_plans(demo, tmp_path, tmp_path / "locks")
    account = Account.of(demo.base_url, demo.client_id, None)
    with GitHubForge(OWNER_REPO, Secret(TOKEN), api_url=github.api_url) as forge:
        # A merge job that died holding the lock: its claim was last renewed 3 minutes ago.
        github.clock = lambda: datetime.now(UTC) - timedelta(minutes=3)
        who = who_applies({"GITHUB_RUN_ID": "1", "GITHUB_REPOSITORY": OWNER_REPO})
        forge.claim_lock(lock_name(account), who)  # never released: its process is gone
        github.clock = lambda: datetime.now(UTC)
        (dead_claim,) = _held_claims(github)

        applied = cli("apply", str(first_plan), server=demo,
                      **_on_github(demo, tmp_path / "laptop", github))  # fmt: skip

    assert applied.returncode == 0, applied.stdout + applied.stderr
    said = " ".join(applied.stderr.split())
    assert "took over the lock from pid" in said, said
    assert f"the run https://github.com/{OWNER_REPO}/actions/runs/1" in said
    assert "its lease of 120 s ran out" in said
    assert len(_payments(demo)) == 1
    assert dead_claim not in _held_claims(github) and _held_claims(github) == []


def test_a_claim_being_renewed_is_not_taken_over(tmp_path: Path, github: FakeGitHub) -> None:
    """A live holder's lease starts again at each renewal: an apply past it still holds."""
    account = Account.of("https://api.example.com", 7, None)
    with GitHubForge(OWNER_REPO, Secret(TOKEN), api_url=github.api_url) as forge:
        forge.renew_every_s = 0.2  # the lease (120 s) is moved back 3 minutes at first
        github.clock = lambda: datetime.now(UTC) - timedelta(minutes=3)
        with ForgeLock(forge, confirm_s=0.1).hold(account, timeout=0):
            github.clock = lambda: datetime.now(UTC)
            deadline = datetime.now(UTC) + timedelta(seconds=10)
            while len(github.state.deployment_statuses[_held_claims(github)[0]]) < 3:
                assert datetime.now(UTC) < deadline, "never renewed"
                time.sleep(0.05)
            second = ForgeLock(forge, confirm_s=0.1)
            with (
                pytest.raises(AccountLocked, match="holds its lock on GitHub") as locked,
                second.hold(account, timeout=0),
            ):
                pass
        assert "since " in str(locked.value)
        assert _held_claims(github) == []


def test_gitlab_claims_exclude_a_laptops_apply(demo: SandboxServer, tmp_path: Path) -> None:
    """GitLab: the merge job's claim (a running deployment of `reconciler-lock/<key>`)
    refuses a laptop's apply that has GitLab's token and variables, naming the holder."""
    first_plan, _ = _saved_plans(demo, tmp_path, tmp_path / "locks")
    account = Account.of(demo.base_url, demo.client_id, None)
    with FakeGitLab(TOKEN) as fake, GitLabForge(fake.api_url, str(PROJECT_ID),
                                                Secret(TOKEN)) as forge:  # fmt: skip
        laptop = _env(demo, tmp_path / "laptop") | {
            "GITLAB_TOKEN": TOKEN, "CI_API_V4_URL": fake.api_url, "CI_PROJECT_ID": str(PROJECT_ID)
        }  # fmt: skip
        with ForgeLock(forge, confirm_s=0.1).hold(account, timeout=0):
            refused = cli("apply", str(first_plan), server=demo, **laptop)
        (claim,) = [d for d in fake.state.deployments if d["ref"] == "main"][:1]
        applied = cli("apply", str(first_plan), server=demo, **laptop)

    assert refused.returncode == 1, refused.stdout + refused.stderr
    said = " ".join(refused.stderr.split())
    assert "holds its lock on GitLab's deployments of reconciler-lock" in said, said
    assert f"@project_4242_bot (deployment {claim['id']})" in said and " UTC, " in said
    assert claim["status"] == "canceled"  # released when its holder ended
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert len(_payments(demo)) == 1


def test_a_long_command_is_cut_and_the_holders_run_is_still_said(
    tmp_path: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The merge job's apply names long paths (its work folder, its reviewed plan): its claim
    keeps its command's first 150 characters, and always the process and the run that holds
    the lock, which the refused apply says."""
    account = Account.of("https://api.example.com", 7, None)
    long_plan = str(tmp_path / ("runner-temp-" * 40) / "reviewed" / "plan.json")
    monkeypatch.setattr("sys.argv", ["reconciler", "apply", long_plan, "--approvals-from", "31"])
    ci = {"GITHUB_RUN_ID": "4711", "GITHUB_REPOSITORY": OWNER_REPO}
    with (
        GitHubForge(OWNER_REPO, Secret(TOKEN), api_url=github.api_url) as forge,
        ForgeLock(forge, environ=ci, confirm_s=0.01).hold(account, timeout=0),
        pytest.raises(AccountLocked) as locked,
        ForgeLock(forge, environ={}).hold(account, timeout=0),
    ):
        pass

    said = str(locked.value)
    assert f"the run {RUN}, since " in said and " UTC, " in said, said
    assert f"pid {os.getpid()} on " in said and "(reconciler apply " in said, said
    assert "... (cut at 150 of " in said and long_plan not in said
