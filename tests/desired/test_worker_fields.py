"""A worker's fields are declared once (`reconciler.worker_fields`): the models, the shipped
schema and the table agree, and a field added to the table alone is validated, compared,
sent, saved, fingerprinted, exported and adopted."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from reconciler import worker_fields
from reconciler.adopt import propose
from reconciler.apply.schedule import invitation_for
from reconciler.desired import InvalidDesiredState, load_desired_state
from reconciler.desired.model import DesiredWorker
from reconciler.desired.schema import worker_definition
from reconciler.export import ExportOptions, render_export
from reconciler.plan import diff
from reconciler.plan.account import Account
from reconciler.plan.fingerprint import worker_fingerprint
from reconciler.plan.model import LiveState
from reconciler.plan.resume import resume
from reconciler.plan.review import Review
from reconciler.plan.saved import (
    InvalidSavedPlan,
    load_saved_plan,
    saved_plan_document,
    write_saved_plan,
)
from reconciler.plan.signing import PlanKey
from reconciler.service import decode
from reconciler.service.encode import invitation_body
from reconciler.service.models import Invitation, Worker
from reconciler.worker_fields import WORKER_FIELDS, Compare, Value, WorkerField

ROOT = Path(__file__).resolve().parents[2]


def test_the_shipped_schema_says_what_the_table_says() -> None:
    """`schemas/desired-state.schema.json` spells the fields for editors, with descriptions
    and examples; its keys, required keys and `ignoreChanges` names are the table's."""
    shipped = json.loads((ROOT / "schemas" / "desired-state.schema.json").read_text("utf-8"))
    worker = shipped["$defs"]["worker"]
    assert worker == worker_definition(WORKER_FIELDS)
    for item in WORKER_FIELDS:
        known = worker["properties"][item.key]
        assert {key: known.get(key) for key in item.schema} == dict(item.schema), item.key


def test_the_models_hold_the_tables_attributes() -> None:
    def attributes(model: type) -> set[str]:
        return {item.name for item in dataclasses.fields(model)}

    wanted = {item.attribute for item in WORKER_FIELDS if item.attribute}
    assert wanted <= attributes(DesiredWorker)
    sent = {item.attribute for item in WORKER_FIELDS if item.attribute and item.sent}
    assert sent == attributes(Invitation) - {"more"}
    live = {item.live_attribute for item in WORKER_FIELDS if item.live_attribute}
    assert live <= attributes(Worker)
    assert all(item.live_rank for item in WORKER_FIELDS if item.live)


# --- a made-up field, added in the table only ----------------------------------------------

TEAM = WorkerField("workerTeam", None, "team", None, live_rank=8, compare=Compare.TEXT)

FILE = (
    "version: 1\n"
    "workers:\n"
    "  - externalId: ENG-001\n"
    "    typeOfWorker: Worker\n"
    "    workerName: Ada\n"
    "    workerSurname: Lovelace\n"
    "    workerEmail: eng-001@example.com\n"
    "    countryIso: GB\n"
    "    workerTeam: Core\n"
)


def _live(agreement_id: int, external_id: str, team: str | None) -> Worker:
    """A worker as the service's list shows it, decoded as a refresh does."""
    return decode.worker(
        {
            "agreementId": agreement_id,
            "firstName": "Ada",
            "lastName": "Lovelace",
            "email": f"{external_id.lower()}@example.com",
            "jobTitle": None,
            "country": "United Kingdom",
            "externalId": external_id,
            "workerCreationDate": "2025-03-14T09:26:53.000+00:00",
            "status": "ACTIVE",
            "team": team,
        }
    )


@pytest.fixture
def team(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_fields, "WORKER_FIELDS", WORKER_FIELDS.adding(TEAM))


@pytest.mark.usefixtures("team")
def test_a_field_in_the_table_is_validated(tmp_path: Path) -> None:
    path = tmp_path / "workers.yaml"
    path.write_text(FILE, encoding="utf-8")
    worker = load_desired_state(path).workers[0]
    assert worker.more == (("workerTeam", "Core"),)
    assert worker.as_fields()["workerTeam"] == "Core"

    cases = {
        "workerTeam: Core\n": None,
        'workerTeam: "Co\\u0007re"\n': "workerTeam holds the control character U+0007",
        "workerTeam: '  '\n": "workerTeam must not be empty or blank",
        "workerTeem: Core\n": "(did you mean 'workerTeam'?)",
    }
    for line, expected in cases.items():
        path.write_text(FILE.replace("workerTeam: Core\n", line), encoding="utf-8")
        if expected is None:
            load_desired_state(path)
            continue
        with pytest.raises(InvalidDesiredState) as refused:
            load_desired_state(path)
        assert expected in str(refused.value), (line, str(refused.value))


@pytest.mark.usefixtures("team")
def test_a_field_in_the_table_is_compared_sent_and_saved(tmp_path: Path) -> None:
    path = tmp_path / "workers.yaml"
    path.write_text(FILE, encoding="utf-8")
    desired = load_desired_state(path)
    live = _live(1, "ENG-001", "Platform")
    assert live.more == (("workerTeam", "Platform"),)

    plan = diff(desired, LiveState(workers=(live,)))
    (drift,) = plan.drift
    assert [(f.name, f.before, f.after) for f in drift.fields] == [
        ("workerTeam", "Platform", "Core")
    ]
    assert drift.before is not None and drift.before["workerTeam"] == "Platform"
    assert diff(desired, LiveState(workers=(_live(1, "ENG-001", "Core"),))).drift == ()
    assert diff(desired, LiveState(workers=(_live(1, "ENG-001", None),))).drift != ()

    path.write_text(FILE + "    ignoreChanges: [workerTeam]\n", encoding="utf-8")
    assert diff(load_desired_state(path), LiveState(workers=(live,))).drift == ()

    (invite,) = diff(desired, LiveState(workers=())).changes
    assert invitation_body(invitation_for(desired.workers[0]))["workerTeam"] == "Core"
    assert invite.after is not None and invite.after["workerTeam"] == "Core"
    saved = tmp_path / "plan.out"
    key = PlanKey(b"tok-Zk4r9Qm2Xv7Lp0Wn5Bt8", "RECONCILER_PLAN_KEY")
    created = datetime.now(UTC)
    document = saved_plan_document(
        diff(desired, LiveState(workers=())),
        LiveState(workers=()),
        key=key,
        account=Account.of("https://api.example.com", 7, None),
        review=Review("hmac-sha256:" + "ab" * 32, 42, "9fceb02d0ae598e95dc970b74767f19372d61af8"),
        created_at=created,
        tool_version="1.2.3",
        scope_prefix=None,
    )
    write_saved_plan(saved, document)
    resumed = resume(load_saved_plan(saved), LiveState(workers=()), key=key, environ={})
    assert resumed.changes == (invite,)
    damaged = json.loads(saved.read_text(encoding="utf-8"))
    damaged["changes"][0]["worker"]["workerTeam"] = 7
    saved.write_text(json.dumps(damaged), encoding="utf-8")
    with pytest.raises(InvalidSavedPlan, match="changes/0/worker/workerTeam"):
        load_saved_plan(saved)

    secret = b"k" * 32
    changed = _live(1, "ENG-001", "X")
    assert worker_fingerprint([live], secret) != worker_fingerprint([changed], secret)


@pytest.mark.usefixtures("team")
def test_a_field_in_the_table_is_exported_and_adopted(tmp_path: Path) -> None:
    live = LiveState(workers=(_live(1, "ENG-001", "Platform"), _live(2, "ENG-002", "Data")))
    (exported,) = render_export(live, ExportOptions()).files
    assert "    countryIso: GB\n    workerTeam: Platform\n" in exported.text
    assert "    workerTeam: Data\n" in exported.text
    path = tmp_path / "exported.yaml"
    path.write_text(exported.text, encoding="utf-8")
    assert diff(load_desired_state(path), live).drift == ()

    path.write_text(FILE, encoding="utf-8")
    desired = load_desired_state(path)
    adoption = propose([(str(path), FILE)], diff(desired, live), live, desired.scope_prefix)
    (change,) = adoption.files
    assert "    workerTeam: Platform\n" in change.after
    assert "  - externalId: ENG-002\n" in change.after
    assert "    workerTeam: Data\n" in change.after
    path.write_text(change.after, encoding="utf-8")
    assert diff(load_desired_state(path), live).drift == ()


# --- a field's value, read as its row says ---------------------------------------------------


def test_the_reader_converts_each_value_as_its_row_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pay` is read as an amount of two places and `ended` and `rehire` as days, by the one
    compiled reader, as the table's rows say (`WorkerField.value`), the file's text and YAML's
    own values alike; a table whose `ended` row says text keeps it as written."""
    assert {item.key: item.value for item in WORKER_FIELDS if item.value is not Value.TEXT} == {
        "pay": Value.AMOUNT,
        "ended": Value.DAY,
        "rehire": Value.DAY,
    }
    path = tmp_path / "workforce.yaml"
    path.write_text(
        FILE.replace("    workerTeam: Core\n", '    pay: "7400.5"\n    ended: 2026-11-30\n')
    )
    (worker,) = load_desired_state(path).workers
    assert (worker.pay, worker.ended, worker.rehire) == (
        Decimal("7400.50"),
        date(2026, 11, 30),
        None,
    )
    assert str(worker.pay) == "7400.50"
    fields = {**worker.as_fields(), "pay": 12, "rehire": date(2027, 1, 4)}
    again = DesiredWorker.from_fields(fields)  # a saved plan's fields, and YAML's own values
    assert (again.pay, again.ended, again.rehire) == (
        Decimal("12.00"),
        date(2026, 11, 30),
        date(2027, 1, 4),
    )
    assert DesiredWorker.from_fields(worker.as_fields()) == worker

    as_text = tuple(
        dataclasses.replace(item, value=Value.TEXT) if item.key == "ended" else item
        for item in WORKER_FIELDS
    )
    monkeypatch.setattr(worker_fields, "WORKER_FIELDS", worker_fields.WorkerFields(as_text))
    assert DesiredWorker.from_fields(fields).ended == "2026-11-30"
    with pytest.raises(ValueError, match="a field without an attribute is text"):
        WorkerField("workerStart", None, None, value=Value.DAY)
