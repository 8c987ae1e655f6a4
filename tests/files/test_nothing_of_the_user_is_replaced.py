"""Only a file the reconciler made is ever replaced or deleted: a saved plan, a sandbox
database, a file export wrote and marked. Real files, through the command line."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from reconciler.sandbox import SandboxServer
from tests.cli import ROOT, reconciler

QUICKSTART = ROOT / "examples" / "quickstart.yaml"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("command", ["plan", "comment"])
def test_out_never_replaces_the_desired_state_file(
    sandbox: SandboxServer, tmp_path: Path, command: str
) -> None:
    desired = tmp_path / "desired.yaml"
    desired.write_text(QUICKSTART.read_text())
    before = _digest(desired)
    result = reconciler(
        command, str(desired), "--out", str(desired), server=sandbox,
        RECONCILER_CLIENT_ID=str(sandbox.client_id),
    )  # fmt: skip
    assert result.returncode == 1
    assert "exists and is not a saved plan: refusing to replace it" in result.stderr
    assert _digest(desired) == before


def test_out_replaces_an_earlier_saved_plan(sandbox: SandboxServer, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    for _ in range(2):
        result = reconciler(
            "plan", str(QUICKSTART), "--out", str(plan), server=sandbox,
            RECONCILER_CLIENT_ID=str(sandbox.client_id),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("reset", [[], ["--sandbox-reset"]])
def test_a_sandbox_db_that_is_not_one_is_neither_used_nor_deleted(
    tmp_path: Path, reset: list[str]
) -> None:
    mine = tmp_path / "team.yaml"
    mine.write_text(QUICKSTART.read_text())
    before = _digest(mine)
    args = ["plan", str(QUICKSTART), "--sandbox", "--sandbox-db", str(mine), *reset]
    result = reconciler(*args, cwd=tmp_path)
    assert result.returncode == 1
    assert "is not a sandbox database" in result.stderr
    assert "--sandbox-reset starts it afresh" not in result.stderr  # the old, harmful hint
    assert _digest(mine) == before


def test_sandbox_reset_still_starts_a_sandbox_afresh(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    for reset in ([], ["--sandbox-reset"]):
        args = ["plan", str(QUICKSTART), "--sandbox", "--sandbox-db", str(db), *reset]
        result = reconciler(*args, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
