"""Benchmark: `reconciler apply` of 10,000 invitations and 1,000 inactivations.

    PYTHONPATH=. python benchmarks/apply_10k.py [--invitations 10000] [--inactivations 1000]
                                                [--runs 3]

The sandbox runs in this process; `reconciler apply FILE --auto-approve --force --parallelism 4
--format json` runs as a child process, end to end as a user runs it (start-up, loading the
file, the refresh, the plan, the apply, the ledger). The account is reset and seeded with the
workers to inactivate before each run. Timed with 50 ms of latency injected on every service
request, and with none. The floor is the larger of the round-trip floor ((batches of 100 +
inactivation calls) / parallelism x 50 ms) and the same run at 0 ms latency (the CPU cost of
both sides on this machine). Passes when the 50 ms run (median of `--runs`, default 3) is
within 1.5x of the floor.
"""

from __future__ import annotations

import math
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.apply_support import control, run_apply, seed, start, write_desired  # noqa: E402
from reconciler.sandbox import SandboxServer  # noqa: E402

PARALLELISM = 4
LATENCY_MS = 50
TOLERANCE = 1.5


def one_run(server: SandboxServer, desired: Path, removed: list[int], latency: int) -> float:
    control(server.base_url, "reset")
    control(server.base_url, "faults", {})
    seed(server.base_url, server.token, removed)
    control(server.base_url, "faults", {"latency_ms": latency})
    seconds, status, ledger = run_apply(
        server.base_url, server.token, desired, "--parallelism", str(PARALLELISM)
    )
    expected = len(ledger["changes"])
    if status != 0 or not ledger["complete"] or ledger["summary"]["applied"] != expected:
        raise SystemExit(f"apply did not complete: {ledger['summary']}")
    return seconds


def main() -> int:
    args = start(__doc__ or "", invitations=10_000, inactivations=1_000, runs=3)
    removed = list(range(1, args.inactivations + 1))
    kept_from = args.inactivations + 1
    with tempfile.TemporaryDirectory() as folder, SandboxServer() as server:
        desired = write_desired(
            Path(folder) / "workers.yaml", range(kept_from, kept_from + args.invitations)
        )
        times = {}
        for latency in (0, LATENCY_MS):
            runs = [one_run(server, desired, removed, latency) for _ in range(args.runs)]
            times[latency] = statistics.median(runs)
            print(f"{latency:>2} ms latency: apply took "
                  f"{', '.join(f'{run:.2f}' for run in runs)} s")  # fmt: skip
    batches = math.ceil(args.invitations / 100)
    calls = batches + args.inactivations
    round_trips = calls / PARALLELISM * LATENCY_MS / 1000
    floor = max(round_trips, times[0])
    print(f"requests: {batches} invitation batches + {args.inactivations} inactivations")
    print(f"round-trip floor (({batches} + {args.inactivations}) / {PARALLELISM} x "
          f"{LATENCY_MS} ms): {round_trips:.2f} s")  # fmt: skip
    print(f"apply at 0 ms latency (median): {times[0]:.2f} s")
    print(f"floor: {floor:.2f} s")
    measured = times[LATENCY_MS]
    print(f"apply at {LATENCY_MS} ms latency (median): {measured:.2f} s "
          f"= {measured / floor:.2f} x floor (limit {TOLERANCE} x)")  # fmt: skip
    passed = measured <= TOLERANCE * floor
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
