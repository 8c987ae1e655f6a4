"""Shared by the apply benchmarks: a desired-state file, seeding, and one CLI run, timed."""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]


def worker_line(n: int) -> str:
    return (
        f"  - {{externalId: ENG-{n:06d}, typeOfWorker: Worker, workerName: Ada, "
        f"workerSurname: Lovelace, workerEmail: w{n:06d}@example.com, countryIso: GB, "
        f"jobTitle: Engineer}}"
    )


def write_desired(path: Path, numbers: Iterable[int]) -> Path:
    """A desired-state file (scope ENG-, prune on) with these workers."""
    lines = ["version: 1", 'scope: {externalIdPrefix: "ENG-"}', "workers:"]
    lines += [worker_line(n) for n in numbers]
    path.write_text("\n".join(lines) + "\n")
    return path


def seed(base_url: str, token: str, numbers: list[int]) -> None:
    """Invite these workers straight through the API, 100 a request, 4 requests at a time."""
    headers = {"Authorization": f"Bearer {token}"}

    def batch(chunk: list[int]) -> None:
        body = [
            {
                "workerName": "Ada",
                "workerSurname": "Lovelace",
                "typeOfWorker": "Worker",
                "workerEmail": f"w{n:06d}@example.com",
                "countryIso": "GB",
                "jobTitle": "Engineer",
                "externalId": f"ENG-{n:06d}",
            }
            for n in chunk
        ]
        answer = httpx.post(
            f"{base_url}/contract/workers/inviteWorkersBulkLocked",
            json=body,
            headers=headers,
            timeout=60,
        )
        answer.raise_for_status()

    chunks = [numbers[i : i + 100] for i in range(0, len(numbers), 100)]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(batch, chunks))


def control(base_url: str, path: str, body: Any = None, method: str = "POST") -> Any:
    answer = httpx.request(method, f"{base_url}/_sandbox/{path}", json=body, timeout=120)
    answer.raise_for_status()
    return answer.json() if answer.content else None


def cli_env(base_url: str, token: str, client_id: int | None = None) -> dict[str, str]:
    """This environment without its RECONCILER_ settings, pointed at a sandbox's account."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("RECONCILER_")}
    env |= {"PYTHONPATH": str(ROOT), "RECONCILER_BASE_URL": base_url, "RECONCILER_TOKEN": token}
    if client_id is not None:
        env["RECONCILER_CLIENT_ID"] = str(client_id)
    return env


def timed_run(command: list[str], env: dict[str, str]) -> tuple[float, Any]:
    """`command` as a user runs it: wall seconds and the finished process (output as text)."""
    started = time.perf_counter()
    result = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT, check=False)
    return time.perf_counter() - started, result


def run_apply(
    base_url: str, token: str, desired: Path, *options: str
) -> tuple[float, int, dict[str, Any]]:
    """`reconciler apply DESIRED --auto-approve --force --format json OPTIONS`, as a user runs it.

    Returns the wall time of the whole process, its exit status and the ledger.
    """
    command = [sys.executable, "-m", "reconciler", "apply", str(desired)]
    command += ["--auto-approve", "--force", "--format", "json", *options]
    seconds, result = timed_run(command, cli_env(base_url, token))
    try:
        ledger = json.loads(result.stdout)
    except ValueError:
        raise SystemExit(f"apply printed no ledger:\n{result.stderr[-3000:]}") from None
    return seconds, result.returncode, ledger


def workers(base_url: str, token: str) -> list[dict[str, Any]]:
    """Every agreement, read straight from the API (page by page, no faults expected)."""
    headers = {"Authorization": f"Bearer {token}"}
    found: list[dict[str, Any]] = []
    page = 1  # the service reads pages from 1 (service-contract.md)
    while True:
        answer = httpx.get(
            f"{base_url}/contract/workers/list",
            params={"page": page, "size": 200},
            headers=headers,
            timeout=60,
        )
        answer.raise_for_status()
        body = answer.json()
        found += body["content"]
        if body.get("last", True):
            return found
        page += 1


def start(
    doc: str, invitations: int, inactivations: int, runs: int | None = None
) -> argparse.Namespace:
    """Parse the sizes a benchmark takes, set up logging, and say which machine this is."""
    from reconciler import logs

    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--invitations", type=int, default=invitations)
    parser.add_argument("--inactivations", type=int, default=inactivations)
    if runs is not None:
        parser.add_argument("--runs", type=int, default=runs, help="timed runs (median)")
    args = parser.parse_args()
    logs.configure("json", "warning")
    print(f"machine: {platform.machine()} {platform.processor()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")  # fmt: skip
    return args
