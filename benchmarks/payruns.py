"""Benchmark: a payrun of 1,000 payments to 1,000 ACTIVE workers, planned and paid end to end.

    PYTHONPATH=. python benchmarks/payruns.py [--payments 1000] [--runs 3]

The sandbox runs in this process, its account seeded with the ACTIVE workers (and a wallet that
covers the payrun); `reconciler apply FILE --auto-approve --format json` runs as a child process,
as a user runs it: start-up, loading the file, the refresh (workers, webhook, paylists, wallet),
the plan, the paylist's creation, and following settlement until no payment is PENDING. Each run
starts from a fresh sandbox, timed with 50 ms of latency injected on every service request, and
with none.

The floor: the round trips an apply cannot avoid, times 50 ms, plus the same run at 0 ms (the
CPU of both sides and the sandbox's own settlement time on this machine). The unavoidable round
trips: the webhook, the first page of workers, the rest of them fetched concurrently, the
paylists listing, the wallet, the creation, and the first page and the rest of the paylist's
payments once settled: 8. Passes when the 50 ms run (median) is within 1.3x of the floor.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reconciler.sandbox import SandboxServer  # noqa: E402

LATENCY_MS = 50
ROUND_TRIPS = 8
TOLERANCE = 1.3


def write_files(folder: Path, payments: int) -> tuple[Path, Path]:
    seed = folder / "seed.yaml"
    lines = ["workers:"]
    for n in range(payments):
        lines += [
            f"  - externalId: PAY-{n:05d}",
            "    firstName: Ada",
            "    lastName: Lovelace",
            f"    email: p{n:05d}@example.com",
            "    country: GB",
            "    status: ACTIVE",
        ]
    seed.write_text("\n".join(lines) + "\n")
    desired = folder / "payroll.yaml"
    lines = ["version: 1", "policy: {prune: false}", "payruns:", "  - id: bench"]
    lines += ["    description: Benchmark", "    payments:"]
    lines += [
        f'      - {{email: p{n:05d}@example.com, amount: "1.00", description: "item {n}"}}'
        for n in range(payments)
    ]
    desired.write_text("\n".join(lines) + "\n")
    return seed, desired


def one_run(seed: Path, desired: Path, latency: int, payments: int) -> float:
    with SandboxServer(seed=seed, process_delay_ms=0) as server:
        import httpx

        httpx.post(f"{server.base_url}/_sandbox/faults", json={"latency_ms": latency})
        env = {k: v for k, v in os.environ.items() if not k.startswith("RECONCILER_")}
        env |= {
            "PYTHONPATH": str(ROOT),
            "RECONCILER_BASE_URL": server.base_url,
            "RECONCILER_TOKEN": server.token,
            "RECONCILER_CLIENT_ID": str(server.client_id),
        }
        command = [sys.executable, "-m", "reconciler", "apply", str(desired), "--auto-approve"]
        started = time.perf_counter()
        result = subprocess.run(
            [*command, "--format", "json"], env=env, capture_output=True, text=True, check=False
        )
        seconds = time.perf_counter() - started
    ledger = json.loads(result.stdout or "{}")
    paid = [row for row in ledger.get("changes", []) if row["action"] == "pay"]
    if result.returncode != 0 or len(paid) != payments:
        raise SystemExit(f"the payrun was not paid: {result.stderr[-2000:]}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--payments", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    with tempfile.TemporaryDirectory() as folder:
        seed, desired = write_files(Path(folder), args.payments)
        times = {
            latency: statistics.median(
                one_run(seed, desired, latency, args.payments) for _ in range(args.runs)
            )
            for latency in (0, LATENCY_MS)
        }
    floor = times[0] + ROUND_TRIPS * LATENCY_MS / 1000
    ratio = times[LATENCY_MS] / floor
    print(f"{args.payments} payments: {times[0]:.2f} s at 0 ms, {times[LATENCY_MS]:.2f} s at "
          f"{LATENCY_MS} ms; floor {floor:.2f} s ({ROUND_TRIPS} round trips x {LATENCY_MS} ms "
          f"+ the 0 ms run); ratio {ratio:.2f} (target <= {TOLERANCE})")  # fmt: skip
    return 0 if ratio <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
