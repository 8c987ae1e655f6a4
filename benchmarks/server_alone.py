"""The server alone: the floor a benchmark measures beside the reconciler, in the same run.

The sandbox answers one request at a time, so its time per request adds to the latency of every
round: a floor no client can beat, which a computed `requests x latency` leaves out. This module
sends a given list of requests with nothing else to do: as many plain threads as the client has
connections, each sending the next request not sent yet (whichever thread is free), the bodies
read, none decoded, none waiting for another (a client must read a listing before the pages or
ids it names). The threads run in a process of their own, as the reconciler does, not beside
the sandbox in the benchmark's process. Every benchmark that compares against the server alone
(plan_100k, workers_100k, payrun_history) measures it here, one way.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

#: (method, path, query string without "?", "" when none)
Request = tuple[str, str, str]


@dataclass(frozen=True)
class Alone:
    """Seconds the requests took, and when (epoch seconds) the first was about to be sent."""

    seconds: float
    started_at: float


def requests_alone(
    base_url: str, token: str, requests: list[Request], *, connections: int
) -> Alone:
    """The server's time for `requests` over `connections` plain threads (see the module)."""
    payload = json.dumps({"base_url": base_url, "token": token, "requests": requests})
    result = subprocess.run(
        [sys.executable, "-c", _ALONE, str(connections)],
        input=payload,
        capture_output=True,
        text=True,
        check=True,
    )
    seconds, started_at = result.stdout.split()
    return Alone(float(seconds), float(started_at))


_ALONE = """
import json, sys, time
from concurrent.futures import ThreadPoolExecutor
import httpx
job = json.load(sys.stdin)
connections = int(sys.argv[1])
headers = {"Authorization": "Bearer " + job["token"]}
pending = iter(job["requests"])  # shared: whichever thread is free sends the next one
clients = [httpx.Client(base_url=job["base_url"], headers=headers, timeout=60)
           for _ in range(connections)]
def read(client):
    for method, path, query in pending:
        client.request(method, path + ("?" + query if query else "")).raise_for_status()
started_at, started = time.time(), time.perf_counter()
with ThreadPoolExecutor(connections) as pool:
    list(pool.map(read, clients))
print(time.perf_counter() - started, started_at)
"""
