"""A retry is one readable line (what failed, why, attempt n of m, when), never stamina's raw
`retry_scheduled` event with `callable='<context block>'`."""

from __future__ import annotations

import json

import httpx

from reconciler.sandbox import SandboxServer
from tests.cli import ROOT, reconciler


def test_retries_are_said_readably(sandbox: SandboxServer) -> None:
    httpx.post(
        f"{sandbox.base_url}/_sandbox/faults",
        json={"error_rate": 0.5, "error_status": 503, "seed": 3},  # four 503s, then answers
    ).raise_for_status()
    result = reconciler(
        "plan", str(ROOT / "examples" / "quickstart.yaml"), server=sandbox,
        RECONCILER_RETRY_ATTEMPTS="10",
    )  # fmt: skip
    httpx.post(f"{sandbox.base_url}/_sandbox/faults", json={}).raise_for_status()
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    retries = [event for event in events if event["event"].startswith("retrying in")]
    assert retries, result.stderr
    assert all(" of 10): " in event["event"] and "503" in event["event"] for event in retries)
    assert "retry_scheduled" not in result.stderr and "<context block>" not in result.stderr
