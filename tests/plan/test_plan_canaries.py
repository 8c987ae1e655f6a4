"""Canaries: the token and header values never appear in any output, log or saved plan."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import urllib.parse
from pathlib import Path

import httpx
import pytest

from reconciler.sandbox import SandboxServer
from tests.plan.test_plan_cli import run

LIVE_VALUE = "live-" + secrets.token_urlsafe(24)  # the value the service holds
FILE_VALUE = "file-" + secrets.token_urlsafe(24)  # the value the file asks for, via ${VAR}
NEW_VALUE = "new-" + secrets.token_urlsafe(24)  # a header only the file has

DESIRED = """\
version: 1
scope:
  externalIdPrefix: "CAN-"
workers:
  - {externalId: CAN-001, typeOfWorker: Worker, workerName: Ada, workerSurname: Lovelace,
     workerEmail: ada@example.com, countryIso: GB}
webhook:
  url: https://hooks.example.com/workforce
  event_types: [KYC]
  headers:
    - {name: X-Shared-Secret, value: "${CANARY_FILE}"}
    - {name: X-New-Secret, value: "${CANARY_NEW}"}
"""
ENV = {"CANARY_FILE": FILE_VALUE, "CANARY_NEW": NEW_VALUE}


def leaks(value: str) -> set[str]:
    """The value and the forms it usually leaks in."""
    raw = value.encode()
    forms = {value, raw.hex(), raw.hex().upper(), urllib.parse.quote(value, safe="")}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        forms |= {encode(raw).decode(), encode(raw).decode().rstrip("=")}
    return forms


def unkeyed_hashes(value: str) -> set[str]:
    raw = value.encode()
    found = set()
    for name in ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b"):
        digest = hashlib.new(name, raw).digest()
        found |= {digest.hex(), digest.hex().upper(), base64.b64encode(digest).decode()}
    return found


@pytest.fixture
def account(sandbox: SandboxServer, tmp_path: Path) -> tuple[SandboxServer, str, Path]:
    """A fresh client whose live webhook holds LIVE_VALUE, and the file that changes it."""
    created = httpx.post(f"{sandbox.base_url}/_sandbox/clients", json={"name": "Canary"})
    created.raise_for_status()
    token = created.json()["token"]
    assert len(token) >= 16, "the sandbox's tokens should be high-entropy canaries"
    answer = httpx.post(
        f"{sandbox.base_url}/webhooks/clients",
        headers={"Authorization": f"Bearer {token}"},
        json={
            "url": "https://hooks.example.com/workforce",
            "event_types": ["KYC"],
            "headers": [{"name": "x-shared-secret", "value": LIVE_VALUE}],
        },
    )
    answer.raise_for_status()
    path = tmp_path / "canary.yaml"
    path.write_text(DESIRED)
    return sandbox, token, path


@pytest.mark.parametrize(
    ("fmt", "log_format"), [("text", "console"), ("json", "json"), ("markdown", "json")]
)
def test_no_secret_in_any_output_or_log(
    account: tuple[SandboxServer, str, Path], tmp_path: Path, fmt: str, log_format: str
) -> None:
    sandbox, token, path = account
    saved = tmp_path / "saved.plan"
    result = run(
        "--log-level",
        "debug",
        "--log-format",
        log_format,
        "plan",
        str(path),
        "--format",
        fmt,
        "--out",
        str(saved),
        "--show-unmanaged",
        server=sandbox,
        token=token,
        **ENV,
    )
    assert result.returncode == 0, result.stderr
    assert "(sensitive value)" in result.stdout or fmt == "json"
    everything = result.stdout + result.stderr + saved.read_text()
    for value in (token, LIVE_VALUE, FILE_VALUE, NEW_VALUE):
        for form in leaks(value):
            assert form not in everything, f"a form of a secret leaked: {form[:6]}..."


def test_drift_logs_no_secret(account: tuple[SandboxServer, str, Path]) -> None:
    sandbox, token, path = account
    result = run(
        "--log-level",
        "debug",
        "drift",
        str(path),
        "--format",
        "json",
        server=sandbox,
        **ENV,
        token=token,
    )
    assert result.returncode == 2, result.stderr
    document = json.loads(result.stdout)
    webhook = next(c for c in document["resource_changes"] if c["address"] == "webhook")
    assert webhook["change"]["changed_fields"] == [
        'headers["X-New-Secret"]',
        'headers["X-Shared-Secret"]',
    ]
    for value in (token, LIVE_VALUE, FILE_VALUE, NEW_VALUE):
        assert not any(form in result.stdout + result.stderr for form in leaks(value))


def test_the_saved_plan_keys_header_hashes_with_the_token(
    account: tuple[SandboxServer, str, Path], tmp_path: Path
) -> None:
    sandbox, token, path = account
    other = httpx.post(f"{sandbox.base_url}/_sandbox/clients", json={"name": "Other"}).json()
    records = []
    first = httpx.get(
        f"{sandbox.base_url}/webhooks/clients", headers={"Authorization": f"Bearer {token}"}
    ).json()["client_id"]
    for name, each, client in (("first", token, first), ("second", other["token"], None)):
        saved = tmp_path / f"{name}.plan"
        # A saved plan names its client: the second has no webhook to show it, so it is given.
        client_id = {} if client is not None else {"RECONCILER_CLIENT_ID": str(other["client_id"])}
        result = run(
            "plan", str(path), "--out", str(saved), server=sandbox, token=each, **ENV, **client_id
        )
        assert result.returncode == 0, result.stderr
        text = saved.read_text()
        for value in (FILE_VALUE, NEW_VALUE, LIVE_VALUE):
            assert not any(digest in text for digest in unkeyed_hashes(value))
        document = json.loads(text)
        (webhook,) = [c for c in document["changes"] if c["address"] == "webhook"]
        records.append({h["name"]: h for h in webhook["webhook"]["headers"]})
    first, second = records
    assert first["X-Shared-Secret"]["template"] == "${CANARY_FILE}"
    assert first["X-Shared-Secret"]["hmac"] != second["X-Shared-Secret"]["hmac"]
    assert first["X-New-Secret"]["hmac"] != second["X-New-Secret"]["hmac"]
