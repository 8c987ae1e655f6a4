"""A worker HR ended in the service's own screens, end to end over real HTTP (issue 48).

A managed worker with no open agreement and a closed one is "closed in the service": plan,
apply and drift report it risk first and never invite it again by surprise; `rehire:` invites it
once, `ended:` acknowledges the end (and offboards an open agreement from git); `adopt` writes
`ended:` for it, one line, though a paid payrun names it.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from reconciler.plan.refresh import refresh
from reconciler.plan.resume import resume
from reconciler.plan.saved import load_saved_plan
from reconciler.plan.signing import PlanKey
from reconciler.render.json import plan_document
from reconciler.sandbox import SandboxServer
from tests.apply.support import cli
from tests.cli import reconciler
from tests.plan.test_plan_cli import SCHEMA as PLAN_SCHEMA
from tests.service.helpers import client_for, invitation

SETTINGS = """\
version: 1
scope:
  externalIdPrefix: "CW-"
policy:
  prune: true
"""

ADA = """\
  - externalId: CW-0001
    typeOfWorker: Worker
    workerName: Ada
    workerSurname: Lovelace
    workerEmail: ada@example.com
    countryIso: GB
"""

BARBARA = """\
  - externalId: CW-0010
    typeOfWorker: Worker
    workerName: Barbara
    workerSurname: Liskov
    workerEmail: barbara@example.com
    countryIso: US
"""

DECEMBER = """\
payruns:
  - id: 2026-12-contractors
    description: December 2026 contractors
    payments:
      - {worker: CW-0001, amount: "1000.00", description: December 2026 retainer}
      - {worker: CW-0010, amount: "500.00", description: December 2026 retainer}
"""


@pytest.fixture
def account(tmp_path: Path) -> Iterator[SandboxServer]:
    with SandboxServer(db=tmp_path / "sandbox.db", process_delay_ms=0) as server:
        yield server


def _run(*args: str, server: SandboxServer) -> Any:
    return cli(*args, server=server, RECONCILER_CLIENT_ID=str(server.client_id))


def _write(tmp_path: Path, workers: str, extra: str = "") -> Path:
    path = tmp_path / "workforce.yaml"
    path.write_text(SETTINGS + "workers:\n" + workers + extra)
    return path


def _agreements(server: SandboxServer, external_id: str) -> list[dict[str, Any]]:
    headers = {"Authorization": f"Bearer {server.token}"}
    with httpx.Client(base_url=server.base_url, headers=headers, timeout=30) as api:
        listed = api.get("/contract/workers/list", params={"size": 100}).json()["content"]
    return [worker for worker in listed if worker["externalId"] == external_id]


def _move(server: SandboxServer, agreement_id: int, status: str) -> None:
    moved = httpx.post(
        f"{server.base_url}/_sandbox/agreements/{agreement_id}/status", json={"status": status}
    )
    assert moved.status_code == 200, moved.text


def _onboarded(server: SandboxServer, path: Path) -> None:
    """Every worker of `path` invited by an apply, then ACTIVE (the workers answered)."""
    applied = _run("apply", str(path), "--auto-approve", server=server)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    for external_id in ("CW-0001", "CW-0010"):
        for worker in _agreements(server, external_id):
            _move(server, worker["agreementId"], "ACTIVE")


def _made_days_ago(server: SandboxServer, agreement_id: int, days: int) -> None:
    """Date an agreement's creation back, as if HR's contract were an old one."""
    created = datetime.now(UTC) - timedelta(days=days)
    with sqlite3.connect(server.db) as db:
        db.execute(
            "UPDATE agreements SET created_ns = ? WHERE id = ?",
            (int(created.timestamp() * 1e9), agreement_id),
        )


def _ended_in_the_service(server: SandboxServer) -> int:
    """HR ends Barbara's contract in the service's screens: her one agreement, ENDED."""
    (agreement,) = _agreements(server, "CW-0010")
    _move(server, agreement["agreementId"], "ENDED")
    return int(agreement["agreementId"])


def test_a_worker_ended_in_the_service_is_not_invited_and_rehire_invites_it_once(
    account: SandboxServer, tmp_path: Path
) -> None:
    path = _write(tmp_path, ADA + BARBARA)
    _onboarded(account, path)
    ended = _ended_in_the_service(account)

    planned = _run("plan", str(path), "--detailed-exitcode", server=account)
    assert planned.returncode == 0, planned.stdout + planned.stderr  # nothing to apply
    assert "will be invited" not in planned.stdout
    assert (
        f'  ! worker["CW-0010"]: closed in the service (agreement {ended} ENDED): not invited '
        "again" in planned.stdout
    )
    assert "Review first: 1 closed in the service." in planned.stdout
    document = json.loads(_run("plan", str(path), "--format", "json", server=account).stdout)
    jsonschema.validate(document, PLAN_SCHEMA)
    assert [c["address"] for c in document["closed_in_service"]] == ['worker["CW-0010"]']
    assert document["summary"]["create"] == 0 and document["resource_changes"] == []
    comment = _run("plan", str(path), "--format", "markdown", server=account).stdout
    assert comment.index("Closed in the service") < comment.index("worker[")
    drift = _run("drift", str(path), server=account)
    assert drift.returncode == 2 and "closed in the service" in drift.stdout
    # The pull request's comment is made from the saved plan: it keeps the finding.
    saved = tmp_path / "plan.json"
    assert _run("plan", str(path), "--out", str(saved), server=account).returncode == 0
    commented = _run("comment", str(saved), server=account)
    assert commented.returncode == 0, commented.stderr
    assert f'worker["CW-0010"]: closed in the service (agreement {ended} ENDED)' in (
        commented.stdout
    )

    applied = _run("apply", str(path), "--auto-approve", server=account)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert [a["status"] for a in _agreements(account, "CW-0010")] == ["ENDED"]  # no e-mail

    # Hired again today: the old contract is older, so `rehire:` invites her once.
    _made_days_ago(account, ended, 30)
    today = datetime.now(UTC).date().isoformat()
    path = _write(tmp_path, ADA + BARBARA + f"    rehire: {today}\n")
    assert _run("validate", str(path), server=account).returncode == 0
    planned = _run("plan", str(path), server=account)
    assert (
        f'  # worker["CW-0010"] will be invited (past agreement: {ended} ENDED)' in planned.stdout
    )
    applied = _run("apply", str(path), "--auto-approve", server=account)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    statuses = sorted(a["status"] for a in _agreements(account, "CW-0010"))
    assert statuses == ["ENDED", "INVITATION_SENT"]

    # She leaves again: the marker is spent (an agreement made on or after that day exists).
    again = max(a["agreementId"] for a in _agreements(account, "CW-0010"))
    _move(account, again, "ENDED")
    planned = _run("plan", str(path), server=account)
    assert "will be invited" not in planned.stdout
    assert f"rehire: {today} is spent" in planned.stdout
    applied = _run("apply", str(path), "--auto-approve", server=account)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert len(_agreements(account, "CW-0010")) == 2  # invited once, never twice


def test_adopt_takes_a_termination_a_paid_payrun_names_and_validate_and_plan_are_clean(
    account: SandboxServer, tmp_path: Path
) -> None:
    _onboarded(account, _write(tmp_path, ADA + BARBARA))
    path = _write(tmp_path, ADA + BARBARA, DECEMBER)
    paid = _run("apply", str(path), "--auto-approve", server=account)  # December is paid
    assert paid.returncode == 0, paid.stdout + paid.stderr
    ended = _ended_in_the_service(account)
    before = path.read_text()

    dry = _run("adopt", str(path), "--dry-run", server=account)
    assert dry.returncode == 2, dry.stdout + dry.stderr
    assert path.read_text() == before
    adopted = _run("adopt", str(path), server=account)
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    today = datetime.now(UTC).date().isoformat()
    after = path.read_text()
    # One line, under Barbara's item; the payrun that names her is untouched.
    assert after == before.replace(
        "    countryIso: US\n", f'    countryIso: US\n    ended: "{today}"\n'
    )
    assert f'worker["CW-0010"]: agreement {ended} is ENDED in the service' in adopted.stderr

    assert _run("validate", str(path), server=account).returncode == 0
    planned = _run("plan", str(path), "--detailed-exitcode", server=account)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert "closed in the service" not in planned.stdout
    assert "No changes. The account matches the file." in planned.stdout
    assert _run("drift", str(path), server=account).returncode == 0


def test_ended_with_an_open_agreement_inactivates_it(
    account: SandboxServer, tmp_path: Path
) -> None:
    path = _write(tmp_path, ADA + BARBARA)
    _onboarded(account, path)
    path = _write(tmp_path, ADA + BARBARA + "    ended: 2026-11-30\n")
    planned = _run("plan", str(path), server=account)
    assert '  # worker["CW-0010"] will be inactivated (ended: 2026-11-30 in the file)' in (
        planned.stdout
    )
    applied = _run("apply", str(path), "--auto-approve", server=account)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert [a["status"] for a in _agreements(account, "CW-0010")] == ["INACTIVATED"]
    planned = _run("plan", str(path), "--detailed-exitcode", server=account)
    assert planned.returncode == 0 and "No changes." in planned.stdout


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ("    ended: 2026-02-30\n", "ended '2026-02-30' is not a day of the calendar"),
        ("    rehire: 2027-13-01\n", "rehire '2027-13-01' is not a day of the calendar"),
        ("    ended: 2026-11-30\n    rehire: 2027-01-04\n", "both ended and rehire"),
    ],
)
def test_a_worker_s_days_are_checked_at_their_line(
    tmp_path: Path, lines: str, message: str
) -> None:
    path = _write(tmp_path, ADA + BARBARA + lines)
    result = reconciler("validate", str(path))
    assert result.returncode == 1
    line = (SETTINGS + "workers:\n" + ADA + BARBARA).count("\n") + lines.count("\n")
    assert f"workforce.yaml:{line}:" in result.stdout + result.stderr
    assert message in result.stdout + result.stderr


def test_an_unpaid_payrun_paying_an_ended_worker_is_refused(
    account: SandboxServer, tmp_path: Path
) -> None:
    _onboarded(account, _write(tmp_path, ADA + BARBARA))
    path = _write(tmp_path, ADA + BARBARA + "    ended: 2026-11-30\n", DECEMBER)
    planned = _run("plan", str(path), server=account)
    said = " ".join(planned.stdout.split())
    assert 'paylist["2026-12-contractors"] is refused, nothing is paid' in said, said
    assert "payment 2 (500.00 to barbara@example.com)" in said
    assert 'worker["CW-0010"] will be inactivated (ended: 2026-11-30 in the file)' in said


def test_a_resumed_plan_carries_the_workers_closed_and_made_in_the_service(
    account: SandboxServer, tmp_path: Path
) -> None:
    """A saved plan keeps both findings of the service's screens: its JSON names the worker
    closed in the service as the fresh plan's does, and its comment says which invitation HR
    made in the service, as the fresh comment does."""
    repo = tmp_path / "repo"
    repo.mkdir()
    path = _write(repo, ADA + BARBARA)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "Ada and Barbara"]):
        subprocess.run([*git, *args], cwd=repo, check=True, capture_output=True)
    _onboarded(account, path)
    ended = _ended_in_the_service(account)
    with client_for(account) as client:  # HR invites CW-0020 in the service's screens
        client.invite_workers([invitation(20, external_id="CW-0020")])
    key = {
        "RECONCILER_PLAN_KEY": "closed-in-service-plan-key-0123456789",
        "RECONCILER_CLIENT_ID": str(account.client_id),
    }
    fresh = json.loads(_run("plan", str(path), "--format", "json", server=account).stdout)
    made = next(line for line in fresh["warnings"] if "was made in the service" in line)
    assert made.startswith('worker["CW-0020"]')
    saved = tmp_path / "plan.json"
    planned = cli("plan", str(path), "--out", str(saved), server=account, **key)
    assert planned.returncode == 0, planned.stdout + planned.stderr

    commented = cli("comment", str(saved), server=account, **key)
    assert commented.returncode == 0, commented.stderr
    assert made in " ".join(commented.stdout.split())
    assert f'worker["CW-0010"]: closed in the service (agreement {ended} ENDED)' in (
        commented.stdout
    )
    with client_for(account) as client:
        live = refresh(client)
    plan_key = PlanKey(key["RECONCILER_PLAN_KEY"].encode(), "RECONCILER_PLAN_KEY")
    resumed = resume(load_saved_plan(saved, plan_key), live, key=plan_key, environ={})
    document = plan_document(resumed)
    jsonschema.validate(document, PLAN_SCHEMA)
    assert document["closed_in_service"] == fresh["closed_in_service"]
    assert [c["externalId"] for c in document["closed_in_service"]] == ["CW-0010"]
    assert made in document["warnings"]
