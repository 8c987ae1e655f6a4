"""Benchmark: a payrun of 1,000 computed payments (a `period`) against the same payrun written out.

    PYTHONPATH=. python benchmarks/payrun_period.py [--workers 1000] [--runs 5]

The sandbox runs in this process with `--workers` ACTIVE workers. `reconciler plan FILE` runs as
a child process, as a user runs it, on two files that pay the same payments: one whose workers
carry `pay` and whose payrun has `period:` (its payments computed by the plan once the account
is read), and one with no `pay` whose payrun writes each of those payments out (`worker:`,
amount, the payrun's description). Both plans print the same payrun to pay; the runs are
interleaved and the median of `--runs` of each is taken.

Target: the period's plan within 1.2x the time of the written one (issue 47); the ratio is
printed.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from apply_support import cli_env, timed_run  # noqa: E402

from reconciler.sandbox import SandboxServer  # noqa: E402

TOLERANCE = 1.2
PERIOD = "2026-12"
DESCRIPTION = "December 2026 contractors"


def write_files(folder: Path, workers: int) -> tuple[Path, Path, Path]:
    """The seed, the file with a period payrun and the file with the same payrun written out."""
    seed = folder / "seed.yaml"
    lines = ["workers:"]
    for n in range(workers):
        lines += [f"  - externalId: PAY-{n:05d}", "    firstName: Ada", "    lastName: Lovelace"]
        lines += [f"    email: p{n:05d}@example.com", "    country: GB", "    status: ACTIVE"]
    seed.write_text("\n".join(lines) + "\n")

    def worker(n: int, pay: str) -> str:
        return (
            f"  - {{externalId: PAY-{n:05d}, typeOfWorker: Worker, workerName: Ada, "
            f"workerSurname: Lovelace, workerEmail: p{n:05d}@example.com, countryIso: GB{pay}}}"
        )

    head = ['version: 1\nscope: {externalIdPrefix: "PAY-"}\nworkers:']
    payrun = ["payruns:", "  - id: bench-period", f"    description: {DESCRIPTION}"]
    period = folder / "period.yaml"
    period.write_text(
        "\n".join(
            head
            + [worker(n, f', pay: "{_amount(n)}"') for n in range(workers)]
            + [*payrun, f"    period: {PERIOD}"]
        )
        + "\n"
    )
    written = folder / "written.yaml"
    payments = [
        f'      - {{worker: PAY-{n:05d}, amount: "{_amount(n)}", description: {DESCRIPTION}}}'
        for n in range(workers)
    ]
    written.write_text(
        "\n".join(
            head + [worker(n, "") for n in range(workers)] + [*payrun, "    payments:", *payments]
        )
        + "\n"
    )
    return seed, period, written


def _amount(n: int) -> str:
    return f"{1000 + n % 7 * 100}.00"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workers", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"period": [], "written": []}
    outputs: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as folder:
        seed, period, written = write_files(Path(folder), args.workers)
        with SandboxServer(seed=seed, process_delay_ms=0) as server:
            env = cli_env(server.base_url, server.token, server.client_id)
            for _ in range(args.runs):
                for name, path in (("written", written), ("period", period)):
                    command = [sys.executable, "-m", "reconciler", "plan", str(path)]
                    seconds, result = timed_run(command, env)
                    if result.returncode != 0 or "1 payrun to pay" not in result.stdout:
                        print(f"{name}: unexpected plan:\n{result.stdout}\n{result.stderr}")
                        return 1
                    times[name].append(seconds)
                    outputs[name] = _payrun_total(result.stdout)
    if outputs["period"] != outputs["written"]:
        print(f"the two plans differ: {outputs}")
        return 1
    for name, runs in times.items():
        print(f"plan, payrun {name}: " + ", ".join(f"{t:.2f}" for t in runs) + " s")
    ratio = statistics.median(times["period"]) / statistics.median(times["written"])
    print(
        f"{args.workers:,} payments: period {statistics.median(times['period']):.2f} s, written "
        f"{statistics.median(times['written']):.2f} s, ratio {ratio:.2f}x "
        f"(target {TOLERANCE}x: {'met' if ratio <= TOLERANCE else 'NOT met'}); "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs"
    )
    return 0 if ratio <= TOLERANCE else 1


def _payrun_total(stdout: str) -> str:
    """The summary's payrun phrase: the same payments to pay say the same total."""
    for line in stdout.splitlines():
        if line.startswith("Plan:"):
            return line[line.index("payrun") :]
    return ""


if __name__ == "__main__":
    raise SystemExit(main())
