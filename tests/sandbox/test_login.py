"""`POST /login/login/v2`: JWTs that expire, refusals, and the failed-login limit, over HTTP."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import jwt
import pytest

from reconciler.sandbox import SandboxServer
from tests.sandbox.support import Controls, service_client

LOGIN = "/login/login/v2"
LIST = "/contract/workers/list"


@pytest.fixture
def short() -> Iterator[SandboxServer]:
    """A sandbox whose login tokens live three seconds (a loaded machine's pause between the
    login and the first use stays well inside)."""
    with SandboxServer(token_ttl_s=3) as server:
        yield server


def _login(server: SandboxServer, **body: object) -> httpx.Response:
    return httpx.post(f"{server.base_url}{LOGIN}", json=body)


def _bearer(server: SandboxServer, token: str) -> httpx.Response:
    return httpx.get(f"{server.base_url}{LIST}", headers={"Authorization": f"Bearer {token}"})


def test_the_demo_login_gives_a_jwt_that_works_until_it_expires(short: SandboxServer) -> None:
    before = time.time()
    answer = _login(short, email=short.email, password=short.password, rememberMe=True, ip="x")
    assert answer.status_code == 200, answer.text
    token = answer.json()["token"]
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["sub"] == short.email and claims["client_id"] == short.client_id
    # `exp` is in whole seconds, rounded up: the token lives at least its time, whatever the
    # fraction of the second it was made in
    assert claims["exp"] >= before + 3 and claims["exp"] - claims["iat"] in (3, 4)
    assert _bearer(short, token).status_code == 200
    assert _bearer(short, short.token).status_code == 200  # the long-lived token still works
    deadline = claims["exp"] + 60
    while True:  # asked until it is refused: never before `exp`, and surely after
        sent = time.time()
        answer = _bearer(short, token)
        if answer.status_code != 200:
            break
        assert sent < claims["exp"] and time.time() < deadline
        time.sleep(0.1)
    assert answer.status_code == 401 and answer.json()["detail"] == "token expired"
    assert time.time() >= claims["exp"]
    log = httpx.get(f"{short.base_url}/_sandbox/requests").json()
    login_entry = next(entry for entry in log if entry["path"] == LOGIN)
    assert login_entry["client_id"] == short.client_id


def test_the_email_ignores_case(sandbox: SandboxServer) -> None:
    assert _login(sandbox, email=sandbox.email.upper(), password=sandbox.password).is_success


@pytest.mark.parametrize(
    ("body", "status", "said"),
    [
        ({"email": "nobody@sandbox.example", "password": "x"}, 401, "invalid credentials"),
        ({"email": "<demo>", "password": "wrong"}, 401, "invalid credentials"),
        ({"email": "", "password": "x"}, 400, "email"),
        ({"email": "<demo>", "password": "   "}, 400, "password"),
        ({"password": "x"}, 400, "email"),
    ],
)
def test_refusals(sandbox: SandboxServer, body: dict[str, str], status: int, said: str) -> None:
    body = {key: sandbox.email if value == "<demo>" else value for key, value in body.items()}
    answer = _login(sandbox, **body)
    assert answer.status_code == status
    assert said in answer.text


def test_five_failures_lock_the_email_for_a_minute_even_for_the_right_password(
    sandbox: SandboxServer,
) -> None:
    controls = Controls(sandbox.base_url)
    other = controls.http.post("/_sandbox/clients", json={"email": "five@sandbox.example"}).json()
    for _ in range(5):
        assert _login(sandbox, email=other["email"], password="wrong").status_code == 401
    locked = _login(sandbox, email=other["email"], password=other["password"])
    assert locked.status_code == 429
    assert 1 <= int(locked.headers["Retry-After"]) <= 60
    assert _login(sandbox, email=sandbox.email, password=sandbox.password).is_success
    controls.close()


@pytest.mark.parametrize(
    ("token", "said"),
    [
        ("not-a-known-token", "invalid token"),  # the contract's reasons: invalid, expired
        (
            jwt.encode(
                {"sub": "x", "client_id": 1, "exp": 2**40},
                "a-guessed-secret-of-thirty-two-bytes",
                "HS256",
            ),
            "invalid token",
        ),
        ("a.b.c", "invalid token"),
    ],
)
def test_other_tokens_are_refused_with_the_reason(
    sandbox: SandboxServer, token: str, said: str
) -> None:
    answer = _bearer(sandbox, token)
    assert answer.status_code == 401 and answer.json()["detail"] == said


def test_a_client_made_by_the_controls_gets_a_login(sandbox: SandboxServer) -> None:
    with service_client(sandbox.base_url, None) as anonymous:
        made = anonymous.post("/_sandbox/clients", json={"email": "new@sandbox.example"}).json()
        assert set(made) >= {"client_id", "token", "wallet_id", "email", "password"}
        again = anonymous.post("/_sandbox/clients", json={"email": "NEW@sandbox.example"})
        assert again.status_code == 400 and "email" in again.text
    token = _login(sandbox, email=made["email"], password=made["password"]).json()["token"]
    assert jwt.decode(token, options={"verify_signature": False})["client_id"] == made["client_id"]
