"""The merge job's whole landing and a colleague's laptop apply exclude each other through the
forge's lock (issue 49, item 1, "Done when"): two merges' worth of money, identity-equal (`Nov
2026 retainer` and `Nov 2026  retainer`, the same payment by the reconciler's own rule, two
payments to the service's duplicate check), leave the wallet once.

The laptop (`reconciler apply PATH` with GitHub's token and repository in its environment, on a
machine of its own: another lock directory) holds the account's lock while it asks its
question; the merge job (`reconciler github apply-accounts`, the landing, on the runner: its own
lock directory) is refused by the lock at once, saying who holds it and since when, applies
nothing, and its merge stays pending; then the laptop pays. Over real HTTP: the sandbox, the
fake GitHub, a git history, and the reconciler's own processes.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.gitops.github.lock_records import ENVIRONMENT
from reconciler.sandbox import SandboxServer
from tests.apply.support import QUICKSTART, answer_on_the_terminal, ask_on_a_terminal, cli
from tests.apply.test_account_lock import ONE_SPACE, TWO_SPACES, _balance, _env, _file, _payments
from tests.gitops.action_runner import History
from tests.gitops.fake_github import OWNER_REPO, FakeGitHub, pull_request
from tests.gitops.support import ROOT

TOKEN = "ghs_" + secrets.token_urlsafe(27)
FILE = "workforce/workforce.yaml"
PR = 31
RUN = f"https://github.com/{OWNER_REPO}/actions/runs/4711"


@pytest.fixture
def service_and_forge() -> Iterator[tuple[SandboxServer, FakeGitHub]]:
    """The demo account's sandbox, and the repository's GitHub."""
    seed = ROOT / "examples" / "sandbox-seed.yaml"
    with SandboxServer(seed=seed) as demo, FakeGitHub(TOKEN) as github:
        yield demo, github


def _github_env(fake: FakeGitHub, **more: str) -> dict[str, str]:
    return {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": OWNER_REPO,
            "GITHUB_API_URL": fake.api_url, **more}  # fmt: skip


def test_the_merge_jobs_landing_and_a_laptops_apply_pay_once(
    service_and_forge: tuple[SandboxServer, FakeGitHub], tmp_path: Path
) -> None:
    demo, github = service_and_forge
    # Pull request 31 pays Ada 100.00, `Nov 2026 retainer`: planned at its head, merged.
    history = History(tmp_path / "history")
    history.commit({FILE: QUICKSTART.read_text()}, "start")
    text = _file(tmp_path, "nov-a", ONE_SPACE).read_text()
    head = history.commit({FILE: text}, f"#{PR}", "pay")
    merge = history.merge("pay", PR)
    github.state.remote = history.remote
    github.state.pulls[PR] = pull_request(PR, head)
    merged = {"number": PR, "merged_at": "2026-11-26T10:00:00Z", "merge_commit_sha": merge}
    github.state.commit_pulls[merge] = [merged | {"head": {"sha": head}}]
    github.state.default_branch_commits.add(merge)
    checkout = history.checkout(merge, tmp_path / "checkout")
    reviewed = tmp_path / "reviewed"
    reviewed.mkdir()
    runner = _env(demo, tmp_path / "runner") | _github_env(github, GITHUB_RUN_ID="4711")
    planned = cli("plan", str(checkout / FILE), "--out", str(reviewed / "plan.json"),
                  "--pull-request", str(PR), "--head-sha", head, server=demo, **runner)  # fmt: skip
    assert planned.returncode == 0, planned.stdout + planned.stderr

    # The laptop: the same payment, `Nov 2026  retainer`, asked on its terminal, holding the lock.
    laptop_file = _file(tmp_path, "nov-b", TWO_SPACES)
    laptop = _env(demo, tmp_path / "laptop") | _github_env(github)
    process, leader, seen = ask_on_a_terminal(laptop_file, demo, **laptop)
    try:
        landing = cli(
            "github", "apply-accounts", "--path", str(checkout / FILE), "--sha", merge,
            "--default-branch", "main", "--reviewed", str(reviewed), "--pull-request", str(PR),
            "--head-sha", head, "--work-dir", str(tmp_path / "work"), "--log-url", RUN,
            "--environment", "production", server=demo, **runner,
        )  # fmt: skip
    finally:
        status, shown = answer_on_the_terminal(process, leader, seen, "yes")

    said = " ".join(landing.stdout.split())
    assert landing.returncode == 1, said + landing.stderr
    (refused,) = [line for line in landing.stdout.splitlines() if "::error::default:" in line]
    assert "::error::default: refused by the account's lock: another apply of " in refused, said
    assert f"holds its lock on GitHub's deployments of reconciler-lock in {OWNER_REPO}" in refused
    assert f"pid {process.pid} on " in refused and f"(reconciler apply {laptop_file})" in refused
    assert ", since " in refused and " UTC, " in refused  # who holds it, and since when
    assert f"nothing was applied (never applied, #{PR}); the merge stays pending" in refused
    assert "planning again" not in said  # refused at once: no new plan, no second apply
    assert "::error::Not applied (refused): default" in landing.stdout.splitlines(), said
    assert "applied in part" not in said  # nothing was sent: no doubt to raise
    (record,) = [d for d in github.state.deployments if d["environment"] == "production"]
    (*_, ended) = github.state.deployment_statuses[record["id"]]
    assert ended["state"] == "failure" and "refused by the account's lock" in ended["description"]

    assert status == 0, shown
    paid = _payments(demo)
    assert [(p["worker_email"], p["amount"], p["description"]) for p in paid] == [
        ("ada@example.com", 100.0, TWO_SPACES)
    ]  # the money left the wallet once
    assert _balance(demo) in ("9900.0", "9900.00", "9900")
    assert not [d for d in github.state.deployments if d["environment"] == ENVIRONMENT]
