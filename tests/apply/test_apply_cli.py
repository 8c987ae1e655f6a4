"""`reconciler apply` end to end: a subprocess against a seeded sandbox, over real HTTP."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from reconciler.cli import main
from reconciler.sandbox import SandboxServer
from reconciler.service.models import WorkerStatus
from tests.apply.support import (
    QUICKSTART,
    SEED,
    answer_on_the_terminal,
    ask_on_a_terminal,
    cli,
    invitation,
)
from tests.sandbox.support import Controls
from tests.service.helpers import client_for


@pytest.fixture
def demo() -> Iterator[SandboxServer]:
    """The quickstart's demo account, fresh for each test (apply changes it)."""
    with SandboxServer(seed=SEED) as server:
        yield server


@pytest.fixture
def demo_controls(demo: SandboxServer) -> Iterator[Controls]:
    controls = Controls(demo.base_url)
    yield controls
    controls.close()


def writes_since(controls: Controls, since: int) -> list[str]:
    return [f"{e['method']} {e['path']}" for e in controls.requests(since) if e["method"] != "GET"]


def test_plan_then_apply_then_plan_again_shows_no_changes(demo: SandboxServer) -> None:
    planned = cli("plan", str(QUICKSTART), "--detailed-exitcode", server=demo)
    assert planned.returncode == 2, planned.stderr
    applied = cli("apply", str(QUICKSTART), "--auto-approve", server=demo)
    assert applied.returncode == 0, applied.stderr
    assert "Plan: 1 to invite, 1 to inactivate, 1 to update" in applied.stdout
    for address, action in [
        ('worker["ENG-004"]', "invite"),
        ('worker["ENG-006"]', "inactivate"),
        ("webhook", "webhook_update"),
    ]:
        row = next(line for line in applied.stdout.splitlines() if line.startswith(address))
        assert row.split()[1:3] == [action, "applied"], row
    assert applied.stdout.rstrip().endswith("Apply complete: 3 applied.")
    lines = applied.stderr.splitlines()
    progress = [json.loads(line) for line in lines if "apply progress" in line]
    assert progress[-1]["done"] == progress[-1]["total"] == 3  # no terminal: log lines
    again = cli("plan", str(QUICKSTART), "--detailed-exitcode", server=demo)
    assert again.returncode == 0, again.stdout + again.stderr
    # ENG-002's name drifted in the demo account: nothing apply can change, still shown.
    assert again.stdout.startswith("No changes to apply, but the account still differs")
    assert "0 to invite, 0 to inactivate, 0 to update, 1 drifted" in again.stdout


def test_apply_twice_the_second_does_nothing(demo: SandboxServer, demo_controls: Controls) -> None:
    first = cli("apply", str(QUICKSTART), "--auto-approve", "--format", "json", server=demo)
    assert first.returncode == 0, first.stderr
    ledger = json.loads(first.stdout)
    assert ledger["complete"] is True and ledger["summary"]["applied"] == 3
    assert {c["address"]: c["outcome"] for c in ledger["changes"]} == {
        'worker["ENG-004"]': "applied",
        'worker["ENG-006"]': "applied",
        "webhook": "applied",
    }
    since = demo_controls.last_seq()
    second = cli("apply", str(QUICKSTART), "--auto-approve", "--format", "json", server=demo)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["changes"] == []
    assert writes_since(demo_controls, since) == []


def test_a_stale_saved_plan_is_refused_and_changes_nothing(
    demo: SandboxServer, demo_controls: Controls, tmp_path: Path
) -> None:
    saved = tmp_path / "plan.json"
    assert cli("plan", str(QUICKSTART), "--out", str(saved), server=demo).returncode == 0
    with client_for(demo) as client:  # someone else removes ENG-006 meanwhile
        engineer = next(w for w in client.list_workers() if w.external_id == "ENG-006")
        client.inactivate_agreement(engineer.agreement_id)
    since = demo_controls.last_seq()
    result = cli("apply", str(saved), server=demo)
    assert result.returncode == 1
    assert "the live account changed since the plan was made" in result.stderr
    assert 'worker["ENG-006"]' in result.stderr and "nothing was applied" in result.stderr
    assert "Traceback" not in result.stderr
    assert writes_since(demo_controls, since) == []


def test_a_saved_plan_applies_without_asking_and_ignores_changes_it_does_not_touch(
    demo: SandboxServer, demo_controls: Controls, tmp_path: Path
) -> None:
    saved = tmp_path / "plan.json"
    assert cli("plan", str(QUICKSTART), "--out", str(saved), server=demo).returncode == 0
    with client_for(demo) as client:  # an unrelated, unmanaged worker arrives meanwhile
        client.invite_workers([replace(invitation(99), external_id="OPS-099")])
    result = cli("apply", str(saved), server=demo)  # stdin is no terminal: no question asked
    assert result.returncode == 0, result.stderr
    assert "Applying the saved plan made at" in result.stderr
    assert "1 to invite, 1 to inactivate, 1 to update." in result.stderr
    assert "Apply complete: 3 applied." in result.stdout


CANARY = "cAnArY-7Qx9Lw2Zr4Tk8Vp3Mn6Bj"  # high entropy: found nowhere by chance
HOOKED = """\
version: 1
policy: {prune: false}
webhook:
  url: https://hooks.example.com/workforce
  headers:
    - {name: X-Webhook-Token, value: "${HOOK_TOKEN}"}
  event_types: [KYC, PAYMENT]
"""


def test_a_saved_plan_reads_header_values_again_and_refuses_when_they_changed(
    demo: SandboxServer, demo_controls: Controls, tmp_path: Path
) -> None:
    desired = tmp_path / "hook.yaml"
    desired.write_text(HOOKED)
    saved = tmp_path / "plan.json"
    made = cli("plan", str(desired), "--out", str(saved), server=demo, HOOK_TOKEN=CANARY)
    assert made.returncode == 0, made.stderr
    assert CANARY not in saved.read_text()
    since = demo_controls.last_seq()
    changed = cli("apply", str(saved), server=demo, HOOK_TOKEN="second-77c1")
    assert changed.returncode == 1
    assert "${HOOK_TOKEN} no longer has the value the plan was made with" in changed.stderr
    assert writes_since(demo_controls, since) == []
    same = cli("--log-level", "debug", "apply", str(saved), server=demo, HOOK_TOKEN=CANARY)
    assert same.returncode == 0, same.stderr
    said = same.stdout + same.stderr
    raw = CANARY.encode()
    for form in (CANARY, raw.hex(), base64.b64encode(raw).decode(), quote(CANARY, safe="")):
        assert form not in said
    assert demo.token not in said
    with client_for(demo) as client:
        webhook = client.get_webhook()
    assert webhook is not None
    assert [(h.name, h.value.reveal()) for h in webhook.headers] == [("X-Webhook-Token", CANARY)]


def test_a_saved_plan_past_its_expiry_is_refused(
    demo: SandboxServer, demo_controls: Controls, tmp_path: Path
) -> None:
    saved = tmp_path / "plan.json"
    assert cli("plan", str(QUICKSTART), "--out", str(saved), server=demo).returncode == 0
    since = demo_controls.last_seq()
    result = cli("apply", str(saved), "--plan-ttl", "0.001", server=demo)
    assert result.returncode == 1
    assert "the saved plan was made at" in result.stderr and "ago" in result.stderr
    assert writes_since(demo_controls, since) == []


EVERYONE_GONE = """\
version: 1
scope: {externalIdPrefix: "ENG-"}
workers: []
"""


def test_the_safety_threshold_refuses_without_force_and_passes_with_it(
    demo: SandboxServer, demo_controls: Controls, tmp_path: Path
) -> None:
    desired = tmp_path / "empty.yaml"
    desired.write_text(EVERYONE_GONE)
    since = demo_controls.last_seq()
    refused = cli("apply", str(desired), "--auto-approve", server=demo)
    assert refused.returncode == 1
    assert "Plan: 0 to invite, 5 to inactivate" in refused.stdout  # the plan is still shown
    assert "would inactivate every owned worker" in refused.stderr
    assert "--force" in refused.stderr
    assert writes_since(demo_controls, since) == []
    forced = cli("apply", str(desired), "--auto-approve", "--force", server=demo)
    assert forced.returncode == 0, forced.stderr
    assert "Apply complete: 5 applied." in forced.stdout
    with client_for(demo) as client:
        open_engineers = [w for w in client.list_workers() if w.status.is_open and w.external_id]
    assert [w.external_id for w in open_engineers] == ["OPS-001"]


def test_without_a_terminal_or_auto_approve_it_refuses_before_any_request(
    demo: SandboxServer, demo_controls: Controls
) -> None:
    since = demo_controls.last_seq()
    result = cli("apply", str(QUICKSTART), server=demo)
    assert result.returncode == 1
    assert "no terminal to ask for confirmation on" in result.stderr
    assert "--auto-approve" in result.stderr
    assert demo_controls.requests(since) == []


def _apply_on_a_terminal(server: SandboxServer, answer: str) -> tuple[int, str]:
    """Run apply with a pseudo-terminal as stdin and stderr, and type `answer`."""
    return answer_on_the_terminal(*ask_on_a_terminal(QUICKSTART, server), answer)


def test_on_a_terminal_it_asks_and_only_yes_applies(
    demo: SandboxServer, demo_controls: Controls
) -> None:
    since = demo_controls.last_seq()
    status, output = _apply_on_a_terminal(demo, "no")
    assert status == 1
    assert "Only 'yes' will be accepted" in output and "apply cancelled" in output
    # The question counts what apply acts on, never the drift or unmanaged workers it leaves.
    question = output[output.index("Do you want to perform these actions?") :].splitlines()[0]
    assert question.endswith("(1 to invite, 1 to inactivate, 1 to update)"), question
    assert writes_since(demo_controls, since) == []
    status, output = _apply_on_a_terminal(demo, "yes")
    assert status == 0, output
    assert "Apply complete: 3 applied." in output
    assert "3/3" in output  # the progress bar, drawn on the terminal
    assert "apply progress" not in output  # log lines are for runs without a terminal
    with client_for(demo) as client:
        statuses = {w.external_id: w.status for w in client.list_workers()}
    assert statuses["ENG-004"] == WorkerStatus.INVITATION_SENT


def test_plan_options_are_refused_with_a_saved_plan(demo: SandboxServer, tmp_path: Path) -> None:
    saved = tmp_path / "plan.json"
    assert cli("plan", str(QUICKSTART), "--out", str(saved), server=demo).returncode == 0
    for option in (["--target", "ENG-004"], ["--exclude", "webhook"], ["--replace", "ENG-002"]):
        result = CliRunner().invoke(main, ["apply", str(saved), *option])
        assert result.exit_code == 1
        assert "a saved plan is already shaped" in result.output


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["--plan-ttl", "1h"], 1, "--plan-ttl is for a saved plan"),
        (["--plan-ttl", "soon"], 1, "positive duration such as 90s"),
        (["--parallelism", "0"], 1, "--parallelism"),
        (["--format", "yaml"], 1, "--format"),
    ],
)
def test_bad_options_say_what_is_wrong_before_any_request(
    args: list[str], status: int, message: str
) -> None:
    result = CliRunner().invoke(main, ["apply", str(QUICKSTART), "--auto-approve", *args])
    assert result.exit_code == status
    assert message in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_target_and_replace_shape_what_apply_does_against_the_embedded_sandbox(
    tmp_path: Path,
) -> None:
    database = ["--sandbox", "--sandbox-db", str(tmp_path / "sandbox.db")]
    runner = CliRunner()
    targeted = runner.invoke(
        main,
        ["apply", str(QUICKSTART), *database, "--auto-approve", "--target", "ENG-004"],
        catch_exceptions=False,
    )
    assert targeted.exit_code == 0, targeted.output
    assert "Apply complete: 1 applied." in targeted.output
    assert 'worker["ENG-006"]' not in targeted.output.split("ADDRESS")[1]
    replaced = runner.invoke(
        main,
        ["apply", str(QUICKSTART), *database, "--auto-approve", "--replace", "ENG-002"],
        catch_exceptions=False,
    )
    assert replaced.exit_code == 0, replaced.output
    ledger = replaced.output.split("ADDRESS")[1].splitlines()
    row = next(line for line in ledger if line.startswith('worker["ENG-002"]'))
    assert row.split()[1:3] == ["replace", "applied"]
    assert "inactivated, then invited again" in row
    assert "Apply complete: 3 applied." in replaced.output  # ENG-002, ENG-006 and the webhook
    again = runner.invoke(main, ["plan", str(QUICKSTART), *database, "--detailed-exitcode"])
    assert again.exit_code == 0, again.output
