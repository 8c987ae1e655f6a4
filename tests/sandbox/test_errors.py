"""Authentication, unknown paths and methods, malformed bodies: problem+json, never a 500."""

from __future__ import annotations

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.sandbox.support import assert_problem, invitation, service_client

LIST = "/contract/workers/list"
INVITE = "/contract/workers/inviteWorkersBulkLocked"
WEBHOOK = "/webhooks/clients"
INACTIVATE = "/contract-server/v2/general/worker/agreements/1/status"

SERVICE_CALLS = [
    ("GET", LIST, None),
    ("POST", INVITE, [invitation()]),
    ("POST", INACTIVATE, {"status": "inactivated"}),
    ("GET", WEBHOOK, None),
    ("POST", WEBHOOK, {"url": "https://a.example.com", "headers": [], "event_types": ["KYC"]}),
]


@pytest.mark.parametrize(("method", "path", "body"), SERVICE_CALLS)
@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer not-a-token", "Bearer", "Basic dXNlcjpwYXNz", "not-a-token"],
)
def test_a_missing_or_unknown_token_is_401(
    sandbox: SandboxServer, method: str, path: str, body: object, authorization: str | None
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    with service_client(sandbox.base_url, None) as client:
        answer = client.request(method, path, json=body, headers=headers)
    problem = assert_problem(answer, 401)
    assert "token" in problem["detail"] or "Authorization" in problem["detail"]
    assert answer.headers["WWW-Authenticate"] == "Bearer"


def test_401_changes_nothing(sandbox: SandboxServer, api: httpx.Client) -> None:
    with service_client(sandbox.base_url, "stolen") as client:
        assert_problem(client.post(INVITE, json=[invitation()]), 401)
    assert api.get(LIST).json()["totalElements"] == 0


def test_a_jsessionid_cookie_is_accepted_and_ignored(sandbox: SandboxServer) -> None:
    with service_client(sandbox.base_url, sandbox.token) as client:
        answer = client.get(LIST, headers={"Cookie": "JSESSIONID=ABCDEF0123456789"})
    assert answer.status_code == 200
    assert "set-cookie" not in answer.headers
    with service_client(sandbox.base_url, None) as client:
        answer = client.get(LIST, headers={"Cookie": "JSESSIONID=ABCDEF0123456789"})
    assert_problem(answer, 401)


@pytest.mark.parametrize(
    "path", ["/", "/contract/worker", "/contract/workers/list/", "/contract/workers/list/x", "/x"]
)
def test_an_unknown_path_is_404(api: httpx.Client, path: str) -> None:
    assert_problem(api.get(path), 404, path)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", LIST),
        ("DELETE", LIST),
        ("GET", INVITE),
        ("PUT", INVITE),
        ("GET", INACTIVATE),
        ("PUT", WEBHOOK),
        ("DELETE", WEBHOOK),
    ],
)
def test_a_wrong_method_is_405_with_allow(api: httpx.Client, method: str, path: str) -> None:
    answer = api.request(method, path)
    assert_problem(answer, 405, method)
    assert answer.headers["Allow"]


@pytest.mark.parametrize("path", [INVITE, WEBHOOK, INACTIVATE])
@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"{", ["malformed JSON", "line 1"]),
        (b"[{'workerName': 'Ada'}]", ["malformed JSON"]),
        (b"[1, 2,]", ["malformed JSON"]),
        (b"NaN", ["malformed JSON"]),
        (b"[Infinity]", ["malformed JSON"]),
        (b"\xff\xfe[]", ["UTF-8"]),
        (b"[" * 100_000 + b"]" * 100_000, ["malformed JSON"]),
        (b"", ["empty"]),
        (b"   ", ["empty"]),
    ],
)
def test_a_malformed_body_is_400_saying_why(
    api: httpx.Client, path: str, content: bytes, words: list[str]
) -> None:
    answer = api.post(path, content=content, headers={"Content-Type": "application/json"})
    assert_problem(answer, 400, *words)


def test_a_huge_body_is_413(api: httpx.Client) -> None:
    huge = b'[{"workerName": "' + b"x" * (5 * 1024 * 1024) + b'"}]'
    answer = api.post(INVITE, content=huge, headers={"Content-Type": "application/json"})
    assert_problem(answer, 413, "larger than")
    assert api.get(LIST).json()["totalElements"] == 0


def test_huge_strings_in_a_valid_body_are_400_per_field(api: httpx.Client) -> None:
    item = invitation(workerName="x" * 1_000_000, jobTitle="y" * 300)
    problem = assert_problem(api.post(INVITE, json=[item]), 400, "255")
    assert {error["field"] for error in problem["errors"]} == {"workerName", "jobTitle"}
    assert len(problem["detail"]) < 1000


@pytest.mark.parametrize(
    "body",
    [{"a": 1}, [1, 2], [[]], [None], [{"workerName": {"nested": [1]}}], 12, True, "text"],
)
def test_wrong_types_never_give_a_500(api: httpx.Client, body: object) -> None:
    for path in (INVITE, WEBHOOK, INACTIVATE):
        answer = api.post(path, json=body)
        assert answer.status_code == 400, answer.text
        assert answer.headers["content-type"] == "application/problem+json"
