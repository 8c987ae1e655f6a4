"""Ctrl-C during apply: nothing new is sent, requests in flight finish, the ledger is printed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from reconciler.sandbox import SandboxServer
from reconciler.service.models import WorkerStatus
from tests.apply.support import ROOT, cli_env, seed_workers
from tests.sandbox.support import Controls
from tests.service.helpers import client_for

APPLY_OPTIONS = ("--auto-approve", "--force", "--parallelism", "2", "--format", "json")
STATUS_PATH = "/contract-server/v2/general/worker/agreements/"
NEWCOMERS = "\n".join(
    f"  - {{externalId: ENG-{n:05d}, typeOfWorker: Worker, workerName: Ada, "
    f"workerSurname: Lovelace, workerEmail: w{n:05d}@example.com, countryIso: GB}}"
    for n in range(1000, 1150)
)


def test_ctrl_c_stops_sending_lets_requests_in_flight_finish_and_prints_the_ledger(
    sandbox: SandboxServer, controls: Controls, tmp_path: Path
) -> None:
    process, since = _apply_until_posts(sandbox, controls, tmp_path, latency_ms=200, posts=1)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    ended = controls.last_seq()

    assert process.returncode == 1, stderr
    assert "Interrupted" in stderr and "Traceback" not in stderr
    ledger = json.loads(stdout)
    assert ledger["interrupted"] is True and ledger["complete"] is False
    outcomes = {c["address"]: c for c in ledger["changes"]}
    assert len(outcomes) == 190  # every change is accounted for
    applied = [c for c in ledger["changes"] if c["outcome"] == "applied"]
    skipped = [c for c in ledger["changes"] if c["outcome"] == "skipped"]
    assert 1 <= len(applied) < 40
    assert len(applied) + len(skipped) == 190
    assert {c["detail"] for c in skipped} == {"interrupted before it was sent"}
    assert all(c["action"] == "inactivate" for c in applied)  # invitations never started

    # What the ledger says is what the service holds, and the process sent nothing after it.
    controls.set_faults()
    posts = [e for e in controls.requests(since) if e["method"] == "POST"]
    assert all(e["path"].startswith(STATUS_PATH) and e["status"] == 200 for e in posts)
    assert len(posts) == len(applied)
    with client_for(sandbox) as client:
        status = {w.agreement_id: w.status for w in client.list_workers()}
    inactivated = {a for a, s in status.items() if s == WorkerStatus.INACTIVATED}
    assert inactivated == {c["agreement_id"] for c in applied}
    assert all(e["method"] == "GET" for e in controls.requests(ended))


def test_a_second_ctrl_c_quits_at_once_and_prints_what_had_landed(
    sandbox: SandboxServer, controls: Controls, tmp_path: Path
) -> None:
    # 3 s a request: some are still in flight when the second Ctrl-C comes.
    process, _ = _apply_until_posts(sandbox, controls, tmp_path, latency_ms=3000, posts=3)
    process.send_signal(signal.SIGINT)
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    started = time.monotonic()
    stdout, stderr = process.communicate(timeout=60)
    controls.set_faults()

    assert process.returncode == 130, stderr
    assert time.monotonic() - started < 2.5  # it did not wait for the 3 s in flight
    assert "Traceback" not in stderr and "Quit at once (second Ctrl-C)" in stderr
    assert "Run `reconciler plan` to see the account now." in stderr
    ledger = json.loads(stdout)  # the ledger as it stood: every change accounted for
    assert ledger["interrupted"] is True and len(ledger["changes"]) == 190
    details = {c["detail"] for c in ledger["changes"] if c["outcome"] != "applied"}
    assert any(detail.startswith("not known: apply quit") for detail in details), details


def _apply_until_posts(
    sandbox: SandboxServer, controls: Controls, tmp_path: Path, *, latency_ms: int, posts: int
) -> tuple[subprocess.Popen[str], int]:
    """An apply of 40 inactivations and 150 invitations, started in the background and
    returned once `posts` inactivations reached the service (each taking `latency_ms`)."""
    with client_for(sandbox) as client:
        seed_workers(client, range(1, 41))
    desired = tmp_path / "workers.yaml"
    desired.write_text(f'version: 1\nscope: {{externalIdPrefix: "ENG-"}}\nworkers:\n{NEWCOMERS}\n')
    controls.set_faults(latency_ms=latency_ms)
    since = controls.last_seq()
    process = subprocess.Popen(
        [sys.executable, "-m", "reconciler", "apply", str(desired), *APPLY_OPTIONS],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(sandbox),
        cwd=ROOT,
        text=True,
    )
    deadline = time.monotonic() + 60
    while sum(e["method"] == "POST" for e in controls.requests(since)) < posts:
        assert process.poll() is None and time.monotonic() < deadline, "no inactivation started"
        time.sleep(0.02)
    return process, since
