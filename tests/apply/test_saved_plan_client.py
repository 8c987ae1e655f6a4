"""No saved plan without its client, and none applied with another client's token.

Two clients of one sandbox, neither with a webhook nor a wallet journal, so the account itself
does not say which client a token is: `plan --out` must refuse until RECONCILER_CLIENT_ID says
it, and `apply PLAN` asks the service, at the wallet path that names the plan's client, whether
the token is that client's, before anything is written.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from reconciler.sandbox import SandboxServer
from tests.apply.support import cli, request_seq
from tests.sandbox.support import ClientAccess, Controls

PLAN_KEY = "client-binding-plan-key-0123456789abcdef"
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


def _log(server: SandboxServer, since: int) -> list[dict]:
    answer = httpx.get(f"{server.base_url}/_sandbox/requests", params={"since": since})
    return list(answer.json())


def _client(server: SandboxServer) -> ClientAccess:
    controls = Controls(server.base_url)
    try:
        return controls.create_client()
    finally:
        controls.close()


def _plan(server: SandboxServer, tmp_path: Path, client: ClientAccess, **env: str) -> Path:
    desired = tmp_path / "desired.yaml"
    desired.write_text(ONE_INVITATION)
    out = tmp_path / "plan.json"
    made = cli(
        "plan", str(desired), "--out", str(out),
        server=server, token=client.token, RECONCILER_PLAN_KEY=PLAN_KEY, **env,
    )  # fmt: skip
    assert made.returncode == 0 or not out.exists(), "a refused plan leaves no file"
    return out


def test_plan_out_refuses_when_the_client_cannot_be_told(
    demo: SandboxServer, tmp_path: Path
) -> None:
    a = _client(demo)
    desired = tmp_path / "desired.yaml"
    desired.write_text(ONE_INVITATION)
    out = tmp_path / "plan.json"

    refused = cli(
        "plan", str(desired), "--out", str(out),
        server=demo, token=a.token, RECONCILER_PLAN_KEY=PLAN_KEY,
    )  # fmt: skip

    assert refused.returncode == 1, refused.stderr
    assert "a saved plan must name the client it was made for" in refused.stderr
    assert "RECONCILER_CLIENT_ID" in refused.stderr and "--client-id" in refused.stderr
    assert not out.exists()
    # Without --out nothing is saved, and the plan needs no client.
    assert cli("plan", str(desired), server=demo, token=a.token).returncode == 0


def test_a_plan_of_client_a_is_refused_with_client_bs_token_at_the_wallet_path(
    demo: SandboxServer, tmp_path: Path
) -> None:
    a, b = _client(demo), _client(demo)
    saved = _plan(demo, tmp_path, a, RECONCILER_CLIENT_ID=str(a.client_id))
    assert json.loads(saved.read_text())["account"]["client_id"] == a.client_id
    since = request_seq(demo)

    refused = cli("apply", str(saved), server=demo, token=b.token, RECONCILER_PLAN_KEY=PLAN_KEY)

    assert refused.returncode == 1
    assert "was made for another account (client id differ)" in refused.stderr
    assert f"no wallet of client {a.client_id} for this token" in refused.stderr
    log = _log(demo, since)
    assert [e for e in log if e["method"] != "GET"] == []
    wallet = f"/client-wallet/clients/{a.client_id}/wallet"
    assert [(e["path"], e["status"]) for e in log if e["path"] == wallet] == [(wallet, 404)]

    # Client A's own token applies it, after the same question at the same path.
    since = request_seq(demo)
    applied = cli("apply", str(saved), server=demo, token=a.token, RECONCILER_PLAN_KEY=PLAN_KEY)
    assert applied.returncode == 0, applied.stderr
    assert (wallet, 200) in [(e["path"], e["status"]) for e in _log(demo, since)]
