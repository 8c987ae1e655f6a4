"""Helpers for tests that talk to the sandbox: its controls, service clients, checks.

The fixtures that use them are in `tests/conftest.py`.
"""

from __future__ import annotations

import itertools
import ssl
from dataclasses import dataclass
from typing import Any

import httpx

PROBLEM_JSON = "application/problem+json"
# The sandbox speaks plain HTTP; one TLS context for every client spares ~30 ms per client.
_TLS = ssl.create_default_context()
_emails = itertools.count(1)


@dataclass(frozen=True)
class ClientAccess:
    """A client of the sandbox: its id, bearer token and wallet."""

    client_id: int
    token: str
    wallet_id: int | None = None


class Controls:
    """The sandbox's `/_sandbox/` test controls, over HTTP."""

    def __init__(self, base_url: str) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=10, verify=_TLS)

    def _ok(self, answer: httpx.Response) -> Any:
        assert answer.is_success, f"{answer.request.url}: {answer.status_code} {answer.text}"
        return answer.json()

    def create_client(self, **body: Any) -> ClientAccess:
        """A new client with its wallet (`name`, `balance`, `over_draft_limit`, `enabled`)."""
        created = self._ok(self.http.post("/_sandbox/clients", json=body))
        return ClientAccess(created["client_id"], created["token"], created["wallet_id"])

    def move_agreement(self, agreement_id: int, status: str, **answers: Any) -> dict[str, Any]:
        """Move a worker as the worker or the service would (answers: firstName, ...)."""
        body = {"status": status, **answers}
        return self._ok(self.http.post(f"/_sandbox/agreements/{agreement_id}/status", json=body))

    def set_faults(self, **settings: Any) -> dict[str, Any]:
        """Faults for service endpoints from now on; no arguments clears them."""
        return self._ok(self.http.post("/_sandbox/faults", json=settings))

    def requests(self, since: int = 0) -> list[dict[str, Any]]:
        """The log of service requests completed after `since`."""
        return self._ok(self.http.get("/_sandbox/requests", params={"since": since}))

    def last_seq(self) -> int:
        entries = self.requests()
        return entries[-1]["seq"] if entries else 0

    def reset(self) -> None:
        self._ok(self.http.post("/_sandbox/reset"))

    def close(self) -> None:
        self.http.close()


def service_client(base_url: str, token: str | None, **kwargs: Any) -> httpx.Client:
    """An httpx client of the service, with the bearer token when there is one."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return httpx.Client(base_url=base_url, headers=headers, timeout=10, verify=_TLS, **kwargs)


def invitation(**fields: Any) -> dict[str, Any]:
    """A valid invitation item with a fresh email; `fields` override or add (None removes)."""
    number = next(_emails)
    item: dict[str, Any] = {
        "workerName": "Ada",
        "workerSurname": "Lovelace",
        "typeOfWorker": "Worker",
        "workerEmail": f"worker{number}@example.com",
        "countryIso": "GB",
        "jobTitle": "Engineer",
        "externalId": f"EXT-{number:05d}",
    }
    item.update(fields)
    return {key: value for key, value in item.items() if value is not None}


def assert_problem(answer: httpx.Response, status: int, *words: str) -> dict[str, Any]:
    """`answer` is a problem+json with `status` whose detail or errors mention every word."""
    assert answer.status_code == status, f"{answer.status_code} {answer.text}"
    assert answer.headers["content-type"] == PROBLEM_JSON
    problem: dict[str, Any] = answer.json()
    assert problem["status"] == status
    assert problem["title"] and problem["type"]
    said = (problem["detail"] + " " + repr(problem.get("errors", []))).lower()
    for word in words:
        assert word.lower() in said, f"{word!r} not in {said!r}"
    return problem
