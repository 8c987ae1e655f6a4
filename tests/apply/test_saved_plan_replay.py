"""A saved plan applies once: replayed after the world moved back, it is stale.

The plan invites a worker; an admin inactivates the agreement that made; the same `plan.json`
applied again within its hour must not invite the worker a second time (the invitation's
"still absent" fingerprint covers the closed agreements of its externalId and email too).
"""

from __future__ import annotations

from pathlib import Path

import httpx

from reconciler.sandbox import SandboxServer
from tests.apply.support import INVITE_PATH, cli, request_seq

PLAN_KEY = "replay-test-plan-key-0123456789abcdefgh"
ONE_INVITATION = """\
version: 1
scope:
  externalIdPrefix: "NEW-"
workers:
  - externalId: NEW-001
    typeOfWorker: Worker
    workerName: Mary
    workerSurname: Jackson
    workerEmail: mary@example.com
    countryIso: US
"""


def _agreements(server: SandboxServer, external_id: str) -> list[dict]:
    answer = httpx.get(
        f"{server.base_url}/contract/workers/list",
        params={"size": 100},
        headers={"Authorization": f"Bearer {server.token}"},
    )
    answer.raise_for_status()
    return [w for w in answer.json()["content"] if w.get("externalId") == external_id]


def _posts(server: SandboxServer, since: int, path: str) -> int:
    log = httpx.get(f"{server.base_url}/_sandbox/requests", params={"since": since}).json()
    return sum(1 for entry in log if entry["method"] == "POST" and entry["path"] == path)


def test_a_replay_after_an_inactivation_is_stale_and_invites_nobody(
    demo: SandboxServer, tmp_path: Path
) -> None:
    desired = tmp_path / "desired.yaml"
    desired.write_text(ONE_INVITATION)
    out = tmp_path / "plan.json"
    made = cli("plan", str(desired), "--out", str(out), server=demo, RECONCILER_PLAN_KEY=PLAN_KEY)
    assert made.returncode == 0, made.stderr
    first = cli("apply", str(out), server=demo, RECONCILER_PLAN_KEY=PLAN_KEY)
    assert first.returncode == 0, first.stderr
    (invited,) = _agreements(demo, "NEW-001")
    inactivated = httpx.post(
        f"{demo.base_url}/contract-server/v2/general/worker/agreements/"
        f"{invited['agreementId']}/status",
        json={"status": "inactivated"},
        headers={"Authorization": f"Bearer {demo.token}"},
    )
    assert inactivated.is_success, inactivated.text
    since = request_seq(demo)

    replayed = cli("apply", str(out), server=demo, RECONCILER_PLAN_KEY=PLAN_KEY)

    assert replayed.returncode == 1
    assert "the live account changed since the plan was made" in replayed.stderr
    assert 'worker["NEW-001"]' in replayed.stderr
    assert _posts(demo, since, INVITE_PATH) == 0
    assert [a["status"] for a in _agreements(demo, "NEW-001")] == ["INACTIVATED"]
