"""Inputs that used to make the sandbox answer 500: each is now a 400 (or 404) that says why."""

from __future__ import annotations

import pytest

from reconciler.sandbox import SandboxServer
from tests.sandbox.support import service_client

BIG = "9" * 5000  # beyond Python's 4,300-digit limit for reading an integer

CASES = [
    ("numbers in event_types", "POST", "/webhooks/clients",
     b'{"url": "https://x.example/h", "headers": [], "event_types": [1, 2.5, true]}', 400),
    # A page beyond the last is an empty page, and a size above the maximum is the maximum,
    # however many digits they have.
    ("a page of 5,000 digits", "GET", f"/contract/workers/list?page={BIG}", None, 200),
    ("a size of 5,000 digits", "GET", f"/payment-agent/payments?page=0&size={BIG}", None, 200),
    ("an id of 5,000 digits", "POST",
     f"/contract-server/v2/general/worker/agreements/{BIG}/status", b'{"status": "INACTIVE"}',
     404),
    ("a lone surrogate in an invitation", "POST", "/contract/workers/inviteWorkersBulkLocked",
     b'[{"workerName": "A\\ud800", "workerSurname": "B", "typeOfWorker": "Worker",'
     b' "workerEmail": "a@example.com", "countryIso": "GB", "externalId": "X"}]', 400),
    ("a lone surrogate as a key", "POST", "/webhooks/clients", b'{"\\udc00": 1}', 400),
    ("a number of 5,000 digits in a body", "POST", "/webhooks/clients",
     b'{"url": "https://x.example/h", "headers": [], "event_types": ["KYC"], "client_id": '
     + BIG.encode() + b"}", 400),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "method", "path", "body", "status"), CASES, ids=[case[0] for case in CASES]
)
def test_no_input_makes_the_sandbox_fail(
    sandbox: SandboxServer, name: str, method: str, path: str, body: bytes | None, status: int
) -> None:
    with service_client(sandbox.base_url, sandbox.token) as client:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        answer = client.request(method, path, content=body, headers=headers)
    assert answer.status_code == status, answer.text
    if status >= 400:
        assert answer.json()["detail"]
    else:
        assert answer.json()["content"] == []
