"""`adopt_path` on disk: the file's own bytes kept around the edit (a byte order mark, CRLF
line ends, its mode), written whole, and nothing written when the edit would not load."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from reconciler.adopt import Adoption, AdoptRefused, adopt_path
from reconciler.adopt.files import write_files
from reconciler.adopt.model import FileChange
from reconciler.desired.load import load_desired_state
from reconciler.plan import diff
from reconciler.plan.model import LiveState
from tests.plan.factories import agreement, live_state, live_webhook

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


WORKER = (
    "externalId: ENG-001, typeOfWorker: Worker, workerName: Ada, workerSurname: Lovelace, "
    "workerEmail: eng-001@example.com, countryIso: GB"
)
BLOCK = WORKER.replace(", ", "\n    ")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"version: 1\nworkers:\n  - \t{{{WORKER}, jobTitle: Engineer}}\n", "jobTitle: Director}"),
        (f"version: 1\nworkers:\n  -\t{{{WORKER}, jobTitle: Engineer}}\n", "jobTitle: Director}"),
        ("version: 1\nworkers:\n  - ? externalId\n    : ENG-001\n"
         + BLOCK.split("\n", 1)[1] + "\n", "\n    jobTitle: Director\n"),
        ("? version\n: 1\nworkers:\n  - " + BLOCK + "\n    jobTitle: Engineer\n",
         "\n    jobTitle: Director\n"),
    ],
    ids=["tab-after-dash", "tab-for-dash-space", "explicit-key-gets-a-key", "explicit-top-key"],
)  # fmt: skip
def test_every_form_validate_accepts_is_adopted(tmp_path: Path, text: str, expected: str) -> None:
    """A tab after a list's dash, an explicit `? key`: valid YAML the loader reads, and adopt
    edits them as any other (it never errs on what validate accepts)."""
    path = tmp_path / "state.yaml"
    path.write_text(text)
    load_desired_state(path)  # valid, as validate says
    adopt(path)
    assert expected in path.read_text()
    assert text.split("\n", 2)[:2] == path.read_text().split("\n", 2)[:2]  # its own bytes
    assert load_desired_state(path).workers[0].job_title == "Director"


def test_two_headers_added_in_the_service_are_one_headers_list(tmp_path: Path) -> None:
    headers = (("X-One", "1"), ("X-Two", "2"))
    live = live_state(
        agreement(1, "ENG-001", job_title="Engineer"),
        webhook=live_webhook("https://hooks.example.com/in", headers=headers),
    )
    hook = "webhook:\n  url: https://hooks.example.com/in\n  event_types: [KYC]\n"
    path = tmp_path / "state.yaml"
    path.write_text(f"version: 1\nworkers:\n  - {BLOCK}\n    jobTitle: Engineer\n{hook}")
    desired = load_desired_state(path)
    adopt_path(path, diff(desired, live), live, desired.scope_prefix)
    assert path.read_text().endswith(
        hook + "  headers:\n"
        '    - name: X-One\n      value: "${WEBHOOK_HEADER_X_ONE}"\n'
        '    - name: X-Two\n      value: "${WEBHOOK_HEADER_X_TWO}"\n'
    )


def test_a_file_changed_meanwhile_stops_the_run_before_any_file_is_written(tmp_path: Path) -> None:
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text("a: 1\n")
    second.write_text("b: 2, saved by an editor since\n")
    changes = (
        FileChange(str(first), "a: 1\n", "a: 10\n"),
        FileChange(str(second), "b: 2\n", "b: 20\n"),
    )
    with pytest.raises(AdoptRefused, match=r"b\.yaml changed while adopt ran"):
        write_files(changes)
    assert first.read_text() == "a: 1\n"  # checked, and so not written either
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml", "b.yaml"]  # no temporary
