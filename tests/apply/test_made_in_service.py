"""Made in the service (issue 48): an open agreement in scope that no version of the files in
git listed (HR invited someone in the service's screens) is reported and left by prune; one
the files listed and then dropped is inactivated as before."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.apply.support import cli

HEAD = 'version: 1\nscope:\n  externalIdPrefix: "ENG-"\n'


def _workers(*numbers: int) -> str:
    return "workers:\n" + "".join(
        f"  - {{externalId: ENG-00{n}, typeOfWorker: Worker, workerName: W{n}, "
        f"workerSurname: S{n}, workerEmail: w{n}@example.com, countryIso: GB}}\n"
        for n in numbers
    )


def _git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=folder,
        check=True,
        capture_output=True,
    )


def _open(server: SandboxServer) -> list[str]:
    answer = httpx.get(
        f"{server.base_url}/contract/workers/list",
        headers={"Authorization": f"Bearer {server.token}"},
    )
    answer.raise_for_status()
    return sorted(w["externalId"] for w in answer.json()["content"] if w["status"] != "INACTIVATED")


@pytest.fixture
def account(tmp_path: Path) -> Iterator[SandboxServer]:
    """ENG-001..003 invited; ENG-003 by HR in the service (no file in git lists it)."""
    with SandboxServer() as server:
        elsewhere = tmp_path / "hr.yaml"
        elsewhere.write_text(HEAD + _workers(1, 2, 3))
        done = cli("apply", str(elsewhere), "--auto-approve", server=server)
        assert done.returncode == 0, done.stdout + done.stderr
        yield server


def test_hr_s_invitation_survives_an_apply_and_a_dropped_one_is_inactivated(
    account: SandboxServer, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    path = repo / "workforce.yaml"
    path.write_text(HEAD + _workers(1, 2))
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "ENG-001 and ENG-002")
    path.write_text(HEAD + _workers(1))
    _git(repo, "commit", "-qam", "ENG-002 left")

    planned = cli("plan", str(path), server=account)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert '  - worker["ENG-002"]' in planned.stdout
    assert 'worker["ENG-003"]' in planned.stdout and "was made in the service" in planned.stdout
    assert '  - worker["ENG-003"]' not in planned.stdout
    applied = cli("apply", str(path), "--auto-approve", server=account)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert _open(account) == ["ENG-001", "ENG-003"]

    path.write_text(path.read_text() + "policy:\n  prune: all\n")  # the old rule, asked for
    pruned = cli("apply", str(path), "--auto-approve", server=account)
    assert pruned.returncode == 0, pruned.stdout + pruned.stderr
    assert _open(account) == ["ENG-001"]


def test_outside_git_the_plan_says_it_cannot_tell_and_keeps_the_old_rule(
    account: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "plain" / "workforce.yaml"
    path.parent.mkdir()
    path.write_text(HEAD + _workers(1))
    planned = cli("plan", str(path), server=account)
    assert '  - worker["ENG-003"]' in planned.stdout and '  - worker["ENG-002"]' in planned.stdout
    assert "whether the files ever listed the workers to inactivate cannot be told" in (
        planned.stdout
    )


def test_in_a_shallow_clone_the_plan_says_it_cannot_tell_and_keeps_the_old_rule(
    account: SandboxServer, tmp_path: Path
) -> None:
    """A CI checkout of one commit (actions/checkout's default) has no history to tell HR's
    invitation from a dropped one: the plan says so, naming the shallow clone and the fix."""
    origin = tmp_path / "origin"
    origin.mkdir()
    _git(origin, "init", "-q")
    (origin / "workforce.yaml").write_text(HEAD + _workers(1, 2))
    _git(origin, "add", ".")
    _git(origin, "commit", "-qm", "ENG-001 and ENG-002")
    (origin / "workforce.yaml").write_text(HEAD + _workers(1))
    _git(origin, "commit", "-qam", "ENG-002 left")
    _git(tmp_path, "clone", "-q", "--depth", "1", origin.as_uri(), "shallow")
    path = tmp_path / "shallow" / "workforce.yaml"

    planned = cli("plan", str(path), server=account)

    assert planned.returncode == 0, planned.stdout + planned.stderr
    said = " ".join(planned.stdout.split())
    assert '- worker["ENG-003"]' in said and '- worker["ENG-002"]' in said  # the old rule
    assert (
        "whether the files ever listed the workers to inactivate cannot be told (the checkout "
        "is a shallow clone (fetch-depth: 0 fetches it))" in said
    )
    assert "was made in the service" not in said
