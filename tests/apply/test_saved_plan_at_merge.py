"""A saved plan is judged at merge as hard as a fresh plan, and belongs to one account.

Each case makes a plan with `plan --out` against the demo sandbox (served over HTTP), changes
the world as it could change between review and merge (the wallet drained, a payment paid
meanwhile, the paylist created, another client or service), applies the saved plan through the
command line, and reads the sandbox's request log: nothing of a refused payrun is sent, and a
plan for another account sends nothing at all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.apply.support import NOVEMBER, QUICKSTART, SEED, cli, request_seq
from tests.cli import reconciler
from tests.sandbox.support import Controls

PLAN_KEY = "saved-plan-at-merge-key-0123456789abcdef"
PAYLISTS = "/payment-agent/paylists"


def _file(tmp_path: Path, payruns: str = NOVEMBER, policy: str = "") -> Path:
    path = tmp_path / "desired.yaml"
    text = QUICKSTART.read_text() + payruns
    path.write_text(text.replace("  prune: all\n", f"  prune: all\n{policy}"))
    return path


def _saved(server: SandboxServer, tmp_path: Path, path: Path, **env: str) -> Path:
    out = tmp_path / "plan.json"
    made = cli(
        "plan", str(path), "--out", str(out), server=server, RECONCILER_PLAN_KEY=PLAN_KEY, **env
    )
    assert made.returncode == 0, made.stdout + made.stderr
    return out


def _apply(server: SandboxServer, saved: Path, *args: str, **env: str) -> Any:
    env.setdefault("RECONCILER_PLAN_KEY", PLAN_KEY)
    return cli("apply", str(saved), *args, server=server, **env)


def _writes(server: SandboxServer, since: int) -> list[str]:
    log = httpx.get(f"{server.base_url}/_sandbox/requests", params={"since": since}).json()
    return [entry["path"] for entry in log if entry["method"] != "GET"]


def _pay_directly(server: SandboxServer, key: str, amount: str, description: str) -> None:
    """A paylist sent to the service by someone else, between review and merge."""
    body = {
        "description": "outside the reconciler",
        "idempotence_key": key,
        "payments": [
            {"description": description, "amount": amount, "worker_email": "ada@example.com"}
        ],
    }
    headers = {"Authorization": f"Bearer {server.token}"}
    created = httpx.post(f"{server.base_url}{PAYLISTS}", json=body, headers=headers)
    assert created.is_success, created.text
    assert httpx.post(f"{server.base_url}/_sandbox/process").is_success


@pytest.mark.parametrize(
    ("payruns", "policy", "said"),
    [
        (NOVEMBER.replace('"1500.00"', '"9900.00"'), "", "more than the wallet's 10,000.00"),
        (NOVEMBER, '  maxPayout: "1000.00"\n', "over policy.maxPayout 1,000.00"),
    ],
    ids=["wallet short", "maxPayout"],
)
def test_a_refusal_the_plan_announced_holds_at_merge_without_force(
    demo: SandboxServer, tmp_path: Path, payruns: str, policy: str, said: str
) -> None:
    path = _file(tmp_path, payruns, policy)
    saved = _saved(demo, tmp_path, path)
    since = request_seq(demo)
    refused = _apply(demo, saved)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert said in refused.stdout
    assert PAYLISTS not in _writes(demo, since)
    assert "/contract/workers/inviteWorkersBulkLocked" in _writes(demo, since)  # the rest goes
    again = _saved(demo, tmp_path, path)  # the workers went: this plan only pays
    assert _apply(demo, again).returncode == 1
    forced = _apply(demo, again, "--force")
    assert PAYLISTS in _writes(demo, since), forced.stdout + forced.stderr


def test_a_wallet_drained_after_review_refuses_the_payrun(
    demo: SandboxServer, tmp_path: Path
) -> None:
    saved = _saved(demo, tmp_path, _file(tmp_path))  # 1,750.00 of 10,000.00: safe at review
    _pay_directly(demo, "d" * 32, "9000.00", "an advance")  # 1,000.00 left
    since = request_seq(demo)
    refused = _apply(demo, saved)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "the payruns to pay total 1,750.00, more than the wallet's 1,000.00" in refused.stdout
    assert PAYLISTS not in _writes(demo, since)


def test_a_payment_paid_meanwhile_is_refused_as_a_duplicate(
    demo: SandboxServer, tmp_path: Path
) -> None:
    saved = _saved(demo, tmp_path, _file(tmp_path))
    _pay_directly(demo, "e" * 32, "1500.00", "November 2026 retainer")
    since = request_seq(demo)
    refused = _apply(demo, saved)
    assert refused.returncode == 1
    assert "DUPLICATE_PAYMENT" in refused.stdout
    assert PAYLISTS not in _writes(demo, since)


def test_a_payrun_paid_since_the_review_is_skipped_and_shown_as_paid(
    demo: SandboxServer, tmp_path: Path
) -> None:
    converged = _saved(demo, tmp_path, _file(tmp_path, payruns=""))
    assert _apply(demo, converged).returncode == 0  # the workers now match the file
    saved = _saved(demo, tmp_path, _file(tmp_path))
    first = _apply(demo, saved)
    assert first.returncode == 0, first.stdout + first.stderr
    since = request_seq(demo)
    again = _apply(demo, saved)
    assert again.returncode == 0, again.stdout + again.stderr
    assert 'paylist["2026-11-contractors"]: paid as paylist' in again.stderr
    assert PAYLISTS not in _writes(demo, since)


def test_a_plan_that_only_pays_says_so(demo: SandboxServer, tmp_path: Path) -> None:
    converged = _saved(demo, tmp_path, _file(tmp_path, payruns=""))
    assert _apply(demo, converged).returncode == 0  # the workers now match the file
    saved = _saved(demo, tmp_path, _file(tmp_path))
    applied = _apply(demo, saved)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "1 payrun to pay (1,750.00)." in applied.stderr
    assert "no changes" not in applied.stderr


def test_a_plan_for_another_client_is_refused_naming_both(
    demo: SandboxServer, tmp_path: Path
) -> None:
    saved = _saved(demo, tmp_path, _file(tmp_path))
    other = Controls(demo.base_url).create_client(balance=100_000)
    since = request_seq(demo)
    refused = _apply(demo, saved, token=other.token)
    assert refused.returncode == 1
    assert "was made for another account (client id differ)" in refused.stderr
    assert f"{demo.base_url}, client 1" in refused.stderr
    assert _writes(demo, since) == []
    record = json.loads(saved.read_text())["account"]
    assert record == {"base_url": demo.base_url, "client_id": 1, "email": None}
    comment = cli(
        "comment", str(saved), server=demo, token=other.token, RECONCILER_PLAN_KEY=PLAN_KEY
    )
    assert comment.returncode == 1 and "another account" in comment.stderr


def test_a_plan_for_another_service_is_refused_naming_both(
    demo: SandboxServer, tmp_path: Path
) -> None:
    saved = _saved(demo, tmp_path, _file(tmp_path))
    with SandboxServer(seed=SEED, process_delay_ms=0) as production:
        since = request_seq(production)
        refused = _apply(production, saved)
        assert refused.returncode == 1
        assert "(base URL differ)" in refused.stderr
        assert demo.base_url in refused.stderr and production.base_url in refused.stderr
        assert _writes(production, since) == []
        (tmp_path / "production").mkdir()
        made = _saved(production, tmp_path / "production", _file(tmp_path))
        compared = reconciler("plan-compare", str(saved), str(made), RECONCILER_PLAN_KEY=PLAN_KEY)
        assert compared.returncode == 1 and "another account" in compared.stderr
