"""Variants of issue 30's money attacks tried against the merged code (they hold): a payment
in flight under a key no payrun of the files has, and a paylist under a payrun's key holding
part of it. Through the CLI against the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from reconciler.plan.payruns import paylist_key
from reconciler.sandbox import SandboxServer
from tests.apply.support import paylist_posts, request_seq
from tests.apply.test_money_in_doubt import (
    _file,
    _headers,
    _money,
    _money_file,
    _payments,
    _payrun,
    _process,
    _run,
    held,
    quick,
    slow,
)

__all__ = ["held", "quick", "slow"]


def test_a_pending_payment_made_by_hand_under_another_key_is_paid_before(
    slow: SandboxServer, tmp_path: Path
) -> None:
    body = {
        "description": "by hand",
        "idempotence_key": "by-hand-pending".ljust(32, "0"),
        "payments": [
            {
                "description": "January design review",
                "amount": 1500,
                "worker_email": "ada@example.com",
            }
        ],
    }
    made = httpx.post(f"{slow.base_url}/payment-agent/paylists", json=body, headers=_headers(slow))
    assert made.is_success, made.text
    assert [p["status"] for p in _payments(slow)] == ["PENDING"]
    path = _file(
        tmp_path,
        "pay.yaml",
        _payrun("2027-01-x", ("Ada@example.com", "1500", "January design review")),
    )
    since = request_seq(slow)
    applied = _run("apply", str(path), "--auto-approve", server=slow)
    assert applied.returncode == 1, applied.stdout + applied.stderr
    assert paylist_posts(slow, since) == []


def test_a_paylist_under_a_payruns_key_holding_part_of_it_is_not_paid_through_payruns(
    quick: SandboxServer, tmp_path: Path
) -> None:
    december = _payrun(
        "2026-12-retainers",
        ("ada@example.com", "1000.00", "December retainer"),
        ("grace@example.com", "2000.00", "December retainer"),
    )
    path = _money_file(tmp_path, december)
    body = {
        "description": "2026-12-retainers",
        "idempotence_key": paylist_key("2026-12-retainers"),
        "payments": [
            {"description": "December retainer", "amount": 1000, "worker_email": "ada@example.com"}
        ],
    }
    made = httpx.post(
        f"{quick.base_url}/payment-agent/paylists", json=body, headers=_headers(quick)
    )
    assert made.is_success, made.text
    _process(quick)
    money = _money(quick, path)
    assert money["paid"]["count"] == 0 and money["untraced"]["count"] == 1, money
    planned = _run("plan", str(path), "--format", "json", server=quick)
    states = {p["id"]: p["state"] for p in json.loads(planned.stdout)["payruns"]}
    strict = _run("drift", str(path), "--strict", server=quick)
    assert states["2026-12-retainers"] == "conflict"
    assert strict.returncode == 2
