"""A service that cannot be reached: one line per retry, a hint, and no wait for this machine.

A refused connection to a loopback address means nothing listens there: it is reported at once
(not retried for 10 s). A remote address that refuses is retried, and requests sent in parallel
announce each attempt once between them.
"""

from __future__ import annotations

import json
import socket
import time

import pytest

from tests.cli import ROOT, reconciler

QUICKSTART = str(ROOT / "examples" / "quickstart.yaml")
HINT = "hint: is the service running at that address, and is the address right?"


def _closed_port(host: str) -> int:
    """A port on `host` where nothing listens (bound, then closed)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
    return port


def _retries(stderr: str) -> list[str]:
    events = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    return [event["event"] for event in events if event["event"].startswith("retrying in")]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_refused_loopback_address_fails_at_once_with_a_hint(host: str) -> None:
    url = f"http://{host}:{_closed_port('127.0.0.1')}"
    started = time.monotonic()
    result = reconciler("plan", QUICKSTART, RECONCILER_BASE_URL=url, RECONCILER_TOKEN="t")
    elapsed = time.monotonic() - started

    assert result.returncode == 1
    assert f"Error: could not connect to the service at {url}" in result.stderr
    assert HINT in result.stderr and "RECONCILER_BASE_URL" in result.stderr
    assert _retries(result.stderr) == []
    assert elapsed < 5, elapsed  # was 10 s of retries


def _outward_address() -> str | None:
    """This machine's own non-loopback address, where a closed port refuses too."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent for a UDP connect
        except OSError:
            return None
        address: str = probe.getsockname()[0]
    return None if address.startswith("127.") else address


def test_a_remote_refusal_is_retried_with_one_line_per_attempt() -> None:
    address = _outward_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address")
    url = f"https://{address}:{_closed_port(address)}"
    result = reconciler(
        "plan", QUICKSTART, RECONCILER_BASE_URL=url, RECONCILER_TOKEN="t",
        RECONCILER_RETRY_ATTEMPTS="3",
    )  # fmt: skip

    assert result.returncode == 1
    retries = _retries(result.stderr)
    # The plan reads several things at once; each attempt is announced once between them.
    assert [line.split("(")[1].split(")")[0] for line in retries] == [
        "attempt 2 of 3",
        "attempt 3 of 3",
    ], retries
    assert HINT in result.stderr
