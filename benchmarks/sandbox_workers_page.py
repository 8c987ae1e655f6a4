"""Benchmark: a page of 200 workers from an account of 100,000, over real HTTP.

Run from the repository root:

    PYTHONPATH=$PWD python benchmarks/sandbox_workers_page.py [--workers N] [--repeat N] [--db F]

The account is written straight through the sandbox's store (an HTTP invitation takes 100 at
a time); the pages are then read with GET /contract/workers/list over a kept-alive connection,
as the reconciler reads them. Target: under 50 ms a page.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import httpx

from reconciler.sandbox import SandboxServer
from reconciler.sandbox.timestamps import now_ns
from reconciler.sandbox.workers import Invitation, insert_agreement

PAGE_SIZE = 200
TARGET_MS = 50.0
#: A realistic spread: mostly active, some in flight, some history.
STATUS_CYCLE = ["ACTIVE"] * 6 + ["INVITATION_SENT", "VERIFICATION_PENDING", "ENDED", "INACTIVATED"]
COUNTRIES = ["GB", "US", "DE", "NL", "FI", "KR", "FR", "ES"]


def fill(server: SandboxServer, count: int) -> None:
    now = now_ns()
    with server.sandbox.store.write() as conn:
        for n in range(count):
            invitation = Invitation(
                name=f"Name{n}",
                surname=f"Surname{n}",
                type_of_worker="Worker",
                email=f"worker{n}@example.com",
                country_iso=COUNTRIES[n % len(COUNTRIES)],
                job_title="Engineer",
                external_id=f"ENG-{n:06d}",
            )
            insert_agreement(conn, server.client_id, invitation, STATUS_CYCLE[n % 10], now)


def time_page(client: httpx.Client, params: dict[str, int], repeat: int) -> tuple[float, float]:
    """Median and worst time of one page, in ms, after a warm-up request."""
    client.get("/contract/workers/list", params=params).raise_for_status()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        answer = client.get("/contract/workers/list", params=params)
        times.append((time.perf_counter() - started) * 1000)
        answer.raise_for_status()
        assert len(answer.json()["content"]) == PAGE_SIZE
    return statistics.median(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=50)

    parser.add_argument("--db", default=":memory:", help="a file, to measure SQLite on disk")
    args = parser.parse_args()

    cores = os.cpu_count()
    print(f"machine: {platform.machine()}, {cores} cores, python {platform.python_version()}")
    with SandboxServer(db=args.db) as server:
        started = time.perf_counter()
        fill(server, args.workers)
        print(f"account: {args.workers} workers written in {time.perf_counter() - started:.1f} s")
        headers = {"Authorization": f"Bearer {server.token}"}
        worst_median = 0.0
        with httpx.Client(base_url=server.base_url, headers=headers, timeout=30) as client:
            for label, status_id in (("all", None), ("statusId=0", 0)):
                filter_ = {} if status_id is None else {"statusId": status_id}
                total = client.get("/contract/workers/list", params={**filter_, "size": 1})
                pages = -(-total.json()["totalElements"] // PAGE_SIZE)
                for where, page in (("first", 0), ("middle", pages // 2), ("last", pages - 1)):
                    params = {**filter_, "page": page, "size": PAGE_SIZE}
                    median, worst = time_page(client, params, args.repeat)
                    worst_median = max(worst_median, median)
                    print(
                        f"{label:<11} {where:<6} page {page:>3} of {pages}:"
                        f" median {median:6.1f} ms, max {worst:6.1f} ms"
                    )
        verdict = "meets" if worst_median < TARGET_MS else "MISSES"
        print(f"slowest median {worst_median:.1f} ms: {verdict} the {TARGET_MS:.0f} ms target")


if __name__ == "__main__":
    main()
