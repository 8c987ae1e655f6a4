"""Where a refresh's time goes on the sandbox's side: one worker page, stage by stage.

    PYTHONPATH=. python benchmarks/refresh_sandbox_profile.py [--workers 100000]

The sandbox answers every request on one event loop (one uvicorn worker), and its handlers run
SQLite synchronously, so pages are served one at a time however many connections the client
opens. This script times, for pages spread over the whole list, each stage of answering one
page: counting the client's agreements, the page's JSON (written by SQLite from an id range),
the envelope around it; then the whole HTTP round trip, one request at a time, and
the client's own decoding of the same page.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.refresh_100k import PAGE_SIZE, _seed  # noqa: E402
from reconciler import logs  # noqa: E402
from reconciler.sandbox import SandboxServer  # noqa: E402
from reconciler.sandbox.jsontext import JSONText  # noqa: E402
from reconciler.sandbox.paging import Paging, spring_page  # noqa: E402
from reconciler.sandbox.workers import list_page  # noqa: E402
from reconciler.service import decode  # noqa: E402
from reconciler.service.paging import parse_page  # noqa: E402


def _ms(action: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=100_000)
    args = parser.parse_args()
    logs.configure("json", "warning")
    last = args.workers // PAGE_SIZE - 1
    sample = sorted({0, last // 4, last // 2, 3 * last // 4, last})
    with SandboxServer() as server:
        _seed(server.base_url, server.token, args.workers)
        store, client_id = server.sandbox.store, server.client_id
        headers = {"Authorization": f"Bearer {server.token}"}
        rows_by_stage: dict[str, list[float]] = {}
        with httpx.Client(headers=headers) as http:
            for page in sample:
                paging = Paging(page, PAGE_SIZE)
                with store.read() as conn:
                    count = _ms(
                        lambda conn=conn: conn.execute(
                            "SELECT COUNT(*) FROM agreements WHERE client_id = ?", (client_id,)
                        ).fetchone()
                    )
                    version = (store.serial, store.version)  # the ids read once, as served
                    select = _ms(lambda conn=conn, paging=paging, version=version: list_page(
                        conn, client_id, None, paging, version))  # fmt: skip
                    items, number, total = list_page(conn, client_id, None, paging, version)
                body = spring_page(items, paging, total, count=number)
                encoding = _ms(lambda body=body: JSONText(body).body)
                url = f"{server.base_url}/contract/workers/list"
                params = {"page": page, "size": PAGE_SIZE}
                round_trip = _ms(lambda url=url, params=params: http.get(url, params=params))
                raw = http.get(url, params=params).content
                client = _ms(
                    lambda raw=raw: [
                        decode.worker(item)
                        for item in parse_page(json.loads(raw, parse_float=Decimal)).items
                    ]
                )
                for stage, value in {
                    "COUNT(*) of the client's agreements": count,
                    "the page's JSON, written by SQLite (list_page)": select,
                    "the envelope around it (JSONText)": encoding,
                    "whole HTTP round trip, alone": round_trip,
                    "client: JSON decoding + typed workers": client,
                }.items():
                    rows_by_stage.setdefault(stage, []).append(value)
    print(f"{args.workers} workers, pages sampled: {sample} (ms, median of 5)")
    print(f"{'stage':<48}" + "".join(f"{page:>9}" for page in sample))
    for stage, values in rows_by_stage.items():
        print(f"{stage:<48}" + "".join(f"{value:>9.1f}" for value in values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
