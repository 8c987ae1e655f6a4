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


PAYRUN = (
    "payruns:\n  - id: nov\n    description: November\n    payments:\n"
    '      - {worker: ENG-001, amount: "1500.00", description: November retainer}\n'
    '      - {email: eng-001@example.com, amount: "20.00", description: November extra}\n'
)


def test_an_adopted_payee_e_mail_is_a_risk_naming_the_payments_it_redirects(
    tmp_path: Path,
) -> None:
    """ENG-001's agreement is at mallory's now: adopting the e-mail makes `worker: ENG-001`
    pay mallory, so the adoption says so first, with the payrun and the amount."""
    path = tmp_path / "state.yaml"
    path.write_text(f"version: 1\nworkers:\n  - {BLOCK}\n    jobTitle: Engineer\n{PAYRUN}")
    live = live_state(agreement(1, "ENG-001", email="mallory@evil.example"))
    desired = load_desired_state(path)
    adoption = adopt_path(path, diff(desired, live), live, desired.scope_prefix, write=False)
    (risk,) = adoption.risks
    assert risk == (
        'worker["ENG-001"].workerEmail: the payee\'s e-mail changes from eng-001@example.com '
        'to mallory@evil.example, which redirects payrun paylist["nov"]\'s payment 1 (1,500.00) '
        "(1,500.00 in all, unpaid) to mallory@evil.example"
    )
    assert adoption.report().startswith("Review first: what this adoption does to money")
    assert adoption.document()["risks"] == [risk]
    assert Adoption.from_document(adoption.document()).risks == (risk,)


def test_a_webhook_moved_to_another_host_shows_the_host_and_is_a_risk(tmp_path: Path) -> None:
    live = live_state(
        agreement(1, "ENG-001"), webhook=live_webhook("https://attacker.example/c?k=s3cr3t")
    )
    path = tmp_path / "state.yaml"
    path.write_text(
        f"version: 1\nworkers:\n  - {BLOCK}\n    jobTitle: Engineer\n"
        "webhook:\n  url: https://hooks.example.com/in\n  event_types: [KYC]\n"
    )
    desired = load_desired_state(path)
    adoption = adopt_path(path, diff(desired, live), live, desired.scope_prefix, write=False)
    (url,) = [item for item in adoption.adopted if item.address == "webhook.url"]
    assert "the service has https://attacker.example/… (its path or query" in url.detail
    assert adoption.risks == (
        "webhook.url: the webhook moves from https://hooks.example.com/… to "
        "https://attacker.example/…: every event, and the secret headers the service sends "
        "with it, go to the new host",
    )
    assert "s3cr3t" not in adoption.report() and "/c" not in url.detail
