"""A canary token and a canary header value never show, in any usual encoding, under failures.

Logs are configured at debug level as the CLI does, and stderr is captured; every error's text
and repr and the objects' reprs are searched too.
"""

from __future__ import annotations

import base64
import logging
import secrets
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from reconciler import logs
from reconciler.cli import main
from reconciler.secrets import Secret
from reconciler.service.client import ServiceClient
from reconciler.service.config import resolve_config
from reconciler.service.errors import ServiceError
from reconciler.service.models import WebhookHeader
from tests.service.helpers import FAST_RETRY, client_for, control, invitation


def _forms(value: str) -> set[str]:
    raw = value.encode()
    return {
        value,
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote_plus(value),
        raw.hex(),
        raw.hex().upper(),
        base64.b64encode(raw).decode(),
        base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
    }


@pytest.fixture
def debug_logs(capfd: pytest.CaptureFixture[str]) -> Iterator[None]:
    """Logging as the CLI sets it up at debug level, writing to the captured stderr."""
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    logs.configure("json", "debug")
    try:
        yield
    finally:
        root.handlers[:], _ = saved
        root.setLevel(saved[1])


def _canary() -> str:
    # URL-unsafe characters on purpose, so the encoded forms differ from the plain one.
    return f"cnry/{secrets.token_urlsafe(24)}+{secrets.token_hex(8)}="


SCENARIOS: dict[str, tuple[dict[str, Any], Callable[[ServiceClient], object]]] = {
    "401 on a read": ({}, lambda client: client.list_workers()),
    "503s on a read": ({"error_rate": 1.0}, lambda client: client.get_webhook()),
    "dropped read": ({"drop_rate": 1.0}, lambda client: client.list_workers()),
    "dropped invitation": ({"drop_rate": 1.0}, lambda c: c.invite_workers([invitation(1)])),
    "503 invitation": ({"error_rate": 1.0}, lambda c: c.invite_workers([invitation(1)])),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_refused_canary_token_never_shows(
    sandbox: Any, debug_logs: None, capfd: pytest.CaptureFixture[str], scenario: str
) -> None:
    canary = _canary()
    faults, call = SCENARIOS[scenario]
    config = resolve_config(
        base_url=sandbox.base_url, environ={"RECONCILER_TOKEN": canary}, retry=FAST_RETRY
    )
    control(sandbox, "faults", faults)
    seen: list[str] = [repr(config), str(config.token)]
    with ServiceClient(config) as client:
        seen.append(repr(client))
        with pytest.raises(ServiceError) as caught:
            call(client)
    seen += _texts(caught.value)
    captured = capfd.readouterr()
    seen += [captured.out, captured.err]
    assert "service request" in captured.err  # debug logging was on: the test can see leaks
    _assert_absent(canary, seen)


@pytest.mark.parametrize(
    "faults", [{}, {"error_rate": 1.0}, {"drop_rate": 1.0}], ids=["ok", "503s", "dropped"]
)
def test_a_webhook_header_value_never_shows(
    sandbox: Any, debug_logs: None, capfd: pytest.CaptureFixture[str], faults: dict[str, Any]
) -> None:
    canary = _canary()
    header = WebhookHeader("X-Webhook-Token", Secret(canary))
    seen: list[str] = [repr(header)]
    with client_for(sandbox) as client:
        control(sandbox, "faults", faults)
        try:
            webhook = client.set_webhook("https://hooks.example.com/x", [header], ["KYC"])
            seen += [repr(webhook), str(webhook), repr(client.get_webhook())]
            logs.get_logger("test").debug("webhook", webhook=webhook, headers=webhook.headers)
        except ServiceError as error:
            seen += _texts(error)
        control(sandbox, "faults", {})
        read = client.get_webhook()
        if read is not None:  # the last attempt may have landed before the drop
            assert read.headers[0].value == Secret(canary)
            seen.append(repr(read))
    captured = capfd.readouterr()
    seen += [captured.out, captured.err]
    _assert_absent(canary, seen)


def _texts(error: BaseException) -> list[str]:
    texts = []
    while error is not None:
        texts += [str(error), repr(error)]
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return texts


def _assert_absent(canary: str, texts: list[str]) -> None:
    for form in _forms(canary):
        for text in texts:
            assert form not in text, f"a form of the secret leaked: {text[:300]!r}"


@pytest.mark.parametrize(
    "faults", [{}, {"error_rate": 1.0}, {"drop_rate": 1.0}], ids=["401", "503s", "dropped"]
)
def test_the_command_line_never_shows_the_token(sandbox: Any, faults: dict[str, Any]) -> None:
    canary = _canary()
    control(sandbox, "faults", faults)
    result = CliRunner().invoke(
        main,
        ["--log-level", "debug", "--log-format", "json", "workers"],
        env={
            "RECONCILER_TOKEN": canary,
            "RECONCILER_BASE_URL": sandbox.base_url,
            "RECONCILER_TIMEOUT": "2",
            "RECONCILER_RETRY_ATTEMPTS": "2",
        },
    )
    assert result.exit_code == 1
    assert "Error: " in result.output and "service request" in result.output
    _assert_absent(canary, [result.output])
