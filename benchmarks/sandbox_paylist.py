"""Benchmark: a paylist of 1,000 payments, created, settled and read back over real HTTP.

Run from the repository root:

    PYTHONPATH=$PWD python benchmarks/sandbox_paylist.py [--payments N] [--repeat N] [--db F]

Each round creates one paylist of N payments to 100 ACTIVE workers (POST /payment-agent/paylists,
all validated in one transaction), settles it at once (POST /_sandbox/process: every payment
checked, paid, journalled), and reads its payments back 200 at a time.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import uuid

import httpx

from reconciler.sandbox import SandboxServer
from reconciler.sandbox.jsontext import dumps

WORKERS = 100


def make_workers(client: httpx.Client, controls: httpx.Client) -> list[str]:
    invitations = [
        {
            "workerName": "Ada",
            "workerSurname": f"Worker{n}",
            "typeOfWorker": "Worker",
            "workerEmail": f"worker{n}@example.com",
            "countryIso": "GB",
        }
        for n in range(WORKERS)
    ]
    created = client.post("/contract/workers/inviteWorkersBulkLocked", json=invitations)
    created.raise_for_status()
    for item in created.json():
        moved = controls.post(
            f"/_sandbox/agreements/{item['agreementId']}/status", json={"status": "ACTIVE"}
        )
        moved.raise_for_status()
    return [item["workerEmail"] for item in created.json()]


def one_round(
    client: httpx.Client, controls: httpx.Client, emails: list[str], count: int, round_: int
) -> tuple[float, float, float]:
    """Milliseconds to create, to settle and to read back one paylist."""
    body = {
        "description": f"Round {round_}",
        "idempotence_key": uuid.uuid4().hex,
        "payments": [
            {"description": f"R{round_} line {n}", "amount": 1, "worker_email": emails[n % WORKERS]}
            for n in range(count)
        ],
    }
    started = time.perf_counter()
    created = client.post(
        "/payment-agent/paylists",
        content=dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    created.raise_for_status()
    create_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    controls.post("/_sandbox/process").raise_for_status()
    settle_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    read = 0
    for page in range(-(-count // 200)):
        answer = client.get(
            f"/payment-agent/paylists/{created.json()['id']}/payments",
            params={"page": page, "size": 200},
        )
        answer.raise_for_status()
        read += len(answer.json()["content"])
    assert read == count
    return create_ms, settle_ms, (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--payments", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--db", default=":memory:", help="a file, to measure SQLite on disk")
    args = parser.parse_args()

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}"
    )
    # A long delay: only /_sandbox/process settles, so the timing is the settling itself.
    with SandboxServer(db=args.db, process_delay_ms=3_600_000) as server:
        headers = {"Authorization": f"Bearer {server.token}"}
        with (
            httpx.Client(base_url=server.base_url, headers=headers, timeout=60) as client,
            httpx.Client(base_url=server.base_url, timeout=60) as controls,
        ):
            emails = make_workers(client, controls)
            controls.post(
                f"/_sandbox/clients/{server.client_id}/top-up",
                content=dumps({"amount": args.payments * args.repeat}).encode(),
            ).raise_for_status()
            rounds = [
                one_round(client, controls, emails, args.payments, n) for n in range(args.repeat)
            ]
    for label, figures in zip(
        ("create", "settle", "read back"), zip(*rounds, strict=True), strict=True
    ):
        print(
            f"{label:<10} {args.payments} payments: median {statistics.median(figures):7.1f} ms,"
            f" max {max(figures):7.1f} ms"
        )


if __name__ == "__main__":
    main()
