"""The guess that starts a plan's money reads opens only files the load would read.

Before a plan loads its files, a look at their bytes (`source.payruns_written`) guesses whether
they write payruns, so the paylists are read from the start. It listed and opened the files on
its own and followed any link: a folder linked out of the repository, or a link in the folder to
a file outside it, was read (one bit of a file the load refuses, told to anyone who sees the
requests the plan sends).
"""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.cli import reconciler

TEAM = "version: 1\nworkers: []\n"
PAYRUNS = "payruns:\n  - id: 2026-11-x\n    description: x\n    payments: []\n"


def _money_reads(server: SandboxServer, since: int) -> list[str]:
    log = httpx.get(f"{server.base_url}/_sandbox/requests", params={"since": since}).json()
    return [path for entry in log if "paylists" in (path := entry["path"]) or "wallet" in path]


def _last_seq(server: SandboxServer) -> int:
    log = httpx.get(f"{server.base_url}/_sandbox/requests").json()
    return max((entry["seq"] for entry in log), default=0)


def _linked_folder(tmp_path: Path) -> tuple[Path, str]:
    """The workflow's folder, in a repository, is a link to the runner's files."""
    outside = tmp_path / "runner"
    outside.mkdir()
    (outside / "team.yaml").write_text(TEAM + PAYRUNS, encoding="utf-8")
    repository = tmp_path / "repository"
    (repository / ".git").mkdir(parents=True)
    os.symlink(outside, repository / "workforce")
    return repository / "workforce", "leads out of the repository"


def _link_in_folder(tmp_path: Path) -> tuple[Path, str]:
    """A link in the folder to a file outside it."""
    (tmp_path / "elsewhere.yaml").write_text(PAYRUNS, encoding="utf-8")
    folder = tmp_path / "workforce"
    folder.mkdir()
    (folder / "team.yaml").write_text(TEAM, encoding="utf-8")
    os.symlink("../elsewhere.yaml", folder / "money.yaml")
    return folder, "a symbolic link that leads out of the directory"


@pytest.mark.parametrize("layout", [_linked_folder, _link_in_folder])
def test_a_file_the_load_refuses_is_not_read_to_guess_payruns(
    sandbox: SandboxServer, tmp_path: Path, layout: object
) -> None:
    path, refused = layout(tmp_path)  # type: ignore[operator]
    since = _last_seq(sandbox)

    result = reconciler("plan", str(path), server=sandbox)

    said = result.stdout + result.stderr
    assert result.returncode == 1, said
    assert refused in said, said
    assert _money_reads(sandbox, since) == [], said


def test_a_file_the_load_reads_is_still_guessed(sandbox: SandboxServer, tmp_path: Path) -> None:
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "money.txt").write_text(TEAM + PAYRUNS, encoding="utf-8")
    os.symlink("kept/money.txt", tmp_path / "team.yaml")  # a link inside the folder: read
    since = _last_seq(sandbox)

    result = reconciler("plan", str(tmp_path), server=sandbox)

    said = result.stdout + result.stderr
    assert "team.yaml:6:15: payments must not be empty" in said, said  # the load read it
    assert _money_reads(sandbox, since) != [], said
