"""Benchmark: `reconciler workers` of 100,000 agreements at 20 ms a request, against the floor.

    PYTHONPATH=. python benchmarks/workers_100k.py [--workers 100000] [--runs 3]
        [--latency-ms 20] [--page-cost-ms 0]

A sandbox (its own process, `reconciler sandbox serve`, SQLite file) holds N agreements;
`reconciler workers --format json` runs as a child process, as a user runs it (start-up, 500
pages of 200 over 8 connections, the JSON written to a pipe), first with no latency, then with
`--latency-ms` injected on every request, runs interleaved, median of `--runs` each.

The floor is the larger of the same run at no latency (the CPU of both sides) and the latency
floor (pages / connections x latency). Target: the run with latency within 1.1x of the floor.
`--page-cost-ms` makes the server spend that much CPU on every page (a slower server).

Beside it, the server alone at that latency: the same pages over 8 plain threads, nothing
decoded (`plan_100k.pages_alone`), after each run with latency. The server answers one request
at a time, so its own time per page is added to every round of 8; the command can be no faster
than that plus its start-up.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from plan_100k import pages_alone, start_sandbox, write_inputs

ROOT = Path(__file__).resolve().parents[1]
CONNECTIONS = 8
PAGE_SIZE = 200
TOLERANCE = 1.1


def one_run(env: dict[str, str], workers: int) -> float:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "reconciler", "workers", "--format", "json"],
        capture_output=True,
        env=env,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"reconciler workers failed: {result.stderr.decode()}")
    assert result.stdout.count(b'"agreement_id"') == workers, "not every worker was listed"
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--page-cost-ms", type=float, default=0)
    args = parser.parse_args()

    env = {**os.environ, "PYTHONPATH": str(ROOT), "RECONCILER_LOG_LEVEL": "warning"}
    with tempfile.TemporaryDirectory(prefix="workers-bench-") as temporary:
        folder = Path(temporary)
        _, seed, _ = write_inputs(folder, args.workers)
        sandbox, hello = start_sandbox(folder, seed, env, args.page_cost_ms)
        base_url = hello["base_url"]
        env |= {"RECONCILER_BASE_URL": base_url, "RECONCILER_TOKEN": hello["token"]}
        times: dict[int, list[float]] = {0: [], args.latency_ms: []}
        alone: list[float] = []
        try:
            for _ in range(args.runs):
                for latency in times:
                    faults = {"latency_ms": latency, "page_cost_ms": args.page_cost_ms}
                    httpx.post(f"{base_url}/_sandbox/faults", json=faults).raise_for_status()
                    times[latency].append(one_run(env, args.workers))
                alone.append(pages_alone(base_url, hello["token"], args.workers).seconds)
        finally:
            sandbox.terminate()
            sandbox.wait(timeout=30)
    plain = statistics.median(times[0])
    slow = statistics.median(times[args.latency_ms])
    pages = math.ceil(args.workers / PAGE_SIZE)
    latency_floor = pages / CONNECTIONS * args.latency_ms / 1000
    floor = max(plain, latency_floor)
    ratio = slow / floor
    runs = ", ".join(f"{t:.2f}" for t in times[0])
    print(f"no latency: {plain:.2f} s (runs: {runs})")
    runs = ", ".join(f"{t:.2f}" for t in times[args.latency_ms])
    print(f"{args.latency_ms} ms a request: {slow:.2f} s (runs: {runs})")
    print(
        f"latency floor {pages} pages / {CONNECTIONS} x {args.latency_ms} ms = "
        f"{latency_floor:.2f} s; floor {floor:.2f} s; ratio {ratio:.2f}x (target <= {TOLERANCE}x)"
    )
    served = statistics.median(alone)
    runs = ", ".join(f"{t:.2f}" for t in alone)
    print(
        f"the server alone at {args.latency_ms} ms, {CONNECTIONS} connections, nothing decoded: "
        f"{served:.2f} s (runs: {runs}); the command {slow / served:.2f}x it, start-up included"
    )
    print(
        f"server: {args.page_cost_ms:g} ms of CPU a page; machine: "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.2f}"
    )
    ok = ratio <= TOLERANCE
    print("PASS" if ok else "MISS")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
