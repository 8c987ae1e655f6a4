"""A directory never loses a file silently: every `*.yaml`/`*.yml` entry is read, or named.

Real entries on disk (symbolic links, FIFOs, directories), through the command line; the apply
case runs against the demo sandbox and checks its request log.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.cli import ROOT, reconciler

TEAM = """\
version: 1
scope: {externalIdPrefix: ENG-}
workers:
  - externalId: ENG-001
    typeOfWorker: Worker
    workerName: Ada
    workerSurname: Lovelace
    workerEmail: ada@example.com
    countryIso: GB
"""
SALES = """\
workers:
  - externalId: ENG-009
    typeOfWorker: Worker
    workerName: Linus
    workerSurname: Torvalds
    workerEmail: linus@example.com
    countryIso: FI
"""


def _directory(tmp_path: Path) -> Path:
    folder = tmp_path / "state"
    folder.mkdir()
    (folder / "team.yaml").write_text(TEAM)
    return folder


def _dangling(folder: Path) -> None:
    (folder / "sales.yaml").symlink_to(folder.parent / "elsewhere" / "sales.yaml")


def _loop(folder: Path) -> None:
    (folder / "a.yaml").symlink_to(folder / "b.yaml")
    (folder / "b.yaml").symlink_to(folder / "a.yaml")


def _fifo(folder: Path) -> None:
    os.mkfifo(folder / "sales.yaml")


ENTRIES: list[tuple[str, Callable[[Path], None], str, str]] = [
    ("a dangling symbolic link", _dangling, "sales.yaml", "which does not exist"),
    ("a symbolic link loop", _loop, "a.yaml", "loops back on itself"),
    ("a directory", lambda f: (f / "sales.yaml").mkdir(), "sales.yaml", "a directory"),
    ("a FIFO", _fifo, "sales.yaml", "a FIFO"),
    ("a directory named .yml", lambda f: (f / "old.yml").mkdir(), "old.yml", "a directory"),
]


@pytest.mark.parametrize(
    ("name", "make", "entry", "said"), ENTRIES, ids=[entry[0] for entry in ENTRIES]
)
def test_an_entry_that_is_not_a_readable_file_is_an_error_naming_it(
    tmp_path: Path, name: str, make: Callable[[Path], None], entry: str, said: str
) -> None:
    folder = _directory(tmp_path)
    make(folder)
    result = reconciler("validate", str(folder), "--format", "json")
    assert result.returncode == 1, result.stdout
    problems = [p for p in _problems(result.stdout) if p["file"].endswith(entry)]
    assert problems and said in problems[0]["message"], result.stdout


def _problems(output: str) -> list[dict[str, str]]:
    found: list[dict[str, str]] = json.loads(output)
    return found


@pytest.mark.parametrize("name", ["SALES.YAML", "Sales.Yml", "sales.YAML"])
def test_a_file_in_any_case_of_the_suffix_is_read(tmp_path: Path, name: str) -> None:
    folder = _directory(tmp_path)
    (folder / name).write_text(SALES.replace("ENG-009", "OPS-009"))  # outside the scope
    result = reconciler("validate", str(folder))
    assert result.returncode == 1
    assert name in result.stdout + result.stderr and "outside the scope" in result.stdout


def test_a_fifo_given_as_the_path_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "desired.yaml"
    os.mkfifo(fifo)
    for command in (["validate"], ["plan", "--sandbox"], ["apply", "--sandbox", "--auto-approve"]):
        try:
            result = reconciler(command[0], str(fifo), *command[1:], cwd=tmp_path, timeout=20)
        except subprocess.TimeoutExpired:  # pragma: no cover - the failure this test is for
            pytest.fail(f"`reconciler {command}` waited on a FIFO")
        assert result.returncode == 1
        assert "not a regular file but a FIFO" in result.stdout + result.stderr


@pytest.fixture
def demo() -> Iterator[SandboxServer]:
    with SandboxServer(seed=ROOT / "examples" / "sandbox-seed.yaml") as server:
        yield server


def test_a_file_whose_link_lost_its_target_inactivates_nobody(
    demo: SandboxServer, tmp_path: Path
) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    # Inside the folder: a link leading out of it is refused even while its target exists.
    target = folder / "shared" / "sales.yaml"
    target.parent.mkdir()
    target.write_text(SALES)
    (folder / "team.yaml").write_text(TEAM)
    (folder / "sales.yaml").symlink_to(target)
    assert reconciler("validate", str(folder)).returncode == 0
    target.unlink()  # the shared checkout moved: the link now points nowhere
    since = httpx.get(f"{demo.base_url}/_sandbox/requests").json()
    seq = since[-1]["seq"] if since else 0

    applied = reconciler("apply", str(folder), "--auto-approve", server=demo)

    assert applied.returncode == 1
    assert "sales.yaml" in applied.stderr + applied.stdout
    log = httpx.get(f"{demo.base_url}/_sandbox/requests", params={"since": seq}).json()
    # Refused before anything is written: the account is read while the files load
    # (docs/plans.md), so its first reads may precede the refusal; no write follows it.
    assert [entry for entry in log if entry["method"] != "GET"] == []
