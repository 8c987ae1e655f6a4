"""The payee reviewed is the payee paid, through the CLI against the sandbox (issue 38).

A saved plan pays only the agreement it judged, ACTIVE at the very email reviewed; a paylist
under a payrun's key that pays a look-alike mailbox is a conflict and untraced money, never
"paid"; a payee the plan replaces is refused in the plan; and an edited plan is named as
edited whatever it holds. The sandbox's request log says what was sent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.plan.payruns import paylist_key
from reconciler.sandbox import SandboxServer
from reconciler.service.models import Invitation
from tests.apply.support import NOVEMBER, QUICKSTART, SEED, cli, paylist_posts, request_seq
from tests.sandbox.support import Controls
from tests.service.helpers import client_for

PLAN_KEY = "payee-reviewed-test-key-3b7e21-0123456789"
JAN = "jan.grosse@example.com"
TWIN = "jan.große@example.com"
BONUS = """\
payruns:
  - id: bonus-2026-11
    description: November bonus
    payments:
      - {email: jan.grosse@example.com, amount: "500.00", description: November bonus}
"""


def _seed(tmp_path: Path, *emails: str) -> Path:
    """The demo seed, with ACTIVE workers (no externalId: outside the files) at these emails."""
    extra = "".join(
        f"  - firstName: P{n}\n    lastName: Q\n    email: {email}\n    country: DE\n"
        "    status: ACTIVE\n"
        for n, email in enumerate(emails)
    )
    text = SEED.read_text(encoding="utf-8").replace("webhook:\n", extra + "webhook:\n", 1)
    path = tmp_path / "seed.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _desired(tmp_path: Path, payruns: str) -> Path:
    path = tmp_path / "desired.yaml"
    path.write_text(QUICKSTART.read_text(encoding="utf-8") + payruns, encoding="utf-8")
    return path


def _headers(server: SandboxServer) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.token}"}


def _agreement(server: SandboxServer, email: str) -> int:
    answer = httpx.get(
        f"{server.base_url}/contract/workers", params={"email": email}, headers=_headers(server)
    )
    assert answer.is_success, answer.text
    return int(answer.json()["agreementId"])


def _payments(server: SandboxServer) -> list[dict[str, Any]]:
    base = f"{server.base_url}/payment-agent/paylists"
    found = []
    for paylist in httpx.get(base, headers=_headers(server)).json()["content"]:
        url = f"{base}/{paylist['paylistId']}/payments"
        found += httpx.get(url, headers=_headers(server)).json()["content"]
    return found


def _activate_new(server: SandboxServer, email: str) -> int:
    """Another worker at `email` invited by the service's API, then ACTIVE: its agreement."""
    invitation = Invitation(
        worker_name="Jan",
        worker_surname="Other",
        type_of_worker="Worker",
        worker_email=email,
        country_iso="DE",
    )
    with client_for(server) as client:
        (result,) = client.invite_workers([invitation])
    assert result.agreement_id is not None
    Controls(server.base_url).move_agreement(result.agreement_id, "ACTIVE")
    return result.agreement_id


@pytest.mark.parametrize("newcomer", [TWIN, JAN], ids=["a-look-alike-twin", "the-same-mailbox"])
def test_a_saved_plan_pays_only_the_agreement_it_was_reviewed_paying(
    tmp_path: Path, newcomer: str
) -> None:
    """Between `plan --out` and `apply plan.json`, the reviewed payee's agreement ends and
    another worker becomes ACTIVE, at a look-alike mailbox or at the very same one: the
    payrun is refused naming both agreements, and nothing is sent."""
    path = _desired(tmp_path, BONUS)
    saved = tmp_path / "plan.json"
    with SandboxServer(seed=_seed(tmp_path, JAN), process_delay_ms=0) as server:
        made = cli(
            "plan", str(path), "--out", str(saved), server=server, RECONCILER_PLAN_KEY=PLAN_KEY
        )
        assert made.returncode == 0, made.stdout + made.stderr
        reviewed = _agreement(server, JAN)
        (payment,) = json.loads(saved.read_text())["payruns"][0]["payments"]
        assert payment["agreementId"] == reviewed and payment["email"] == JAN
        Controls(server.base_url).move_agreement(reviewed, "ENDED")
        other = _activate_new(server, newcomer)
        since = request_seq(server)

        applied = cli("apply", str(saved), server=server, RECONCILER_PLAN_KEY=PLAN_KEY)

        assert applied.returncode == 1, applied.stdout + applied.stderr
        said = " ".join(applied.stdout.split())
        assert f"the plan was reviewed paying agreement {reviewed} at {JAN}" in said, said
        shown = json.dumps(newcomer) if not newcomer.isascii() else newcomer
        assert f"agreement {other} at {shown}" in said, said
        assert paylist_posts(server, since) == []
        assert _payments(server) == []


def test_a_paylist_under_the_key_paying_a_twin_is_a_conflict_and_untraced(
    tmp_path: Path,
) -> None:
    """Someone with API access pays the look-alike twin under the payrun's (public) key: the
    plan shows the payrun in conflict, never "paid", and drift counts that money untraced."""
    path = _desired(tmp_path, BONUS)
    with SandboxServer(seed=_seed(tmp_path, JAN, TWIN), process_delay_ms=0) as server:
        body = {
            "description": "November bonus",
            "idempotence_key": paylist_key("bonus-2026-11"),
            "payments": [{"description": "November bonus", "amount": 500, "worker_email": TWIN}],
        }
        made = httpx.post(
            f"{server.base_url}/payment-agent/paylists", json=body, headers=_headers(server)
        )
        assert made.is_success, made.text

        planned = cli("plan", str(path), "--format", "json", server=server)
        drift = cli("drift", str(path), "--format", "json", server=server)

        payruns = json.loads(planned.stdout)["payruns"]
        assert [p["state"] for p in payruns] == ["conflict"], planned.stdout
        assert "other content" in payruns[0]["reasons"][0]
        money = json.loads(drift.stdout)["money"]
        assert [u["total"] for u in money["untraced"]["paylists"]] == ["500.00"], drift.stdout
        assert money["paid"]["total"] == "0.00", drift.stdout


def test_a_payee_the_plan_replaces_is_refused_in_the_plan(
    demo: SandboxServer, tmp_path: Path
) -> None:
    """`--replace ENG-002` closes grace@'s agreement: the payrun paying her is refused in the
    plan (whole: ENG-001's payment with it), and no paylist is sent for the service to refuse."""
    path = _desired(tmp_path, NOVEMBER)
    planned = cli("plan", str(path), "--replace", "ENG-002", server=demo)
    said = " ".join(planned.stdout.split())
    assert "this plan inactivates the payee (agreement" in said, planned.stdout
    assert "1 payrun refused" in said and "to pay" not in said.split("Plan:")[-1], said
    since = request_seq(demo)

    applied = cli(
        "apply",
        str(path),
        "--replace",
        "ENG-002",
        "--auto-approve",
        "--format",
        "json",
        server=demo,
    )

    ledger = json.loads(applied.stdout)
    rows = {row["address"]: row for row in ledger["changes"]}
    assert rows['worker["ENG-002"]']["outcome"] == "applied", applied.stdout
    pay = rows['paylist["2026-11-contractors"]']
    assert pay["outcome"] == "failed" and "inactivated or replaced" in pay["detail"], applied.stdout
    assert applied.returncode == 1
    assert paylist_posts(demo, since) == []


@pytest.mark.parametrize(
    ("damage", "encoding"),
    [
        (lambda text: text.replace('"November bonus"', '"November bonus\\ud800"'), "ascii"),
        (lambda text: text.replace('"November bonus"', '"November bonus\\udcff"', 1), "ascii"),
        (lambda text: text.replace("jan.grosse", "jan.gro\\u00dfe"), "ascii"),
        (lambda text: text.replace("jan.grosse", "jan.große"), "latin-1"),
        (lambda text: text, "utf-16"),
        (lambda text: text, "utf-8-sig"),
    ],
    ids=[
        "lone-high-surrogate",
        "lone-low-surrogate",
        "escaped-look-alike",
        "latin-1",
        "utf-16",
        "bom",
    ],
)
def test_an_edited_plan_is_named_as_edited_whatever_it_holds(
    tmp_path: Path, damage: Any, encoding: str
) -> None:
    path = _desired(tmp_path, BONUS)
    saved = tmp_path / "plan.json"
    with SandboxServer(seed=_seed(tmp_path, JAN), process_delay_ms=0) as server:
        made = cli(
            "plan", str(path), "--out", str(saved), server=server, RECONCILER_PLAN_KEY=PLAN_KEY
        )
        assert made.returncode == 0, made.stdout + made.stderr
        reviewed = tmp_path / "reviewed.json"
        reviewed.write_bytes(saved.read_bytes())
        edited = damage(saved.read_text(encoding="utf-8"))
        saved.write_text(edited, encoding=encoding)
        assert saved.read_bytes() != reviewed.read_bytes()
        since = request_seq(server)
        runs = {
            command: cli(*args, server=server, RECONCILER_PLAN_KEY=PLAN_KEY)
            for command, args in (
                ("apply", ("apply", str(saved))),
                ("comment", ("comment", str(saved))),
                ("plan-compare", ("plan-compare", str(reviewed), str(saved))),
            )
        }
        for command, ran in runs.items():
            said = ran.stdout + ran.stderr
            assert ran.returncode != 0, (command, said)
            assert "was changed after it was made" in said, (command, said)
            assert "internal error" not in said and "Traceback" not in said, (command, said)
        assert paylist_posts(server, since) == []


def test_a_twin_paid_before_is_not_the_payee_paid_before(tmp_path: Path) -> None:
    """The look-alike twin was paid the same amount for the same description: that is another
    mailbox's payment, so the real payee is paid (never refused as "paid before")."""
    path = _desired(tmp_path, BONUS)
    with SandboxServer(seed=_seed(tmp_path, JAN, TWIN), process_delay_ms=0) as server:
        body = {
            "description": "Twin's bonus",
            "idempotence_key": "paid-to-the-twin".ljust(32, "0"),
            "payments": [{"description": "November bonus", "amount": 500, "worker_email": TWIN}],
        }
        made = httpx.post(
            f"{server.base_url}/payment-agent/paylists", json=body, headers=_headers(server)
        )
        assert made.is_success, made.text
        httpx.post(f"{server.base_url}/_sandbox/process")

        applied = cli("apply", str(path), "--auto-approve", server=server)

        assert applied.returncode == 0, applied.stdout + applied.stderr
        paid = sorted((p["worker_email"], p["status"]) for p in _payments(server))
    assert paid == [(JAN, "SUCCESS"), (TWIN, "SUCCESS")]
