"""`reconciler export` end to end: a subprocess against a sandbox account of 300 workers.

The account has every status, businesses, values YAML would misread, workers with no
externalId or outside the scope, unanswered invitations, a person invited again after an ended
agreement, and a webhook with secret headers. Export, fill the placeholders as a person would,
then `validate` and `plan` must agree that nothing is left to change.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
import yaml
from click.testing import CliRunner, Result

from reconciler.cli import main
from reconciler.export import PLACEHOLDER
from reconciler.export.model import SCHEMA_ID
from reconciler.sandbox import SandboxServer
from tests.cli import reconciler as run
from tests.export.support import fill, placeholder_lines
from tests.sandbox.support import Controls, service_client

ROOT = Path(__file__).resolve().parents[2]
SIZE = 300
SECRET = "hdr-Zq7Lw2Vx9Kp4Nm8R"  # a webhook header value: must never be written or printed
HEADER_VARIABLES = {
    "WEBHOOK_HEADER_X_WEBHOOK_TOKEN": SECRET,
    "WEBHOOK_HEADER_X_ENV": "prod-7",
    "WEBHOOK_URL": "https://hooks.example.com/workforce",  # a path: it may be the credential
}
COUNTRIES = ["GB", "US", "NL", "NO", "DE", "KR"]
JOB_TITLES = ["Engineer", "no", "1e3", "Staff: Lead #1", None, "*star", "Ingénieur"]
# Status of worker i by i % 6: unanswered, pending, active twice, ended, inactivated.
STATUSES = ["INVITATION_SENT", "VERIFICATION_PENDING", "ACTIVE", "ACTIVE", "ENDED", "INACTIVATED"]


@dataclass(frozen=True)
class Account:
    server: SandboxServer
    unanswered: int  # open, owned, names not shown yet
    owned_open: int
    unmanaged: int  # open, no externalId
    outside_scope: int  # open, externalId not starting ENG-


def external_id(number: int) -> str | None:
    if number % 15 == 0:
        return None
    return f"OPS-{number:04d}" if number % 7 == 0 else f"ENG-{number:04d}"


def invitation(number: int) -> dict[str, Any]:
    item: dict[str, Any] = {
        "workerName": ["Ada", "Zoë", "Yes", "null"][number % 4],
        "workerSurname": f"Worker{number}",
        "typeOfWorker": "Worker",
        "workerEmail": f"w{number}@example.com",
        "countryIso": COUNTRIES[number % len(COUNTRIES)],
    }
    if number % 11 == 0:
        item |= {"typeOfWorker": "Business", "workerLegalName": f"Firm {number} Ltd"}
    if JOB_TITLES[number % len(JOB_TITLES)] is not None:
        item["jobTitle"] = JOB_TITLES[number % len(JOB_TITLES)]
    if external_id(number) is not None:
        item["externalId"] = external_id(number)
    return item


def build_account(server: SandboxServer, *, answered: bool) -> Account:
    """Invite SIZE workers and move each to its status; `answered`: nobody left unanswered."""
    controls = Controls(server.base_url)
    controls.reset()
    items = [invitation(number) for number in range(SIZE)]
    with service_client(server.base_url, server.token) as api:
        created: list[dict[str, Any]] = []
        for start in range(0, SIZE, 100):
            answer = api.post("/contract/workers/inviteWorkersBulkLocked", json=items[start:][:100])
            assert answer.status_code == 200, answer.text
            created += answer.json()
        for number, result in enumerate(created):
            status = STATUSES[number % 6]
            if answered and status == "INVITATION_SENT":
                status = "ACTIVE"
            if status == "INACTIVATED":
                path = (
                    f"/contract-server/v2/general/worker/agreements/{result['agreementId']}/status"
                )
                assert api.post(path, json={"status": "inactivated"}).status_code == 200
            elif status != "INVITATION_SENT":
                controls.move_agreement(result["agreementId"], status)
        # Ended, then invited again: the open agreement is the one exported.
        again = [item for number, item in enumerate(items) if STATUSES[number % 6] == "ENDED"][:5]
        answer = api.post("/contract/workers/inviteWorkersBulkLocked", json=again)
        assert answer.status_code == 200, answer.text
        if answered:
            for result in answer.json():
                controls.move_agreement(result["agreementId"], "ACTIVE")
        webhook = {
            "url": "https://hooks.example.com/workforce",
            "headers": [
                {"name": "X-Webhook-Token", "value": SECRET},
                {"name": "X-Env", "value": "prod-7"},
            ],
            "event_types": ["KYC", "PAYMENT"],
        }
        assert api.post("/webhooks/clients", json=webhook).status_code == 201
    controls.close()
    open_numbers = [n for n in range(SIZE) if STATUSES[n % 6] not in ("ENDED", "INACTIVATED")]
    reinvited = [item.get("externalId") for item in again]
    ids = [external_id(n) for n in open_numbers] + reinvited
    unanswered = [n for n in open_numbers if STATUSES[n % 6] == "INVITATION_SENT" and not answered]
    return Account(
        server=server,
        unanswered=sum(1 for n in unanswered if (external_id(n) or "").startswith("ENG-"))
        + (0 if answered else sum(1 for i in reinvited if (i or "").startswith("ENG-"))),
        owned_open=sum(1 for i in ids if (i or "").startswith("ENG-")),
        unmanaged=sum(1 for i in ids if i is None),
        outside_scope=sum(1 for i in ids if (i or "").startswith("OPS-")),
    )


@pytest.fixture(scope="module")
def account() -> Iterator[Account]:
    """The 300-worker account with unanswered invitations; the tests using it only read."""
    with SandboxServer() as server:
        yield build_account(server, answered=False)


def assert_no_changes(plan: subprocess.CompletedProcess[str]) -> None:
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert "0 to invite, 0 to inactivate, 0 to update, 0 drifted" in plan.stdout, plan.stdout


def sandbox_methods(server: SandboxServer, since: int) -> set[str]:
    answer = httpx.get(f"{server.base_url}/_sandbox/requests", params={"since": since})
    return {entry["method"] for entry in answer.json()}


def last_seq(server: SandboxServer) -> int:
    entries = httpx.get(f"{server.base_url}/_sandbox/requests").json()
    return int(entries[-1]["seq"]) if entries else 0


# --- the account with unanswered invitations ---------------------------------------------------


def test_export_fill_validate_plan_shows_no_changes(account: Account, tmp_path: Path) -> None:
    out = tmp_path / "workers.yaml"
    (tmp_path / ".git").mkdir()  # a repository of the user's own, outside this checkout
    schema = run("schema", "--out", "schemas/desired-state.schema.json", cwd=tmp_path)
    assert schema.returncode == 0, schema.stderr
    since = last_seq(account.server)
    exported = run(
        "export", "--scope-prefix", "ENG-", "--out", str(out), server=account.server, cwd=tmp_path
    )
    assert exported.returncode == 2, exported.stderr
    assert sandbox_methods(account.server, since) == {"GET"}  # export only reads
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# yaml-language-server: $schema=schemas/desired-state.schema.json\n")
    assert "does not exist yet" not in exported.stderr
    assert exported.stdout == ""
    assert f"{account.unanswered} workers with values the service does not show" in exported.stderr
    assert f"{account.unmanaged} open agreements without an externalId left out" in exported.stderr
    assert f"{account.outside_scope} open agreements outside the scope" in exported.stderr
    for variable in HEADER_VARIABLES:
        assert variable in exported.stderr
    assert SECRET not in text + exported.stderr and "prod-7" not in text + exported.stderr
    ids = re.findall(r"^  - externalId: (\S+)$", text, flags=re.MULTILINE)
    assert ids == sorted(ids) and len(ids) == account.owned_open
    assert all(i.startswith("ENG-") for i in ids)

    out.write_text(fill(text), encoding="utf-8")
    valid = run("validate", str(out), server=account.server, cwd=tmp_path, **HEADER_VARIABLES)
    assert valid.returncode == 0, valid.stdout
    editor = json.loads((tmp_path / "schemas" / "desired-state.schema.json").read_text())
    jsonschema.validate(yaml.safe_load(out.read_text(encoding="utf-8")), editor)
    plan = run(
        "plan",
        str(out),
        "--detailed-exitcode",
        server=account.server,
        cwd=tmp_path,
        **HEADER_VARIABLES,
    )
    assert_no_changes(plan)
    assert f"{account.unmanaged + account.outside_scope} unmanaged" in plan.stdout


def test_validate_refuses_the_unfilled_export_at_exactly_its_placeholders(
    account: Account, tmp_path: Path
) -> None:
    exported = run("export", "--scope-prefix", "ENG-", server=account.server, cwd=tmp_path)
    assert exported.returncode == 2
    out = tmp_path / "workers.yaml"
    out.write_text(exported.stdout, encoding="utf-8")
    expected = placeholder_lines(exported.stdout)
    assert len(expected) == 4 * account.unanswered
    valid = run(
        "validate",
        str(out),
        "--format",
        "json",
        server=account.server,
        cwd=tmp_path,
        **HEADER_VARIABLES,
    )
    assert valid.returncode == 1
    problems = json.loads(valid.stdout)
    assert {problem["line"] for problem in problems} == expected
    unfilled = [p["line"] for p in problems if p["message"].startswith("an unfilled")]
    assert sorted(unfilled) == sorted(expected)  # one per placeholder, besides schema messages


def test_the_same_account_exports_the_same_bytes(account: Account, tmp_path: Path) -> None:
    first = run("export", "--include-unmanaged", server=account.server, cwd=tmp_path)
    # Debug logs too: no header value in any of them, plain or encoded.
    second = run(
        "--log-level",
        "debug",
        "export",
        "--include-unmanaged",
        server=account.server,
        cwd=tmp_path,
    )
    assert first.returncode == second.returncode == 2
    assert first.stdout == second.stdout and first.stdout
    assert first.stdout.count("#     agreementId: ") == account.unmanaged
    assert "OPS-" in first.stdout  # no scope: every externalId
    everything = first.stdout + first.stderr + second.stderr
    for form in (SECRET, base64.b64encode(SECRET.encode()).decode(), SECRET.encode().hex()):
        assert form not in everything


@pytest.mark.parametrize("split_by", ["country", "jobTitle"])
def test_split_by_directory_validates_and_plans_no_changes(
    account: Account, tmp_path: Path, split_by: str
) -> None:
    folder = tmp_path / "people"
    exported = run(
        "export",
        "--scope-prefix",
        "ENG-",
        "--split-by",
        split_by,
        "--out",
        str(folder),
        server=account.server,
        cwd=tmp_path,
    )
    assert exported.returncode == 2, exported.stderr
    files = sorted(folder.iterdir())
    assert files[0].name == "00-settings.yaml" and len(files) > 3
    for file in files:
        file.write_text(fill(file.read_text(encoding="utf-8")), encoding="utf-8")
    valid = run("validate", str(folder), server=account.server, cwd=tmp_path, **HEADER_VARIABLES)
    assert valid.returncode == 0, valid.stdout
    assert f"({account.owned_open} workers, a webhook)" in valid.stdout
    plan = run(
        "plan",
        str(folder),
        "--detailed-exitcode",
        server=account.server,
        cwd=tmp_path,
        **HEADER_VARIABLES,
    )
    assert_no_changes(plan)


def invoke(*args: str, server: SandboxServer, token: str | None = None) -> Result:
    """The command in this process (for the paths around the main ones): the same code."""
    return CliRunner().invoke(
        main,
        list(args),
        env={"RECONCILER_BASE_URL": server.base_url, "RECONCILER_TOKEN": token or server.token},
        catch_exceptions=False,
    )


def test_refuses_to_overwrite_without_force(account: Account, tmp_path: Path) -> None:
    out = tmp_path / "workers.yaml"
    out.write_text("mine\n")
    since = last_seq(account.server)
    refused = invoke("export", "--out", str(out), server=account.server)
    assert refused.exit_code == 1
    assert "exists: refusing to overwrite it" in refused.stderr and "--force" in refused.stderr
    assert out.read_text() == "mine\n"
    assert last_seq(account.server) == since  # refused before reading the account
    mine = invoke("export", "--out", str(out), "--force", server=account.server)
    assert mine.exit_code == 1 and "was not written by `reconciler export`" in mine.stderr
    assert out.read_text() == "mine\n"  # a file the user wrote: never replaced, even forced
    out.unlink()
    assert invoke("export", "--out", str(out), server=account.server).exit_code == 2
    forced = invoke("export", "--out", str(out), "--force", server=account.server)
    assert forced.exit_code == 2
    assert out.read_text().splitlines()[1].startswith("# Written by `reconciler export`")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["workers.yaml"]  # no temporary left

    folder = tmp_path / "people"
    folder.mkdir()
    (folder / "old.yaml").write_text("# Written by `reconciler export` from the account.\n")
    (folder / "README.md").write_text("keep\n")
    (folder / "docker-compose.yml").write_text("services: {}\n")
    args = ("export", "--split-by", "country", "--out", str(folder))
    refused = invoke(*args, server=account.server)
    assert refused.exit_code == 1 and "is not empty" in refused.stderr
    foreign = invoke(*args, "--force", server=account.server)
    assert foreign.exit_code == 1 and "docker-compose.yml, which export did not" in foreign.stderr
    assert (folder / "docker-compose.yml").read_text() == "services: {}\n"
    (folder / "docker-compose.yml").rename(tmp_path / "docker-compose.yml")
    forced = invoke(*args, "--force", server=account.server)
    assert forced.exit_code == 2
    assert f"Removed {folder / 'old.yaml'}" in forced.stderr
    assert not (folder / "old.yaml").exists() and (folder / "00-settings.yaml").is_file()
    assert (folder / "README.md").read_text() == "keep\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--split-by", "country"), "--split-by writes a directory"),
        (("--scope-prefix", ""), "--scope-prefix cannot be empty"),
        (("--out", "."), "is a directory"),
    ],
)
def test_bad_options_exit_1(account: Account, args: tuple[str, ...], message: str) -> None:
    result = invoke("export", *args, server=account.server)
    assert (result.exit_code, result.stdout) == (1, "")
    assert message in result.stderr


def test_a_bad_token_exits_1_and_writes_nothing(account: Account, tmp_path: Path) -> None:
    out = tmp_path / "workers.yaml"
    result = invoke("export", "--out", str(out), server=account.server, token="not-a-token")
    assert result.exit_code == 1 and "Error:" in result.stderr
    assert not out.exists()


# --- a fully answered account ------------------------------------------------------------------


def test_a_fully_answered_account_exports_ready_and_plans_no_changes(tmp_path: Path) -> None:
    with SandboxServer() as server:
        account = build_account(server, answered=True)
        out = tmp_path / "workers.yaml"
        exported = run(
            "export", "--scope-prefix", "ENG-", "--out", str(out), server=server, cwd=tmp_path
        )
        assert exported.returncode == 0, exported.stderr
        text = out.read_text(encoding="utf-8")
        assert PLACEHOLDER not in text
        assert "typeOfWorker: Business" in text and "workerLegalName: Firm" in text
        assert 'countryIso: "NO"' in text and 'jobTitle: "1e3"' in text
        plan = run(
            "plan", str(out), "--detailed-exitcode", server=server, cwd=tmp_path, **HEADER_VARIABLES
        )
        assert_no_changes(plan)
        assert f"{account.unmanaged + account.outside_scope} unmanaged" in plan.stdout


def test_the_quickstart_demo_account_exports_and_plans_empty(tmp_path: Path) -> None:
    """The README's example: the embedded sandbox, seeded with the demo account."""
    sandbox = ("--sandbox", "--sandbox-db", str(tmp_path / "sandbox.db"))
    out = tmp_path / "workers.yaml"

    def reconciler(*args: str) -> subprocess.CompletedProcess[str]:
        return run(*args, cwd=tmp_path, WEBHOOK_URL="https://hooks.example.com/workforce")

    exported = reconciler("export", "--scope-prefix", "ENG-", "--out", str(out), *sandbox)
    assert exported.returncode == 2, exported.stderr
    text = out.read_text()
    assert re.findall(r"externalId: (\S+)", text) == [
        "ENG-001",
        "ENG-002",
        "ENG-003",
        "ENG-005",
        "ENG-006",
    ]
    assert "#   - ENG-003 alan@example.com (INVITATION_SENT)" in text
    assert "OPS-001" not in text and "freelance@example.com" not in text
    assert '  url: "${WEBHOOK_URL}"' in text and "/workforce" not in text
    assert "WEBHOOK_URL  (the webhook's URL: its path or query may be a credential)" in (
        exported.stderr
    )
    out.write_text(fill(text))
    plan = reconciler("plan", str(out), "--detailed-exitcode", *sandbox)
    assert_no_changes(plan)
    assert "2 unmanaged" in plan.stdout  # Freelance Fred and OPS-001


def test_export_writes_the_modeline_before_the_schema_exists(
    account: Account, tmp_path: Path
) -> None:
    """The modeline points where `schema --out` writes the schema, and export's "Next:" line
    starts with that command; after it, the modeline resolves (an editor loads the schema)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "people").mkdir()
    exported = run(
        "export",
        "--scope-prefix",
        "ENG-",
        "--out",
        "people/workers.yaml",
        server=account.server,
        cwd=tmp_path,
    )
    assert exported.returncode == 2, exported.stderr
    first = (tmp_path / "people" / "workers.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert first == "# yaml-language-server: $schema=../schemas/desired-state.schema.json"
    command = "reconciler schema --out schemas/desired-state.schema.json"
    assert "does not exist yet: the first command of the next steps writes it" in exported.stderr
    assert f"Next: {command} && reconciler validate people/workers.yaml && " in exported.stderr
    assert run(*command.split()[1:], cwd=tmp_path).returncode == 0
    target = (tmp_path / "people" / first.split("$schema=", 1)[1]).resolve()
    assert json.loads(target.read_text(encoding="utf-8"))["$id"] == SCHEMA_ID
