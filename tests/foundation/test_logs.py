"""The logging set-up: one configuration, readable or JSON, and no secret in any event."""

from __future__ import annotations

import base64
import json
import logging
import os
import secrets
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
import structlog

from reconciler import logs


@pytest.fixture
def canary() -> str:
    value = "cnry-" + secrets.token_urlsafe(24)
    logs.register_secret(value)
    return value


def _encoded_forms(value: str) -> list[str]:
    raw = value.encode()
    return [
        value,
        base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
        urllib.parse.quote(value, safe=""),
    ]


def _emit(capsys: pytest.CaptureFixture[str], fmt: logs.LogFormat, **event: object) -> str:
    logs.configure(fmt, "debug")
    structlog.stdlib.get_logger("test").info("event", **event)
    logging.getLogger("httpx").info("HTTP Request: %s", event.get("line", ""))
    return capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["json", "console"])
def test_registered_secret_never_appears_in_any_encoding(
    capsys: pytest.CaptureFixture[str], canary: str, fmt: logs.LogFormat
) -> None:
    raw = canary.encode()
    out = _emit(
        capsys,
        fmt,
        plain=f"value={canary}",
        b64=base64.b64encode(raw).decode(),
        quoted=urllib.parse.quote(canary, safe=""),
        nested={"deep": [canary, {"deeper": canary}]},
        line=f"GET https://x.example/?t={urllib.parse.quote(canary)}",
    )
    assert "[redacted]" in out
    for form in _encoded_forms(canary):
        assert form not in out, form


def test_credential_keys_and_header_values_are_masked_whatever_their_value(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = _emit(
        capsys,
        "json",
        authorization="Bearer not-registered-anywhere",
        headers=[{"name": "X-Webhook-Token", "value": "unregistered-header-value"}],
        request_headers={"headers": {"Authorization": "Bearer abc-unregistered"}},
        token="tok-unregistered",
    )
    for leaked in ("not-registered-anywhere", "unregistered-header-value", "abc-unregistered"):
        assert leaked not in out
    assert "tok-unregistered" not in out
    assert "X-Webhook-Token" in out  # header names are not secret


def test_json_format_writes_one_json_object_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    out = _emit(capsys, "json", count=3)
    records = [json.loads(line) for line in out.splitlines()]
    assert records[0]["event"] == "event"
    assert records[0]["count"] == 3
    assert records[0]["level"] == "info"
    assert "timestamp" in records[0]


def test_level_filters_events(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure("json", "warning")
    structlog.stdlib.get_logger("test").info("quiet")
    structlog.stdlib.get_logger("test").warning("loud")
    out = capsys.readouterr().err
    assert "quiet" not in out
    assert "loud" in out


def test_short_values_are_not_registered() -> None:
    logs.register_secret("ab")
    assert logs.scrub("a cab ran") == "a cab ran"


def test_before_configure_events_are_filtered_redacted_and_kept_off_stdout() -> None:
    """A library user who never configures logging still gets no secret and no stdout noise."""
    program = (
        "from reconciler import logs\n"
        "logs.register_secret('cnry-registered-0123456789')\n"
        "log = logs.get_logger('library')\n"
        "log.debug('quiet-debug-event')\n"
        "log.warning('loud', token='tok-unregistered', note='cnry-registered-0123456789')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        timeout=60,
        check=True,
    )
    assert result.stdout == ""
    assert "loud" in result.stderr
    assert "quiet-debug-event" not in result.stderr
    assert "tok-unregistered" not in result.stderr
    assert "cnry-registered" not in result.stderr
