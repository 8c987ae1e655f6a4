"""Helpers for apply's tests: run a plan through the real client, and compare with the sandbox."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from collections.abc import Iterable
from typing import Any

import httpx

from reconciler.apply import Executor, Ledger, Outcome
from reconciler.desired.model import DesiredState
from reconciler.plan import Plan, diff
from reconciler.plan.refresh import refresh
from reconciler.sandbox import SandboxServer
from reconciler.service.client import ServiceClient
from reconciler.service.models import Invitation, Worker, WorkerStatus
from tests.cli import ROOT, reconciler, user_environment
from tests.plan.factories import desired_state, want

INVITE_PATH = "/contract/workers/inviteWorkersBulkLocked"


def worker(n: int, **fields: Any) -> Any:
    """Desired worker number `n` (ENG-0000n, w0000n@example.com)."""
    return want(f"ENG-{n:05d}", worker_email=f"w{n:05d}@example.com", **fields)


def invitation(n: int) -> Invitation:
    """The invitation for worker number `n`, to put it into the sandbox beforehand."""
    return Invitation(
        worker_name="Ada",
        worker_surname="Lovelace",
        type_of_worker="Worker",
        worker_email=f"w{n:05d}@example.com",
        country_iso="GB",
        job_title="Engineer",
        external_id=f"ENG-{n:05d}",
    )


def seed_workers(client: ServiceClient, numbers: Iterable[int]) -> None:
    """Invite the workers with these numbers, 100 a request."""
    pending = list(numbers)
    for start in range(0, len(pending), 100):
        client.invite_workers([invitation(n) for n in pending[start : start + 100]])


def wanting(numbers: Iterable[int], **kwargs: Any) -> DesiredState:
    """A desired state of these workers (scope ENG-, prune on)."""
    return desired_state(*(worker(n) for n in numbers), **kwargs)


def apply_once(
    client: ServiceClient, desired: DesiredState, parallelism: int = 4
) -> tuple[Plan, Ledger]:
    """Refresh, plan and apply, as `reconciler apply --auto-approve --force` does."""
    plan = diff(desired, refresh(client))
    return plan, Executor(client, parallelism=parallelism).apply(plan)


def assert_ledger_matches(ledger: Ledger, live: list[Worker]) -> None:
    """Every invite the ledger says applied has an open agreement, every failed one none;
    every inactivation applied is INACTIVATED, every other one still open."""
    by_id: dict[str, list[Worker]] = {}
    status = {w.agreement_id: w.status for w in live}
    for w in live:
        if w.external_id is not None and w.status.is_open:
            by_id.setdefault(w.external_id, []).append(w)
    for entry, change in zip(ledger.entries, ledger.changes, strict=True):
        if entry.action == "invite":
            holders = by_id.get(change.external_id, [])  # type: ignore[union-attr]
            if entry.outcome is Outcome.APPLIED:
                assert len(holders) == 1, entry
                if entry.agreement_id is not None:
                    assert holders[0].agreement_id == entry.agreement_id, entry
            else:
                assert holders == [], entry
        elif entry.action == "inactivate":
            inactive = status[change.agreement.agreement_id] == WorkerStatus.INACTIVATED  # type: ignore[union-attr]
            assert inactive == (entry.outcome is Outcome.APPLIED), entry


# --- the command line, as a user runs it ---------------------------------------------------

QUICKSTART = ROOT / "examples" / "quickstart.yaml"
SEED = ROOT / "examples" / "sandbox-seed.yaml"
#: A payrun of two payments to ACTIVE workers of the demo seed: 1,750.00 in all.
NOVEMBER = """\
payruns:
  - id: 2026-11-contractors
    description: November 2026 contractors
    payments:
      - {worker: ENG-001, amount: "1500.00", description: November 2026 retainer}
      - {email: grace@example.com, amount: 250, description: November 2026 review}
"""


def cli_env(server: SandboxServer, **extra: str) -> dict[str, str]:
    """The environment of a CLI run against `server`, with no stray `RECONCILER_*` settings."""
    return user_environment(server, **extra)


def cli(
    *args: str, server: SandboxServer, stdin: Any = subprocess.DEVNULL, **extra: str
) -> subprocess.CompletedProcess[str]:
    """`python -m reconciler ARGS` against `server`; stdin is no terminal unless given one."""
    return reconciler(*args, server=server, stdin=stdin, **extra)


def request_seq(server: SandboxServer) -> int:
    """The sequence number of the sandbox's last logged request (0 before any)."""
    log = httpx.get(f"{server.base_url}/_sandbox/requests").json()
    return int(log[-1]["seq"]) if log else 0


def paylist_posts(server: SandboxServer, since: int) -> list[str]:
    """The paylist creations (and any other POST to a paylists path) logged after `since`."""
    log = httpx.get(f"{server.base_url}/_sandbox/requests", params={"since": since}).json()
    return [e["path"] for e in log if e["method"] == "POST" and "paylists" in e["path"]]


def ask_on_a_terminal(
    path: Any, server: SandboxServer, **env: str
) -> tuple[subprocess.Popen[bytes], int, bytes]:
    """`apply PATH` with a pseudo-terminal as stdin and stderr, returned while it asks its
    question: the process, the terminal's leader end, and what the terminal showed so far."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "reconciler", "apply", str(path)],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=follower,
        env=cli_env(server, **env),
        cwd=ROOT,
    )
    os.close(follower)
    seen = b""
    while b"Enter a value" not in seen:
        seen += os.read(leader, 4096)
    return process, leader, seen


def answer_on_the_terminal(
    process: subprocess.Popen[bytes], leader: int, seen: bytes, answer: str
) -> tuple[int, str]:
    """Type `answer` to the question; the exit status and everything shown (terminal, stdout)."""
    os.write(leader, answer.encode() + b"\n")
    stdout, _ = process.communicate(timeout=120)
    try:
        while chunk := os.read(leader, 4096):
            seen += chunk
    except OSError:  # the terminal closes with the process
        pass
    os.close(leader)
    return process.returncode, seen.decode(errors="replace") + stdout.decode()
