"""`reconciler plan` and `reconciler drift` end to end: a subprocess against the sandbox."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from jsonschema import Draft202012Validator

from reconciler.sandbox import SandboxServer
from tests.cli import reconciler as run

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart.yaml"
SCHEMA = json.loads((ROOT / "schemas" / "plan.schema.json").read_text())


@pytest.fixture(scope="module")
def demo() -> Iterator[SandboxServer]:
    """The quickstart's demo account; plan and drift only read, so one serves the module."""
    with SandboxServer(seed=ROOT / "examples" / "sandbox-seed.yaml") as server:
        yield server


def requests_since(server: SandboxServer, since: int) -> list[dict[str, object]]:
    answer = httpx.get(f"{server.base_url}/_sandbox/requests", params={"since": since})
    answer.raise_for_status()
    return answer.json()


def last_seq(server: SandboxServer) -> int:
    entries = requests_since(server, 0)
    return int(entries[-1]["seq"]) if entries else 0


def write(tmp_path: Path, text: str, name: str = "workers.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


IN_SYNC_BUT_DRIFTED = """\
version: 1
scope:
  externalIdPrefix: "ENG-"
workers:
  - {externalId: ENG-001, typeOfWorker: Worker, workerName: Ada, workerSurname: Lovelace,
     workerEmail: ada@example.com, countryIso: GB, jobTitle: Engineer}
  - {externalId: ENG-002, typeOfWorker: Worker, workerName: Grace, workerSurname: Hopper,
     workerEmail: grace@example.com, countryIso: US, jobTitle: Staff Engineer}
  - {externalId: ENG-003, typeOfWorker: Worker, workerName: Alan, workerSurname: Turing,
     workerEmail: alan@example.com, countryIso: GB}
  - {externalId: ENG-005, typeOfWorker: Business, workerLegalName: Acme Consulting Ltd,
     workerName: Wile, workerSurname: Coyote, workerEmail: acme@example.com, countryIso: US}
  - {externalId: ENG-006, typeOfWorker: Worker, workerName: Edsger, workerSurname: Dijkstra,
     workerEmail: edsger@example.com, countryIso: NL}
webhook:
  url: https://hooks.example.com/workforce
  event_types: [KYC]
"""


def test_plan_shows_the_quickstart_and_only_reads(demo: SandboxServer) -> None:
    since = last_seq(demo)
    result = run("plan", str(QUICKSTART), server=demo)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert '  + worker["ENG-004"] {' in out
    assert '  - worker["ENG-006"] {' in out
    assert '      ~ event_types: ["KYC"] -> ["KYC", "PAYMENT"]' in out
    assert '  ~ worker["ENG-002"]' in out and '~ jobTitle: "Engineer" -> "Staff Engineer"' in out
    assert "Unmanaged: 2 open agreements" in out
    assert "Plan: 1 to invite, 1 to inactivate, 1 to update, 1 drifted, 2 unmanaged." in out
    assert "Apply would send 1 invitation e-mail." in out
    assert "ENG-001" not in out and "ENG-003" not in out and "ENG-005" not in out
    assert result.stderr == ""
    methods = {entry["method"] for entry in requests_since(demo, since)}
    assert methods == {"GET"}


@pytest.mark.parametrize(
    ("args", "status"),
    [
        (["plan"], 0),
        (["plan", "--detailed-exitcode"], 2),
        (["drift"], 2),
    ],
)
def test_exit_status_with_changes(demo: SandboxServer, args: list[str], status: int) -> None:
    result = run(*args, str(QUICKSTART), server=demo)
    assert result.returncode == status, result.stderr


@pytest.mark.parametrize(
    ("args", "status"),
    [
        (["plan", "--detailed-exitcode"], 0),  # drift alone is no change to plan
        (["drift"], 2),  # but it is what drift reports
    ],
)
def test_drift_alone(demo: SandboxServer, tmp_path: Path, args: list[str], status: int) -> None:
    path = write(tmp_path, IN_SYNC_BUT_DRIFTED)
    result = run(*args, str(path), server=demo)
    assert result.returncode == status, result.stdout + result.stderr
    assert "1 drifted" in result.stdout and "0 to invite, 0 to inactivate" in result.stdout


@pytest.mark.parametrize(("strict", "status"), [(False, 0), (True, 2)])
def test_drift_strict_counts_unmanaged_workers(
    demo: SandboxServer, tmp_path: Path, strict: bool, status: int
) -> None:
    in_sync = IN_SYNC_BUT_DRIFTED.replace("jobTitle: Staff Engineer", "jobTitle: Engineer")
    path = write(tmp_path, in_sync)
    result = run("drift", str(path), *(["--strict"] if strict else []), server=demo)
    assert result.returncode == status, result.stdout + result.stderr
    assert "No changes" in result.stdout and "2 unmanaged" in result.stdout


@pytest.mark.parametrize("command", ["plan", "drift"])
def test_json_output_matches_the_schema(demo: SandboxServer, command: str) -> None:
    result = run(command, str(QUICKSTART), "--format", "json", server=demo)
    document = json.loads(result.stdout)
    assert list(Draft202012Validator(SCHEMA).iter_errors(document)) == []
    assert document["summary"]["invite"] == 1
    assert {u["workerEmail"] for u in document["unmanaged"]} == {
        "freelance@example.com",
        "linus@example.com",
    }


def test_markdown_output(demo: SandboxServer) -> None:
    first = run("plan", str(QUICKSTART), "--format", "markdown", server=demo)
    again = run("plan", str(QUICKSTART), "--format", "markdown", server=demo)
    assert first.returncode == 0
    assert first.stdout.startswith("### reconciler plan")
    assert "> :warning: **1 worker would be inactivated.**" in first.stdout
    assert first.stdout == again.stdout


def test_options_narrow_and_bend_the_plan(demo: SandboxServer) -> None:
    result = run(
        "plan",
        str(QUICKSTART),
        "--target",
        "ENG-002",
        "--target",
        "ENG-006",
        "--exclude",
        "ENG-006",
        "--replace",
        "ENG-002",
        "--show-unmanaged",
        server=demo,
    )
    assert result.returncode == 0, result.stderr
    assert '  -/+ worker["ENG-002"] {' in result.stdout
    assert "ENG-004" not in result.stdout and "ENG-006" not in result.stdout
    assert "webhook" not in result.stdout
    assert '"freelance@example.com"' in result.stdout  # listed, not only counted
    assert "Plan: 0 to invite, 0 to inactivate, 1 to replace" in result.stdout


def test_out_saves_a_plan_apply_can_tell_by_content(demo: SandboxServer, tmp_path: Path) -> None:
    saved = tmp_path / "changes.plan"
    result = run("plan", str(QUICKSTART), "--out", str(saved), server=demo)
    assert result.returncode == 0, result.stderr
    assert f"Saved the plan to {saved}" in result.stderr
    document = json.loads(saved.read_text())
    assert document["format"] == "reconciler-plan"
    assert [c["action"] for c in document["changes"]] == ["invite", "inactivate", "webhook_update"]


def test_an_invalid_file_is_reported_before_any_write(demo: SandboxServer, tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nworkers:\n  - externalId: ENG-1\n    countryIso: XX\n")
    since = last_seq(demo)
    result = run("plan", str(path), server=demo)
    assert result.returncode == 1
    assert result.stdout == ""
    assert "workers.yaml:3" in result.stderr and "Traceback" not in result.stderr
    # The refresh starts while the file is loaded (it may have read a page), and is stopped.
    assert all(entry["method"] == "GET" for entry in requests_since(demo, since))


def test_a_bad_token_is_a_clear_error(demo: SandboxServer) -> None:
    result = run("drift", str(QUICKSTART), server=demo, token="not-a-valid-token-at-all")
    assert result.returncode == 1
    assert result.stderr.startswith("Error:") and "Traceback" not in result.stderr


def test_the_readme_command_plans_the_embedded_sandbox(tmp_path: Path) -> None:
    db = tmp_path / "sandbox.db"
    result = run("plan", "--sandbox", "--sandbox-db", str(db), str(QUICKSTART))
    assert result.returncode == 0, result.stderr
    assert "Plan: 1 to invite, 1 to inactivate, 1 to update, 1 drifted, 2 unmanaged." in (
        result.stdout
    )


def test_the_refresh_reads_every_status_and_no_webhook_means_create(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    headers = {"Authorization": f"Bearer {sandbox.token}"}
    invited = httpx.post(
        f"{sandbox.base_url}/contract/workers/inviteWorkersBulkLocked",
        headers=headers,
        json=[
            {
                "workerName": "Ada",
                "workerSurname": "Lovelace",
                "typeOfWorker": "Worker",
                "workerEmail": "ada@example.com",
                "countryIso": "GB",
                "externalId": "ENG-001",
            }
        ],
    )
    invited.raise_for_status()
    agreement_id = invited.json()[0]["agreementId"]
    inactivated = httpx.post(
        f"{sandbox.base_url}/contract-server/v2/general/worker/agreements/{agreement_id}/status",
        headers=headers,
        json={"status": "inactivated"},
    )
    inactivated.raise_for_status()
    path = write(
        tmp_path,
        'version: 1\nscope:\n  externalIdPrefix: "ENG-"\nworkers:\n'
        "  - {externalId: ENG-001, typeOfWorker: Worker, workerName: Ada,\n"
        "     workerSurname: Lovelace, workerEmail: ada@example.com, countryIso: GB}\n"
        "webhook:\n  url: https://hooks.example.com/h\n  event_types: [KYC]\n",
    )
    # Closed in the service: not invited again by surprise (issue 48); --replace asks it.
    closed = run("plan", str(path), server=sandbox)
    assert "will be invited" not in closed.stdout and "closed in the service" in closed.stdout
    result = run("plan", str(path), "--detailed-exitcode", "--replace", "ENG-001", server=sandbox)
    assert result.returncode == 2, result.stderr
    assert (
        f'  # worker["ENG-001"] will be invited (past agreement: {agreement_id} INACTIVATED)'
        in result.stdout
    )
    assert "  # webhook will be created" in result.stdout
    assert "Plan: 1 to invite, 0 to inactivate, 1 to create, 0 to update" in result.stdout
