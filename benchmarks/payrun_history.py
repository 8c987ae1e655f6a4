"""Benchmark: pricing a payrun in an account with a history of paylists, at 50 ms a request.

    PYTHONPATH=. python benchmarks/payrun_history.py [--past 10] [--payments 1000] [--runs 3]
        [--latency-ms 50]

The sandbox runs in this process: 1,000 ACTIVE workers and `--past` paylists of `--payments`
payments each, already paid. `reconciler plan FILE` runs as a child process, as a user runs it,
on two files that differ only by a payrun of `--payments` payments to those workers: with it,
the refresh also reads the paylists (their keys and payments) and the wallet. Runs interleaved,
`--latency-ms` injected on every service request, median of `--runs`.

Pricing is what the payrun adds: the median of the runs' differences (with the payrun, less the
run without it just before). Its floor is the requests it adds, counted in the sandbox's log of
each run (the paylists listing, each paylist's key by id, the payments listing's pages of 200,
the largest page the service answers, and the wallet), over the client's connections, times the
latency: those requests cannot take less even against a server that costs nothing. The count is
checked against its minimum: every page of 200 a listing needs, one read by id per paylist, the
wallet, and nothing read twice.

Beside it, in the same run, the server alone: the same requests sent by as many plain threads
as the client has connections (in a process of their own), nothing decoded and none waiting for
another. The sandbox answers one request at a time, so each round of eight waits for its
answers one after the other beyond the latency: what no client can beat, and what the floor
above leaves out.

Target: pricing at most 1.2x its floor (issue 32); the ratio of the two plans, whose own target
(1.5x) was below that floor, is printed beside it.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import math
import os
import platform
import statistics
import sys
import tempfile
import time
import uuid
from datetime import datetime
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from apply_support import cli_env, timed_run  # noqa: E402
from server_alone import requests_alone  # noqa: E402

from reconciler.sandbox import SandboxServer  # noqa: E402
from reconciler.service.config import MAX_PAGE_SIZE, ClientConfig  # noqa: E402

WORKERS = 1000
TOLERANCE = 1.2  # pricing against the floor of its requests
#: The client's connections, its default parallelism.
CONNECTIONS = next(f.default for f in dataclasses.fields(ClientConfig) if f.name == "parallelism")


def write_files(folder: Path, payments: int) -> tuple[Path, Path, Path]:
    """The seed, the file without the payrun and the file with it."""
    seed = folder / "seed.yaml"
    lines = ["workers:"]
    for n in range(WORKERS):
        lines += [f"  - externalId: PAY-{n:05d}", "    firstName: Ada", "    lastName: Lovelace"]
        lines += [f"    email: p{n:05d}@example.com", "    country: GB", "    status: ACTIVE"]
    seed.write_text("\n".join(lines) + "\n")
    workers = ['version: 1\nscope: {externalIdPrefix: "PAY-"}\nworkers:']
    workers += [
        f"  - {{externalId: PAY-{n:05d}, typeOfWorker: Worker, workerName: Ada, "
        f"workerSurname: Lovelace, workerEmail: p{n:05d}@example.com, countryIso: GB}}"
        for n in range(WORKERS)
    ]
    plain = folder / "workers.yaml"
    plain.write_text("\n".join(workers) + "\n")
    payrun = ["payruns:", "  - id: bench-now", "    description: This month", "    payments:"]
    payrun += [
        f'      - {{worker: PAY-{n % WORKERS:05d}, amount: "1.00", description: "now {n}"}}'
        for n in range(payments)
    ]
    with_payrun = folder / "workers-and-payrun.yaml"
    with_payrun.write_text("\n".join(workers + payrun) + "\n")
    return seed, plain, with_payrun


def pay_history(server: SandboxServer, past: int, payments: int) -> None:
    """`past` paylists of `payments` payments, created and settled."""
    headers = {"Authorization": f"Bearer {server.token}"}
    with httpx.Client(base_url=server.base_url, headers=headers, timeout=120) as client:
        top_up = client.post(
            f"/_sandbox/clients/{server.client_id}/top-up", json={"amount": 10 * past * payments}
        )
        top_up.raise_for_status()
        for month in range(past):
            items = [
                {
                    "description": f"month {month} item {n}",
                    "amount": 1,
                    "worker_email": f"p{n % WORKERS:05d}@example.com",
                }
                for n in range(payments)
            ]
            key = uuid.uuid4().hex
            body = {"description": f"month {month}", "idempotence_key": key, "payments": items}
            client.post("/payment-agent/paylists", json=body).raise_for_status()
        client.post("/_sandbox/process").raise_for_status()


Timeline = dict[str, float]


def one_run(
    server: SandboxServer, env: dict[str, str], desired: Path, expect: str
) -> tuple[float, list[tuple[str, str, str]], Timeline]:
    """Seconds of `reconciler plan FILE`, the requests it made (method, path, query), and when
    its first request, its first money request and its last request reached the server
    (seconds from its start, from the sandbox's log)."""
    log = f"{server.base_url}/_sandbox/requests"
    before = httpx.get(log).json()
    since = before[-1]["seq"] if before else 0
    started_at = time.time()
    seconds, result = timed_run([sys.executable, "-m", "reconciler", "plan", str(desired)], env)
    if result.returncode != 0 or expect not in result.stdout:
        raise SystemExit(f"the plan is not the expected one: {result.stdout[-500:]}{result.stderr}")
    made = httpx.get(log, params={"since": since}).json()
    arrivals = sorted((datetime.fromisoformat(r["at"]).timestamp(), r["path"]) for r in made)
    money = [at for at, path in arrivals if path.startswith(("/payment-agent", "/client-wallet"))]
    timeline = {
        "first request": arrivals[0][0] - started_at,
        "last request": arrivals[-1][0] - started_at,
        "end": float(seconds),
    }
    if money:
        timeline["first money request"] = money[0] - started_at
    return float(seconds), [(r["method"], r["path"], r["query"]) for r in made], timeline


def minimum(past: int, payments: int) -> int:
    """The fewest requests pricing can make: the paylists listing's pages, one key by id per
    paylist (the listing has none), the payments listing's pages, the wallet."""
    return (
        math.ceil(max(past, 1) / MAX_PAGE_SIZE)
        + past
        + math.ceil(max(past * payments, 1) / MAX_PAGE_SIZE)
        + 1
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--past", type=int, default=10)
    parser.add_argument("--payments", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--latency-ms", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        seed, plain, with_payrun = write_files(Path(folder), args.payments)
        with SandboxServer(seed=seed, process_delay_ms=0) as server:
            started = time.perf_counter()
            pay_history(server, args.past, args.payments)
            print(f"setup: {args.past} paylists paid in {time.perf_counter() - started:.1f} s")
            faults = {"latency_ms": args.latency_ms}
            httpx.post(f"{server.base_url}/_sandbox/faults", json=faults).raise_for_status()
            env = cli_env(server.base_url, server.token, server.client_id)
            times: dict[str, list[float]] = {"without": [], "with": []}
            requests: dict[str, list[tuple[str, str, str]]] = {}
            timelines: dict[str, list[Timeline]] = {"without": [], "with": []}
            alone: list[float] = []
            for _ in range(args.runs):
                for name, path, expect in (
                    ("without", plain, "No changes"),
                    ("with", with_payrun, "1 payrun to pay"),
                ):
                    seconds, requests[name], timeline = one_run(server, env, path, expect)
                    times[name].append(seconds)
                    timelines[name].append(timeline)
                extra = collections.Counter(requests["with"]) - collections.Counter(
                    requests["without"]
                )
                alone.append(
                    requests_alone(
                        server.base_url,
                        server.token,
                        list(extra.elements()),
                        connections=CONNECTIONS,
                    ).seconds
                )
    without = statistics.median(times["without"])
    with_ = statistics.median(times["with"])
    for name, runs in times.items():
        print(f"plan {name} the payrun: " + ", ".join(f"{t:.2f}" for t in runs) + " s")
        middle = sorted(timelines[name], key=lambda t: t["end"])[len(runs) // 2]
        print("  the median run: " + ", ".join(f"{k} at {v:.3f} s" for k, v in middle.items()))
    added = collections.Counter(requests["with"]) - collections.Counter(requests["without"])
    count = sum(added.values())
    repeated = sum(n - 1 for n in collections.Counter(requests["with"]).values() if n > 1)
    fewest = minimum(args.past, args.payments)
    kinds = collections.Counter(_kind(path) for _, path, _ in added.elements())
    print(
        f"pricing's requests: {count} ({', '.join(f'{n} {k}' for k, n in kinds.items())}); "
        f"the fewest possible {fewest}; read twice: {repeated}"
    )
    floor = count / CONNECTIONS * args.latency_ms / 1000
    pricing = statistics.median(w - o for w, o in zip(times["with"], times["without"], strict=True))
    print(
        f"floor: {count} requests / {CONNECTIONS} connections x {args.latency_ms} ms = "
        f"{floor:.3f} s; pricing (with less without, median of the pairs) {pricing:.3f} s = "
        f"{pricing / floor:.2f}x (target <= {TOLERANCE}x)"
    )
    server_alone = statistics.median(alone)
    print(
        f"the server alone: the same {count} requests by {CONNECTIONS} plain threads, nothing "
        f"decoded, none waiting for another, median {server_alone:.3f} s = "
        f"{server_alone / floor:.2f}x the floor; pricing {pricing / server_alone:.2f}x it"
    )
    print(
        f"{args.past} past paylists of {args.payments}, {args.latency_ms} ms a request: "
        f"{with_:.2f} s with the payrun, {without:.2f} s without: {with_ / without:.2f}x"
    )
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.2f}"
    )
    ok = pricing <= TOLERANCE * floor and count <= fewest and not repeated
    print("PASS" if ok else "MISS")
    return 0 if ok else 1


def _kind(path: str) -> str:
    if path.endswith("/payments"):
        return "payments pages"
    if path.endswith("/wallet"):
        return "wallet"
    return "paylist by id" if path.rstrip("/").split("/")[-1].isdigit() else "paylists listing"


if __name__ == "__main__":
    sys.exit(main())
