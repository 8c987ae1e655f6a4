"""Benchmark: `reconciler report` over a year of payroll, beside reading those paylists alone.

    PYTHONPATH=. python benchmarks/report_year.py [--months 12] [--payments 1000] [--runs 5]
        [--latency-ms 20] [--source]

The sandbox runs in this process: 1,000 ACTIVE workers and `--months` paylists of `--payments`
payments each (a payrun's, under its key, one a month of 2025, each dated in its month; the
wallet runs short in the last month, so some of its payments FAIL), and a desired-state file
holding those payruns. As a user runs them, each a child process, alternately, `--runs` times:

- `reconciler report FILE` (text) and `reconciler report` (the whole account, text), and
  `reconciler report FILE --format json` and `--format markdown`;
- the reads alone: a child process that opens the same client and reads the same paylists
  (the listing, each one's key by id, the payments listing: `MoneyReading`, the reads the
  report makes) and prints their count, nothing else: what no register can take less than.
  It reads them as the report does, with the garbage collector paused
  (`reconciler.session.collector.collector_paused`, which `report` holds while it reads, loads
  the file and builds the register): the ratio is the register's cost, not the collector's.

The reconciler's bytecode is compiled first, into a cache of this run's own
(`PYTHONPYCACHEPREFIX`), as an install compiles it: this machine sets PYTHONDONTWRITEBYTECODE,
and otherwise each child compiles again the modules it imports (the report imports the file's
loading, which the reads alone do not). `--source` measures without it, as the figures before
issue 47's last round were.

Each answer is checked (every month there, the failed payments counted, the payruns named).
The figure is the ratio of the medians, `report FILE` over the reads alone; target 1.2x. Beside
it, the median of each run's own ratio (the two run one after the other), and the ratio of the
children's CPU time, which the machine's other jobs move less than the wall time.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from apply_support import cli_env, timed_run  # noqa: E402

from reconciler.plan.payruns import paylist_key  # noqa: E402
from reconciler.sandbox import SandboxServer  # noqa: E402

TARGET = 1.2
WORKERS = 1000
AMOUNT = Decimal("1000.00")
#: The last month's payments the wallet cannot pay.
SHORT = 50

READS_ALONE = """\
import os, sys
from reconciler.plan.paylist_reads import MoneyReading
from reconciler.service.client import ServiceClient
from reconciler.service.config import resolve_config
from reconciler.session.collector import collector_paused
config = resolve_config(base_url=os.environ["RECONCILER_BASE_URL"], environ=os.environ)
with collector_paused(), ServiceClient(config, read_only=True) as client:
    client.check_credentials()
    reading = MoneyReading(
        client, payruns=True, window=None, parallelism=config.parallelism, wallet=False
    )
    paylists = reading.result().paylists
print(len(paylists), sum(len(p.payments) for p in paylists))
"""


def write_files(folder: Path, months: int, payments: int) -> tuple[Path, Path]:
    """The seed (1,000 ACTIVE workers) and the desired state holding the year's payruns."""
    seed = folder / "seed.yaml"
    lines = ["workers:"]
    for n in range(WORKERS):
        lines += [f"  - externalId: PAY-{n:05d}", "    firstName: Ada", "    lastName: Lovelace"]
        lines += [f"    email: p{n:05d}@example.com", "    country: GB", "    status: ACTIVE"]
    seed.write_text("\n".join(lines) + "\n")
    desired = ["version: 1", "workers: []", "payruns:"]
    for month in range(1, months + 1):
        desired += [
            f"  - id: 2025-{month:02d}-contractors",
            f"    description: 2025-{month:02d} contractors",
            "    payments:",
        ]
        desired += [
            f'      - {{email: p{n % WORKERS:05d}@example.com, amount: "{AMOUNT}", '
            f'description: "2025-{month:02d} pay {n}"}}'
            for n in range(payments)
        ]
    files = folder / "payroll.yaml"
    files.write_text("\n".join(desired) + "\n")
    return seed, files


def pay_the_year(server: SandboxServer, months: int, payments: int) -> None:
    """Each month's paylist under its payrun's key, settled, then dated in its month."""
    headers = {"Authorization": f"Bearer {server.token}"}
    with httpx.Client(base_url=server.base_url, headers=headers, timeout=120) as client:
        # The demo wallet holds 10,000.00: enough for every payment but the last SHORT.
        owed = AMOUNT * (months * payments - SHORT) - Decimal("10000.00")
        client.post(
            f"/_sandbox/clients/{server.client_id}/top-up", json={"amount": str(owed)}
        ).raise_for_status()
        for month in range(1, months + 1):
            payrun_id = f"2025-{month:02d}-contractors"
            items = [
                {
                    "description": f"2025-{month:02d} pay {n}",
                    "amount": str(AMOUNT),
                    "worker_email": f"p{n % WORKERS:05d}@example.com",
                }
                for n in range(payments)
            ]
            body = {
                "description": f"2025-{month:02d} contractors",
                "idempotence_key": paylist_key(payrun_id),
                "payments": items,
            }
            made = client.post("/payment-agent/paylists", json=body)
            made.raise_for_status()
            client.post("/_sandbox/process").raise_for_status()
            client.post(
                f"/_sandbox/paylists/{made.json()['id']}/creation-date",
                json={"creation_date": f"2025-{month:02d}-15"},
            ).raise_for_status()


def _children_cpu() -> float:
    """The CPU seconds (user and system) the finished child processes have used so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def check(name: str, output: str, months: int) -> None:
    """The answer is the year's register: every month, and the failures counted."""
    wanted = [f"2025-{month:02d}" for month in range(1, months + 1)]
    missing = [month for month in wanted if month not in output]
    failed = "INSUFFICIENT" in output
    if missing or not failed:
        raise SystemExit(f"{name}: not the year's register (missing {missing}): {output[:500]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--months", type=int, default=12)
    parser.add_argument("--payments", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--source", action="store_true", help="no bytecode compiled first")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(
        f"# {platform.machine()} {platform.python_implementation()} {platform.python_version()},"
        f" {os.cpu_count()} CPUs, load average {load:.2f}"
    )
    with tempfile.TemporaryDirectory() as folder:
        seed, files = write_files(Path(folder), args.months, args.payments)
        bytecode: dict[str, str] = {}
        if not args.source:
            bytecode["PYTHONPYCACHEPREFIX"] = str(Path(folder) / "bytecode")
            compiled = [sys.executable, "-m", "compileall", "-q", str(ROOT / "reconciler")]
            subprocess.run(
                compiled, env=os.environ | bytecode, check=True, stdout=subprocess.DEVNULL
            )
        with SandboxServer(seed=seed, process_delay_ms=0) as server:
            started = time.perf_counter()
            pay_the_year(server, args.months, args.payments)
            print(
                f"setup: {args.months} paylists of {args.payments:,} paid in "
                f"{time.perf_counter() - started:.1f} s"
            )
            faults = {"latency_ms": args.latency_ms}
            httpx.post(f"{server.base_url}/_sandbox/faults", json=faults).raise_for_status()
            env = cli_env(server.base_url, server.token, server.client_id) | bytecode
            report = [sys.executable, "-m", "reconciler", "report"]
            commands = {
                "reads alone": [sys.executable, "-c", READS_ALONE],
                "report FILE": [*report, str(files)],
                "report (the whole account)": report,
                "report FILE --format json": [*report, str(files), "--format", "json"],
                "report FILE --format markdown": [*report, str(files), "--format", "markdown"],
            }
            times: dict[str, list[float]] = {name: [] for name in commands}
            cpu: dict[str, list[float]] = {name: [] for name in commands}
            for _ in range(args.runs):
                for name, command in commands.items():
                    before = _children_cpu()
                    seconds, result = timed_run(command, env)
                    cpu[name].append(_children_cpu() - before)
                    if result.returncode != 0:
                        raise SystemExit(f"{name} failed: {result.stderr[-2000:]}")
                    if name == "reads alone":
                        expected = f"{args.months} {args.months * args.payments}"
                        if result.stdout.split() != expected.split():
                            raise SystemExit(f"the reads read {result.stdout!r}")
                    else:
                        check(name, result.stdout, args.months)
                    times[name].append(seconds)
    alone = statistics.median(times["reads alone"])
    alone_cpu = statistics.median(cpu["reads alone"])
    for name, runs in times.items():
        median = statistics.median(runs)
        pairs = statistics.median(t / a for t, a in zip(runs, times["reads alone"], strict=True))
        used = statistics.median(cpu[name])
        print(
            f"{name:30} {median:.3f} s = {median / alone:.2f} x the reads alone (pairs: "
            f"{pairs:.2f} x), CPU {used:.3f} s = {used / alone_cpu:.2f} x "
            f"({', '.join(f'{t:.3f}' for t in runs)})"
        )
    ratio = statistics.median(times["report FILE"]) / alone
    verdict = "met" if ratio <= TARGET else "MISSED"
    print(
        f"report FILE over the reads alone: {ratio:.2f} x (target <= {TARGET} x): {verdict}; "
        f"{args.months} payruns of {args.payments:,} payments, {args.latency_ms} ms a request, "
        f"median of {args.runs}, load average {os.getloadavg()[0]:.2f} at the end; "
        f"{'from the source' if args.source else 'bytecode compiled first'}"
    )
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
