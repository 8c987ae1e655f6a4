"""Signing in with an email and a password, and staying signed in, against the sandbox.

Real HTTP: a login token that expires in the middle of an apply of a few hundred invitations
(two-second tokens, 700 ms of latency) ends with every change applied, none twice, and the
request log shows the logins; refused credentials and a 429 say so without the password.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.cli import reconciler

INVITATIONS = 1500  # rounds of batches enough that the apply outlives a token of three seconds


@pytest.fixture
def short() -> Iterator[SandboxServer]:
    """Login tokens of two seconds (`exp` is in whole seconds, rounded up: each lives two to
    three, shorter than the apply). A request, held 0.7 s by the latency, then meets its token
    with over a second to spare, whatever the machine's load: with one-second tokens it had
    0.3 s, and a refused one is resent only once."""
    with SandboxServer(token_ttl_s=2) as server:
        yield server


def _login_env(server: SandboxServer, password: str | None = None) -> dict[str, str]:
    return {
        "RECONCILER_BASE_URL": server.base_url,
        "RECONCILER_EMAIL": server.email,
        "RECONCILER_PASSWORD": server.password if password is None else password,
    }


def _desired(path: Path, count: int) -> Path:
    lines = ["version: 1", "scope: {externalIdPrefix: LOG-}", "workers:"]
    for index in range(count):
        lines += [
            f"  - externalId: LOG-{index:04d}",
            "    typeOfWorker: Worker",
            "    workerName: Ada",
            "    workerSurname: Lovelace",
            f"    workerEmail: login{index}@example.com",
            "    countryIso: GB",
        ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _log(server: SandboxServer) -> list[dict[str, object]]:
    entries: list[dict[str, object]] = httpx.get(f"{server.base_url}/_sandbox/requests").json()
    return entries


def test_an_apply_outlives_its_login_tokens(short: SandboxServer, tmp_path: Path) -> None:
    desired = _desired(tmp_path / "desired.yaml", INVITATIONS)
    httpx.post(f"{short.base_url}/_sandbox/faults", json={"latency_ms": 700}).raise_for_status()

    applied = reconciler(
        "apply", str(desired), "--auto-approve", "--format", "json", **_login_env(short)
    )

    assert applied.returncode == 0, applied.stderr[-2000:]
    ledger = json.loads(applied.stdout)
    outcomes = [row["outcome"] for row in ledger["changes"]]
    assert outcomes == ["applied"] * INVITATIONS
    log = _log(short)
    logins = [entry for entry in log if entry["path"] == "/login/login/v2"]
    assert len(logins) >= 2, "the two-second token was renewed"
    invited = [
        entry for entry in log if entry["method"] == "POST" and "invite" in str(entry["path"])
    ]
    assert all(entry["status"] in (200, 401) for entry in invited)
    workers = httpx.get(
        f"{short.base_url}/contract/workers/list",
        params={"size": 200, "page": 1},
        headers={"Authorization": f"Bearer {short.token}"},
    ).json()
    assert workers["totalElements"] == INVITATIONS  # each once, none twice
    assert short.password not in applied.stdout + applied.stderr


def test_plan_signs_in_read_only(short: SandboxServer, tmp_path: Path) -> None:
    desired = _desired(tmp_path / "desired.yaml", 2)
    planned = reconciler("plan", str(desired), **_login_env(short))
    assert planned.returncode == 0, planned.stderr
    methods = {(entry["method"], entry["path"]) for entry in _log(short)}
    assert ("POST", "/login/login/v2") in methods
    assert {method for method, _ in methods} == {"GET", "POST"}
    assert all(path == "/login/login/v2" for method, path in methods if method == "POST")


def test_a_password_file_works_and_never_shows(sandbox: SandboxServer, tmp_path: Path) -> None:
    secret = tmp_path / "password"
    secret.write_text(sandbox.password + "\n")
    env = {"RECONCILER_BASE_URL": sandbox.base_url, "RECONCILER_EMAIL": sandbox.email}
    listed = reconciler("workers", "--password-file", str(secret), "--log-level", "debug", **env)
    assert listed.returncode == 0, listed.stderr
    assert "signed in" in listed.stderr  # the debug log does speak of the login...
    assert sandbox.password not in listed.stdout + listed.stderr
    assert "eyJ" not in listed.stdout + listed.stderr  # ...and holds no JWT (they all start so)


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"RECONCILER_PASSWORD": "wrong-password-1"}, "invalid credentials"),
        ({"RECONCILER_EMAIL": "nobody@sandbox.example"}, "invalid credentials"),
        ({"RECONCILER_PASSWORD": ""}, "no password"),
        ({"RECONCILER_EMAIL": ""}, "a password is given but no email"),
    ],
)
def test_refused_credentials_say_so_without_the_password(
    sandbox: SandboxServer, env: dict[str, str], said: str
) -> None:
    result = reconciler("workers", **{**_login_env(sandbox), **env})
    assert result.returncode == 1
    assert said in result.stderr
    assert "wrong-password-1" not in result.stderr and sandbox.password not in result.stderr
    assert "Traceback" not in result.stderr


def test_a_busy_service_at_sign_in_is_waited_out_and_never_called_bad_credentials(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    """Every POST answers 503 with `Retry-After: 1`: signing in is tried again, each time at
    least a second later, then fails naming the 503, never as refused credentials."""
    desired = _desired(tmp_path / "desired.yaml", 1)
    faults = {"error_rate": 1.0, "error_status": 503, "methods": ["POST"]}
    httpx.post(f"{sandbox.base_url}/_sandbox/faults", json=faults).raise_for_status()
    try:
        planned = reconciler("plan", str(desired), **_login_env(sandbox))
    finally:
        httpx.post(f"{sandbox.base_url}/_sandbox/faults", json={}).raise_for_status()
    said = planned.stdout + planned.stderr
    assert planned.returncode == 1, said
    assert "503" in said and "the email and password were not judged" in said, said
    assert "check the email and password" not in said, said
    logins = [e for e in _log(sandbox) if e["path"] == "/login/login/v2"]
    assert 3 <= len(logins) <= 6, logins  # one sign-in's attempts, not one per thread
    times = [datetime.fromisoformat(str(e["at"]).replace("Z", "+00:00")) for e in logins]
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
    assert min(gaps) >= 0.95, gaps  # Retry-After: 1, never sooner
