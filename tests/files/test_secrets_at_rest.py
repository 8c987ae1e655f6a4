"""Secrets at rest stay local: the embedded sandbox's folder and database are owner-only."""

from __future__ import annotations

import stat
from pathlib import Path

from reconciler.sandbox import SandboxServer
from tests.cli import ROOT, reconciler

QUICKSTART = ROOT / "examples" / "quickstart.yaml"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_embedded_sandbox_keeps_its_folder_private_and_out_of_git(tmp_path: Path) -> None:
    result = reconciler("plan", str(QUICKSTART), "--sandbox", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    folder = tmp_path / ".reconciler"
    assert _mode(folder) == 0o700
    assert _mode(folder / "sandbox.db") == 0o600
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"


def test_an_existing_reconciler_folder_is_made_private_again(tmp_path: Path) -> None:
    folder = tmp_path / ".reconciler"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    assert reconciler("plan", str(QUICKSTART), "--sandbox", cwd=tmp_path).returncode == 0
    assert _mode(folder) == 0o700 and (folder / ".gitignore").is_file()


def test_a_folder_of_the_user_is_left_as_it_is_but_the_database_is_private(
    tmp_path: Path,
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o755)
    mine.chmod(0o755)
    db = mine / "demo.db"
    result = reconciler("plan", str(QUICKSTART), "--sandbox", "--sandbox-db", str(db), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert _mode(mine) == 0o755 and not (mine / ".gitignore").exists()
    assert _mode(db) == 0o600


def test_a_served_sandbox_database_is_private(tmp_path: Path) -> None:
    db = tmp_path / "served.db"
    with SandboxServer(db=db):
        assert _mode(db) == 0o600
