"""Benchmark: the money report of `drift` costs the window, not the account's history.

    PYTHONPATH=. python benchmarks/drift_money.py [--outside 1000] [--inside 20] [--runs 3]
        [--latency-ms 20]

Two sandboxes, run in this process: one account holds `--inside` paylists made in the last 35
days and `--outside` paylists dated 100 days back (each of one paid payment, so the journal
holds their withdrawals too); the other holds only the `--inside` ones. `reconciler drift FILE
--format json` runs as a child process against each, as a user runs it, with `--latency-ms`
injected on every service request; the file has no payruns and `policy.moneyWindow: 35d`, so
the money of the window is read and nothing else of it. Each answer is checked (the `--inside`
paylists untraced, none of the others). The figure is the ratio of the medians, history over
window only; it passes at 1.1 or less.

A second pair of rows, for reference, adds a payrun to the file: a plan with payruns must read
every paylist's key (a payrun's paylist may be of any age), `parallelism` at a time, so that
ratio grows with the history by the latency floor of those reads (issue 24).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reconciler.sandbox import SandboxServer  # noqa: E402

TARGET = 1.1
WORKER = """\
version: 1
policy: {prune: false, moneyWindow: 35d}
workers:
  - {externalId: B-1, typeOfWorker: Worker, workerName: Ada, workerSurname: Lovelace,
     workerEmail: ada@example.com, countryIso: GB}
"""
PAYRUN = """\
payruns:
  - id: bench
    description: Benchmark
    payments:
      - {email: ada@example.com, amount: "1.00", description: "bench item"}
"""


def fill(server: SandboxServer, inside: int, outside: int) -> None:
    """The account: one ACTIVE worker, `outside` old paylists and `inside` recent ones."""
    headers = {"Authorization": f"Bearer {server.token}"}
    with httpx.Client(base_url=server.base_url, headers=headers, timeout=60) as api:
        invited = api.post(
            "/contract/workers/inviteWorkersBulkLocked",
            json=[
                {
                    "workerName": "Ada",
                    "workerSurname": "Lovelace",
                    "typeOfWorker": "Worker",
                    "workerEmail": "ada@example.com",
                    "countryIso": "GB",
                    "externalId": "B-1",
                }
            ],
        ).json()
        api.post(
            f"/_sandbox/agreements/{invited[0]['agreementId']}/status", json={"status": "ACTIVE"}
        )
        back = (datetime.now(UTC) - timedelta(days=100)).isoformat()
        made_ids = []
        for number in range(outside + inside):
            body = {
                "description": f"outside the files {number}",
                "idempotence_key": f"{number:032d}",
                "payments": [
                    {
                        "worker_email": "ada@example.com",
                        "amount": "1.00",
                        "description": f"p{number}",
                    }
                ],
            }
            made = api.post("/payment-agent/paylists", json=body)
            made.raise_for_status()
            made_ids.append(made.json()["id"])
        # Settled first, then dated: a payment settled after its paylist is dated moves its
        # money now, in the window (and drift rightly reports its paylist as untraced).
        api.post("/_sandbox/process").raise_for_status()
        for paylist_id in made_ids[:outside]:
            dated = api.post(
                f"/_sandbox/paylists/{paylist_id}/creation-date", json={"creation_date": back}
            )
            dated.raise_for_status()


def one_run(server: SandboxServer, desired: Path, inside: int) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECONCILER_")}
    env |= {
        "PYTHONPATH": str(ROOT),
        "RECONCILER_BASE_URL": server.base_url,
        "RECONCILER_TOKEN": server.token,
        "RECONCILER_CLIENT_ID": str(server.client_id),
    }
    command = [sys.executable, "-m", "reconciler", "drift", str(desired), "--format", "json"]
    started = time.perf_counter()
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if result.returncode not in (0, 2):
        raise SystemExit(f"drift failed: {result.stderr}")
    untraced = json.loads(result.stdout)["money"]["untraced"]["paylists"]
    if len(untraced) != inside:
        raise SystemExit(f"expected {inside} untraced paylists, got {len(untraced)}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outside", type=int, default=1000)
    parser.add_argument("--inside", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency-ms", type=int, default=20)
    args = parser.parse_args()
    print(
        f"# {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    with tempfile.TemporaryDirectory() as folder:
        plain, with_payrun = Path(folder, "plain.yaml"), Path(folder, "payrun.yaml")
        plain.write_text(WORKER)
        with_payrun.write_text(WORKER + PAYRUN)
        medians: dict[tuple[str, int], float] = {}
        for outside in (args.outside, 0):
            with SandboxServer(process_delay_ms=0) as server:
                fill(server, args.inside, outside)
                httpx.post(
                    f"{server.base_url}/_sandbox/faults", json={"latency_ms": args.latency_ms}
                )
                for name, desired in (("window", plain), ("payrun", with_payrun)):
                    times = [one_run(server, desired, args.inside) for _ in range(args.runs)]
                    medians[(name, outside)] = statistics.median(times)
                    print(
                        f"drift, {name:6} file, {args.inside} paylists in the window and "
                        f"{outside:>5} before it: {medians[(name, outside)]:.3f} s (median of "
                        f"{args.runs}, {args.latency_ms} ms a request)"
                    )
    ratio = medians[("window", args.outside)] / medians[("window", 0)]
    reference = medians[("payrun", args.outside)] / medians[("payrun", 0)]
    print(f"money window: history / window only = {ratio:.2f}x (target {TARGET}x or less)")
    print(f"with a payrun, for reference (every key read): {reference:.2f}x")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
