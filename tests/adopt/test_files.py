"""`adopt_path` on disk: the file's own bytes kept around the edit (a byte order mark, CRLF
line ends, its mode), written whole, and nothing written when the edit would not load."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from reconciler.adopt import Adoption, AdoptRefused, adopt_path
from reconciler.desired.load import load_desired_state
from reconciler.plan import diff
from reconciler.plan.model import LiveState
from tests.plan.factories import agreement

TEXT = (
    "version: 1\r\n"
    "workers:\r\n"
    "  - externalId: ENG-001\r\n"
    "    typeOfWorker: Worker\r\n"
    "    workerName: Ada\r\n"
    "    workerSurname: Lovelace\r\n"
    "    workerEmail: eng-001@example.com\r\n"
    "    countryIso: GB\r\n"
    "    jobTitle: Engineer\r\n"
)
LIVE = LiveState(workers=(agreement(1, "ENG-001", job_title="Director"),))


def adopt(path: Path, *, into: Path | None = None, write: bool = True) -> Adoption:
    desired = load_desired_state(path)
    plan = diff(desired, LIVE)
    return adopt_path(path, plan, LIVE, desired.scope_prefix, into=into, write=write)


def test_the_bytes_around_the_edit_and_the_mode_stay(tmp_path: Path) -> None:
    path = tmp_path / "state.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + TEXT.encode())
    path.chmod(0o640)
    adopt(path)
    assert path.read_bytes() == b"\xef\xbb\xbf" + TEXT.replace("Engineer", "Director").encode()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.yaml"]  # no temporary left


def test_a_dry_run_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "state.yaml"
    path.write_bytes(TEXT.encode())
    adopt(path, write=False)
    assert path.read_bytes() == TEXT.encode()


@pytest.mark.parametrize(
    ("into", "why"),
    [
        ("../elsewhere.yaml", "must be directly inside"),
        ("notes.txt", "named *.yaml or *.yml"),
        (".hidden.yaml", "named *.yaml or *.yml"),
    ],
)
def test_into_names_a_new_file_of_the_folder_only(tmp_path: Path, into: str, why: str) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    (folder / "workers.yaml").write_bytes(TEXT.encode())
    with pytest.raises(AdoptRefused, match=why.replace("*", r"\*")):
        adopt(folder, into=folder / into)
    assert sorted(p.name for p in folder.iterdir()) == ["workers.yaml"]
