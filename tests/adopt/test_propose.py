"""`adopt.propose` on plain values: the file's own style is kept whatever it is (flow or
block, CRLF line ends, quoting), and the result loads as the account is."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from reconciler.adopt import Adoption, propose
from reconciler.adopt.proposal import AdoptOptions
from reconciler.desired.load import load_desired_state
from reconciler.plan import diff
from reconciler.plan.model import LiveState
from reconciler.service.models import Worker
from tests.plan.factories import agreement

LIVE = (
    agreement(1, "ENG-001", job_title="Director"),
    agreement(2, "ENG-002", status="ENDED"),
    agreement(3, "ENG-003", job_title="Engineer"),
    agreement(4, "ENG-004", job_title=None),
)

CASES = {
    "block": (
        "version: 1\n"
        "workers:\n"
        "  - externalId: ENG-001\n"
        "    typeOfWorker: Worker\n"
        "    workerName: Ada\n"
        "    workerSurname: Lovelace\n"
        "    workerEmail: eng-001@example.com\n"
        "    countryIso: GB\n"
        "    jobTitle: Engineer  # was\n"
        "  - externalId: ENG-002\n"
        "    typeOfWorker: Worker\n"
        "    workerName: Ada\n"
        "    workerSurname: Lovelace\n"
        "    workerEmail: eng-002@example.com\n"
        "    countryIso: GB\n"
        "  - externalId: ENG-004\n"
        "    typeOfWorker: Worker\n"
        "    workerName: Ada\n"
        "    jobTitle: Engineer\n"
        "    workerSurname: Lovelace\n"
        "    workerEmail: eng-004@example.com\n"
        "    countryIso: GB\n",
        "version: 1\n"
        "workers:\n"
        "  - externalId: ENG-001\n"
        "    typeOfWorker: Worker\n"
        "    workerName: Ada\n"
        "    workerSurname: Lovelace\n"
        "    workerEmail: eng-001@example.com\n"
        "    countryIso: GB\n"
        "    jobTitle: Director  # was\n"
        "  - externalId: ENG-002\n"
        "    typeOfWorker: Worker\n"
        "    workerName: Ada\n"
        "    workerSurname: Lovelace\n"
        "    workerEmail: eng-002@example.com\n"
        "    countryIso: GB\n"
        '    ended: "2026-12-02"\n'
        "  - externalId: ENG-004\n"
        "    typeOfWorker: Worker\n"
        "    workerName: Ada\n"
        "    workerSurname: Lovelace\n"
        "    workerEmail: eng-004@example.com\n"
        "    countryIso: GB\n"
        "  - externalId: ENG-003\n"
        "    typeOfWorker: Worker\n"
        "    workerName: Ada\n"
        "    workerSurname: Lovelace\n"
        "    workerEmail: eng-003@example.com\n"
        "    countryIso: GB\n"
        "    jobTitle: Engineer\n",
    ),
    "flow": (
        "version: 1\n"
        "workers: [\n"
        "  {externalId: ENG-001, typeOfWorker: Worker, workerName: Ada, workerSurname: Lovelace,\n"
        "   workerEmail: eng-001@example.com, countryIso: GB, jobTitle: 'Engineer'},\n"
        "  {externalId: ENG-002, typeOfWorker: Worker, workerName: Ada, workerSurname: Lovelace,\n"
        "   workerEmail: eng-002@example.com, countryIso: GB},\n"
        "  {externalId: ENG-004, typeOfWorker: Worker, workerName: Ada, workerSurname: Lovelace,\n"
        "   workerEmail: eng-004@example.com, countryIso: GB, jobTitle: Engineer}]\n",
        "version: 1\n"
        "workers: [\n"
        "  {externalId: ENG-001, typeOfWorker: Worker, workerName: Ada, workerSurname: Lovelace,\n"
        "   workerEmail: eng-001@example.com, countryIso: GB, jobTitle: 'Director'},\n"
        "  {externalId: ENG-002, typeOfWorker: Worker, workerName: Ada, workerSurname: Lovelace,\n"
        '   workerEmail: eng-002@example.com, countryIso: GB, ended: "2026-12-02"},\n'
        "  {externalId: ENG-004, typeOfWorker: Worker, workerName: Ada, workerSurname: Lovelace,\n"
        "   workerEmail: eng-004@example.com, countryIso: GB}, {externalId: ENG-003, "
        "typeOfWorker: Worker, workerName: Ada, workerSurname: Lovelace, "
        "workerEmail: eng-003@example.com, countryIso: GB, jobTitle: Engineer}]\n",
    ),
}
CASES["crlf"] = (
    CASES["block"][0].replace("\n", "\r\n"),
    CASES["block"][1].replace("\n", "\r\n"),
)


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_kind_of_drift_is_written_in_the_files_own_style(case: str, tmp_path: Path) -> None:
    before, expected = CASES[case]
    adoption = _propose(tmp_path, before, LIVE)
    assert [change.after for change in adoption.files] == [expected]
    assert {item.address for item in adoption.adopted} == {
        'worker["ENG-001"].jobTitle',
        'worker["ENG-002"]',
        'worker["ENG-003"]',
        'worker["ENG-004"].jobTitle',
    }
    again = _propose(tmp_path, expected, LIVE)
    assert again.files == () and again.adopted == ()


def test_closing_every_listed_worker_keeps_each_item_with_ended(tmp_path: Path) -> None:
    # Closed in the service (issue 48): no item goes, so a paid payrun naming one stays valid.
    text = CASES["block"][0]
    closed = (agreement(1, "ENG-001", status="ENDED"), agreement(2, "ENG-002", status="ENDED"))
    closed += (agreement(4, "ENG-004", status="INACTIVATED"),)
    adoption = _propose(tmp_path, text, closed)
    (change,) = adoption.files
    assert change.after is not None and change.after.count('    ended: "2026-12-02"\n') == 3
    assert change.after.replace('    ended: "2026-12-02"\n', "") == text
    again = _propose(tmp_path, change.after, closed)
    assert again.files == () and again.adopted == ()


def _propose(tmp_path: Path, text: str, live: tuple[Worker, ...]) -> Adoption:
    path = tmp_path / "state.yaml"
    path.write_bytes(text.encode())
    desired = load_desired_state(path)
    state = LiveState(workers=live)
    options = AdoptOptions(today=date(2026, 12, 2))  # the day the closures are seen
    plan = diff(desired, state)
    return propose([(str(path), text)], plan, state, desired.scope_prefix, options)


def test_a_new_worker_whose_email_the_files_give_another_is_left_with_why(tmp_path: Path) -> None:
    text = CASES["block"][0]
    taken = (*LIVE[:2], agreement(4, "ENG-004", job_title=None), agreement(9, "ENG-009"))
    taken = (*taken, agreement(10, "ENG-010", email="EnG-001@example.com"))
    adoption = _propose(tmp_path, text, taken)
    (left,) = adoption.not_adopted
    assert left.address == 'worker["ENG-010"]'
    assert 'its email is the one the files give worker["ENG-001"]' in left.why
    assert 'worker["ENG-009"]' in {item.address for item in adoption.adopted}


def test_workers_added_to_a_file_without_a_list_get_one_list(tmp_path: Path) -> None:
    text = "version: 1\nscope:\n  externalIdPrefix: ENG-  # ours\n"
    live = (agreement(3, "ENG-003"), agreement(9, "ENG-009"))
    (change,) = _propose(tmp_path, text, live).files
    assert change.after.startswith(text + "workers:\n  - externalId: ENG-003\n")
    assert change.after.count("workers:") == 1 and "  - externalId: ENG-009\n" in change.after
    (tmp_path / "state.yaml").write_text(change.after)
    assert len(load_desired_state(tmp_path / "state.yaml").workers) == 2
