"""Benchmark: a full refresh of 100,000 workers (500 pages of 200) from the sandbox.

    PYTHONPATH=. python benchmarks/refresh_100k.py [--workers 100000] [--runs 3]

The sandbox runs in this process (one uvicorn worker); each refresh runs in a child process, so
its time and peak memory (ru_maxrss) are the client's alone. The refresh is timed with 20 ms of
latency injected on every request and with none; the floor is the larger of the latency floor
(pages / connections x 20 ms) and the 0 ms refresh (the CPU cost of both sides on this machine).
Passes when the 20 ms refresh is within 1.5x of the floor and peaks under 400 MB.

For comparison it also times the same refresh against a canned service that answers the same
pages pre-rendered (no database, no JSON encoding), which shows the client's own cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reconciler import logs  # noqa: E402
from reconciler.sandbox import SandboxServer  # noqa: E402
from reconciler.secrets import Secret  # noqa: E402
from reconciler.service.client import ServiceClient  # noqa: E402
from reconciler.service.config import ClientConfig  # noqa: E402
from reconciler.service.models import Invitation  # noqa: E402

CONNECTIONS = 8
LATENCY_MS = 20
PAGE_SIZE = 200
TOLERANCE = 1.5
MEMORY_LIMIT_MB = 400


def _client(base_url: str, token: str) -> ServiceClient:
    config = ClientConfig(
        base_url=base_url,
        token=Secret(token),
        token_source="the benchmark",
        parallelism=CONNECTIONS,
    )
    return ServiceClient(config)


def _seed(base_url: str, token: str, count: int) -> None:
    """Invite `count` workers in batches of 100, eight batches at a time."""

    def batch(first: int) -> None:
        items = [
            Invitation(
                worker_name=f"Worker{n}",
                worker_surname="Bench",
                type_of_worker="Worker",
                worker_email=f"worker{n}@example.com",
                country_iso="GB",
                job_title="Engineer",
                external_id=f"B-{n:06d}",
            )
            for n in range(first, min(first + 100, count + 1))
        ]
        client.invite_workers(items)

    with _client(base_url, token) as client, ThreadPoolExecutor(CONNECTIONS) as pool:
        list(pool.map(batch, range(1, count + 1, 100)))


def child(base_url: str, token: str, expected: int) -> None:
    """One refresh, in a fresh process: prints its time and peak memory as JSON."""
    logs.configure("json", "warning")  # as the CLI does; stdout carries only the figures
    started = time.perf_counter()
    with _client(base_url, token) as client:
        workers = client.list_workers()
    seconds = time.perf_counter() - started
    ids = [worker.agreement_id for worker in workers]
    if len(ids) != expected or len(set(ids)) != expected:
        raise SystemExit(f"refresh returned {len(ids)} workers ({len(set(ids))} distinct)")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"seconds": seconds, "peak_mb": peak_mb}))


def _refresh(base_url: str, token: str, expected: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, __file__, "--child", base_url, token, str(expected)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"the refresh failed:\n{result.stderr}")
    return json.loads(result.stdout)  # type: ignore[no-any-return]


class _Canned:
    """The sandbox's worker pages, rendered once, answered after `latency_s`."""

    def __init__(self, base_url: str, token: str, count: int) -> None:
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(headers=headers, timeout=60) as http:
            self.pages = [
                http.get(
                    f"{base_url}/contract/workers/list", params={"page": n, "size": PAGE_SIZE}
                ).content
                for n in range(math.ceil(count / PAGE_SIZE) + 1)
            ]
        self.latency_s = 0.0

    async def workers(self, request: Request) -> Response:
        await asyncio.sleep(self.latency_s)
        page = int(request.query_params.get("page", "0"))
        body = self.pages[min(page, len(self.pages) - 1)]
        return Response(body, media_type="application/json")


def _serve_canned(canned: _Canned) -> tuple[uvicorn.Server, str]:
    import socket
    import threading

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    app = Starlette(routes=[Route("/contract/workers/list", canned.workers)])
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    return server, f"http://127.0.0.1:{sock.getsockname()[1]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3, help="refreshes per latency (median)")
    args = parser.parse_args()
    logs.configure("json", "warning")
    pages = math.ceil(args.workers / PAGE_SIZE)
    print(f"machine: {platform.machine()} {platform.processor()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, load average {os.getloadavg()}")  # fmt: skip
    with SandboxServer() as server:
        started = time.perf_counter()
        _seed(server.base_url, server.token, args.workers)
        print(f"seeded {args.workers} workers in {time.perf_counter() - started:.1f} s")
        results: dict[int, list[dict[str, float]]] = {}
        for latency in (0, LATENCY_MS):
            httpx.post(f"{server.base_url}/_sandbox/faults", json={"latency_ms": latency})
            results[latency] = [
                _refresh(server.base_url, server.token, args.workers) for _ in range(args.runs)
            ]
            times = ", ".join(f"{run['seconds']:.2f}" for run in results[latency])
            print(f"{latency:>2} ms latency: {times} s")
        httpx.post(f"{server.base_url}/_sandbox/faults", json={})
        canned = _Canned(server.base_url, server.token, args.workers)
    canned_server, canned_url = _serve_canned(canned)
    canned_times: dict[int, float] = {}
    for latency in (0, LATENCY_MS):
        canned.latency_s = latency / 1000
        runs = [_refresh(canned_url, "canned", args.workers) for _ in range(args.runs)]
        canned_times[latency] = statistics.median(run["seconds"] for run in runs)
        print(f"canned service, {latency:>2} ms latency: "
              + ", ".join(f"{run['seconds']:.2f}" for run in runs) + " s")  # fmt: skip
    canned_server.should_exit = True
    at_zero = statistics.median(run["seconds"] for run in results[0])
    measured = statistics.median(run["seconds"] for run in results[LATENCY_MS])
    latency_floor = pages / CONNECTIONS * LATENCY_MS / 1000
    floor = max(latency_floor, at_zero)
    peak = max(run["peak_mb"] for runs in results.values() for run in runs)
    print(f"pages: {pages}, connections: {CONNECTIONS}")
    print(f"latency floor ({pages} / {CONNECTIONS} x {LATENCY_MS} ms): {latency_floor:.2f} s")
    print(f"refresh at 0 ms latency (median): {at_zero:.2f} s")
    print(f"floor: {floor:.2f} s")
    print(f"refresh at {LATENCY_MS} ms latency (median): {measured:.2f} s "
          f"= {measured / floor:.2f} x floor (limit {TOLERANCE} x)")  # fmt: skip
    print(f"peak memory of the refreshing process: {peak:.0f} MB (limit {MEMORY_LIMIT_MB} MB)")
    print(f"canned service (medians): {canned_times[0]:.2f} s at 0 ms, "
          f"{canned_times[LATENCY_MS]:.2f} s at {LATENCY_MS} ms")  # fmt: skip
    passed = measured <= TOLERANCE * floor and peak < MEMORY_LIMIT_MB
    print(f"load average at the end (1, 5, 15 min): {os.getloadavg()}")
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(main())
