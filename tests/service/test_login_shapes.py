"""What a real service's login may answer, over HTTP: the token under other keys or `data`,
a 429 to wait out, and a token without `exp`. A tiny service here answers each way."""

from __future__ import annotations

import time
from collections.abc import Iterator

import jwt
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from reconciler.secrets import Secret
from reconciler.service.client import ServiceClient
from reconciler.service.config import ClientConfig
from reconciler.service.session import Credentials
from tests.service.helpers import FAST_RETRY
from tests.service.paged_service import serving

STATE: dict[str, object] = {}


def _token(exp_in: float | None) -> str:
    claims: dict[str, object] = {"sub": "a@example.com", "client_id": 1, "iat": int(time.time())}
    if exp_in is not None:
        claims["exp"] = int(time.time() + exp_in)
    return jwt.encode(claims, "the-service-s-own-secret-of-32-bytes!", algorithm="HS256")


async def _login(request: Request) -> Response:
    logins = STATE.setdefault("logins", [])
    assert isinstance(logins, list)
    logins.append(time.monotonic())
    if STATE.get("locked_once") and len(logins) == 1:
        return JSONResponse({"message": "too many"}, status_code=429, headers={"Retry-After": "1"})
    shape = STATE["shape"]
    token = _token(3600)
    if shape == "data.access_token":
        return JSONResponse({"data": {"access_token": token}})
    if shape == "jwt":
        return JSONResponse({"jwt": token})
    return JSONResponse({"token": "opaque-token-without-exp"})


async def _list(request: Request) -> Response:
    if not request.headers.get("authorization", "").startswith("Bearer "):
        return JSONResponse({"detail": "no token"}, status_code=401)
    return JSONResponse({"content": [], "totalElements": 0, "totalPages": 0, "number": 0})


@pytest.fixture
def service() -> Iterator[str]:
    app = Starlette(
        routes=[
            Route("/login/login/v2", _login, methods=["POST"]),
            Route("/contract/workers/list", _list, methods=["GET"]),
        ]
    )
    with serving(app) as base_url:
        yield base_url


def _client(base_url: str) -> ServiceClient:
    credentials = Credentials("a@example.com", Secret("p4ssw0rd-value"), "the test")
    config = ClientConfig(
        base_url=base_url,
        token=None,
        credentials=credentials,
        token_source="the test",
        retry=FAST_RETRY,
    )
    return ServiceClient(config, read_only=True)


@pytest.mark.parametrize("shape", ["data.access_token", "jwt", "opaque"])
def test_the_token_is_found_wherever_the_answer_puts_it(service: str, shape: str) -> None:
    STATE.clear()
    STATE["shape"] = shape
    with _client(service) as client:
        assert client.list_workers() == []
        assert client.list_workers() == []
    assert len(STATE["logins"]) == 1  # type: ignore[arg-type]  # one login, used until a 401


def test_a_429_on_login_is_waited_out_as_retry_after_says(service: str) -> None:
    STATE.clear()
    STATE.update(shape="jwt", locked_once=True)
    with _client(service) as client:
        assert client.list_workers() == []
    first, second = STATE["logins"]  # type: ignore[misc]
    assert second - first >= 1.0
