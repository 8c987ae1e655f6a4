"""Small helpers for the client's tests: a client for a sandbox, and the sandbox's controls."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import httpx

from reconciler import logs
from reconciler.secrets import Secret
from reconciler.service.client import ServiceClient
from reconciler.service.config import ClientConfig, RetryPolicy
from reconciler.service.models import Invitation

#: Retries fast enough for tests, many enough to ride out a 20% error rate.
FAST_RETRY = RetryPolicy(
    attempts=10, total_seconds=30.0, wait_initial=0.01, wait_max=0.1, wait_jitter=0.01
)


def client_for(sandbox: Any, *, read_only: bool = False, **overrides: Any) -> ServiceClient:
    """A client of the running sandbox with its demo token."""
    logs.register_secret(sandbox.token)
    config = ClientConfig(
        base_url=sandbox.base_url,
        token=Secret(overrides.pop("token", sandbox.token)),
        token_source=overrides.pop("token_source", "the sandbox's demo client"),
        client_id=sandbox.client_id,
        retry=FAST_RETRY,
    )
    return ServiceClient(replace(config, **overrides), read_only=read_only)


def control(sandbox: Any, path: str, body: object = None, *, method: str = "POST") -> Any:
    """Call one `/_sandbox/...` control and return its JSON answer."""
    response = httpx.request(method, f"{sandbox.base_url}/_sandbox/{path}", json=body, timeout=60)
    response.raise_for_status()
    return response.json() if response.content else None


def request_log(sandbox: Any, since: int = 0) -> list[dict[str, Any]]:
    """The sandbox's log of service requests after sequence number `since`."""
    return control(sandbox, f"requests?since={since}", method="GET")  # type: ignore[no-any-return]


def last_seq(sandbox: Any) -> int:
    entries = request_log(sandbox)
    return max((entry["seq"] for entry in entries), default=0)


def invitation(n: int, **fields: Any) -> Invitation:
    """A valid invitation for worker number `n`."""
    values: dict[str, Any] = {
        "worker_name": f"Worker{n}",
        "worker_surname": "Test",
        "type_of_worker": "Worker",
        "worker_email": f"worker{n}@example.com",
        "country_iso": "GB",
        "job_title": "Engineer",
        "external_id": f"T-{n:06d}",
    }
    values.update(fields)
    return Invitation(**values)


def invite_many(client: ServiceClient, count: int, start: int = 1) -> None:
    """Invite `count` workers in batches of 100."""
    for first in range(start, start + count, 100):
        last = min(first + 100, start + count)
        client.invite_workers([invitation(n) for n in range(first, last)])
