"""A variant of issue 30 item 6 tried against the merged code (it holds): a saved plan that
inactivates a worker, replayed after an admin invited the worker again, leaves the new
agreement alone."""

from __future__ import annotations

from pathlib import Path

from reconciler.sandbox import SandboxServer
from tests.apply.support import cli
from tests.apply.test_saved_plan_replay import ONE_INVITATION, PLAN_KEY, _agreements

OTHER = """\
  - externalId: NEW-002
    typeOfWorker: Worker
    workerName: Dorothy
    workerSurname: Vaughan
    workerEmail: dorothy@example.com
    countryIso: US
"""


def test_a_replayed_inactivation_leaves_the_agreement_invited_again_since(
    demo: SandboxServer, tmp_path: Path
) -> None:
    desired = tmp_path / "desired.yaml"
    desired.write_text(ONE_INVITATION + OTHER)
    assert cli("apply", str(desired), "--auto-approve", server=demo).returncode == 0
    desired.write_text(ONE_INVITATION.split("  - externalId")[0] + OTHER)
    out = tmp_path / "plan.json"
    made = cli("plan", str(desired), "--out", str(out), server=demo, RECONCILER_PLAN_KEY=PLAN_KEY)
    assert made.returncode == 0, made.stdout + made.stderr
    assert cli("apply", str(out), server=demo, RECONCILER_PLAN_KEY=PLAN_KEY).returncode == 0
    # An admin invites Mary again by hand: a new agreement of NEW-001. Her agreement is now
    # closed in the service, never invited again implicitly (product spec, "What a plan
    # decides"), so the admin says so with `--replace` (a `rehire:` day would be spent already:
    # the inactivated agreement was created today).
    again = tmp_path / "again.yaml"
    again.write_text(ONE_INVITATION + OTHER)
    invited = cli("apply", str(again), "--auto-approve", "--replace", "NEW-001", server=demo)
    assert invited.returncode == 0, invited.stdout + invited.stderr
    statuses = {a["agreementId"]: a["status"] for a in _agreements(demo, "NEW-001")}
    assert len(statuses) == 2, statuses
    replayed = cli("apply", str(out), server=demo, RECONCILER_PLAN_KEY=PLAN_KEY)

    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    after = {a["agreementId"]: a["status"] for a in _agreements(demo, "NEW-001")}
    assert after == statuses, (statuses, after)
