"""Odd inputs a user can type end in a clear message, never an internal error or a traceback.

Each case runs the real command (a new process) against the sandbox: the exit status and a
phrase of the message are asserted, and that nothing reads "internal error" or "Traceback".
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from tests.cli import reconciler


def _jwt(claims: str, header: str = '{"alg":"HS256","typ":"JWT"}') -> str:
    """A JWT with these claims written as given (so NaN, -Infinity, 1e400 stay as typed)."""

    def part(text: str) -> str:
        return base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()

    return f"{part(header)}.{part(claims)}.c2lnbmF0dXJl"


EXPIRED = "the token expired"
REFUSED = "the service refused the token"

TOKENS = [
    (_jwt('{"exp": -1e20}'), EXPIRED),
    (_jwt('{"exp": -Infinity}'), EXPIRED),
    (_jwt('{"exp": ' + "-1" + "0" * 400 + "}"), EXPIRED),  # an integer beyond any float
    (_jwt('{"exp": 0}'), EXPIRED),
    (_jwt('{"exp": 1e400}'), REFUSED),  # never expires: the service has the last word
    (_jwt('{"exp": ' + "1" + "0" * 400 + "}"), REFUSED),
    (_jwt('{"exp": Infinity}'), REFUSED),
    (_jwt('{"exp": NaN}'), REFUSED),
    (_jwt('{"exp": "tomorrow"}'), REFUSED),
    (_jwt('{"exp": null}'), REFUSED),
    (_jwt('{"exp": true}'), REFUSED),
    (_jwt('{"sub": "no exp"}'), REFUSED),
    (_jwt("[1, 2]"), REFUSED),  # claims that are no object
    (_jwt('{"exp": 1}', header='{"alg":"none"}'), EXPIRED),
    ("a-long-lived-token-nobody-issued", REFUSED),
    ("a.b.c.d", REFUSED),
    ("...", REFUSED),
    ("!!!.@@@.###", REFUSED),
    ("eyJ.eyJ.eyJ", REFUSED),
    ("x" * 20_000, REFUSED),
]


TOKEN_KINDS = [
    "exp -1e20",
    "exp -Infinity",
    "exp -10**400",
    "exp 0",
    "exp 1e400",
    "exp 10**400",
    "exp Infinity",
    "exp NaN",
    "exp string",
    "exp null",
    "exp true",
    "no exp",
    "claims a list",
    "alg none",
    "not a JWT",
    "three dots",
    "only dots",
    "base64 garbage",
    "empty parts",
    "20000 characters",
]


@pytest.mark.parametrize(("token", "said"), TOKENS, ids=TOKEN_KINDS)
def test_every_token_form_is_a_clear_refusal(sandbox: Any, token: str, said: str) -> None:
    result = reconciler("workers", server=sandbox, token=token)
    _clear(result, 1, said)


#: A usage error (a bad option value) exits 1, as every error does (main's rule).
USAGE = 1
OUT_OF_RANGE = "is out of range: in UTC it falls outside the years 1 to 9999"
NOT_A_DATE = "is not an ISO 8601 date or timestamp"

DATES = [
    ("payments", "--since", "0001-01-01T00:00:00+01:00", USAGE, OUT_OF_RANGE),
    ("paylists", "--until", "9999-12-31T23:59:59-01:00", USAGE, OUT_OF_RANGE),
    ("payments", "--until", "0001-01-01T00:00:00+14:00", USAGE, OUT_OF_RANGE),
    ("paylists", "--since", "9999-12-31T23:59:59.999999999-14:00", USAGE, OUT_OF_RANGE),
    ("payments", "--since", "0001-01-01", 0, "[]"),
    ("paylists", "--since", "0001-01-01T00:00:00-14:00", 0, "[]"),
    ("payments", "--until", "9999-12-31T23:59:59.999999999Z", 0, "[]"),
    ("paylists", "--until", "9999-12-31", 0, "[]"),
    ("payments", "--since", "10000-01-01", USAGE, NOT_A_DATE),
    ("paylists", "--until", "-0001-01-01", USAGE, NOT_A_DATE),
    ("payments", "--since", "2026-02-30", USAGE, NOT_A_DATE),
    ("paylists", "--since", "2026-01-01T24:00:00Z", USAGE, NOT_A_DATE),
    ("payments", "--until", "2026-01-01T00:00:00+24:00", USAGE, NOT_A_DATE),
    ("payments", "--since", "9" * 5000, USAGE, NOT_A_DATE),
]


@pytest.mark.parametrize(
    ("command", "option", "value", "status", "said"),
    DATES,
    ids=[f"{command} {option} {value[:40]}" for command, option, value, *_ in DATES],
)
def test_every_date_option_at_its_extremes(
    sandbox: Any, command: str, option: str, value: str, status: int, said: str
) -> None:
    result = reconciler(command, option, value, server=sandbox)
    _clear(result, status, said)


@pytest.mark.parametrize("command", ["plan", "drift"])
@pytest.mark.parametrize(
    ("value", "status", "said"),
    [
        ("0001-01-01T00:00:00+01:00", USAGE, OUT_OF_RANGE),
        ("9999-12-31T23:59:59-01:00", USAGE, OUT_OF_RANGE),
        ("0001-01-01", 0, "Plan: "),
        ("2026-13-01", USAGE, NOT_A_DATE),
    ],
)
def test_money_since_at_its_extremes(
    sandbox: Any, command: str, value: str, status: int, said: str
) -> None:
    result = reconciler(
        command,
        "examples/quickstart.yaml",
        "--money-since",
        value,
        server=sandbox,
        RECONCILER_CLIENT_ID=str(sandbox.client_id),
    )
    # A date the command takes: plan exits 0, drift 2 (the empty sandbox differs from the file).
    _clear(result, 2 if command == "drift" and status == 0 else status, said)


def test_a_worker_email_of_70000_characters(sandbox: Any) -> None:
    result = reconciler("worker", "a" * 70_000 + "@example.com", server=sandbox)
    _clear(result, USAGE, "is not an email")
    assert len(result.stderr) < 1000  # the address is not echoed whole


@pytest.mark.parametrize("duration", ["9" * 400, "1e400", "99999999999999999999d", "-1s", "0"])
def test_apply_durations_at_their_extremes(duration: str) -> None:
    result = reconciler("apply", "examples/quickstart.yaml", "--settle-timeout", duration)
    _clear(result, USAGE, "--settle-timeout")


def test_a_seed_that_is_not_utf8(tmp_path: Path) -> None:
    seed = tmp_path / "seed.yaml"
    seed.write_bytes(b"workers:\n  - email: \xff\xfe@example.com\n")
    result = reconciler("sandbox", "serve", "--seed", str(seed), "--check")
    _clear(result, 1, f"{seed} is not UTF-8 text (byte 21 is 0xff)")


@pytest.mark.parametrize("reset", [["--sandbox-reset"], []])
def test_a_sandbox_db_that_is_a_file_of_proc(reset: list[str]) -> None:
    result = reconciler("workers", "--sandbox", *reset, "--sandbox-db", "/proc/self/status")
    _clear(result, 1, "/proc/self/status is not a sandbox database")


def _clear(result: Any, status: int, said: str) -> None:
    shown = result.stdout + result.stderr
    assert "internal error" not in shown and "Traceback" not in shown, shown[-2000:]
    assert result.returncode == status, shown[-2000:]
    assert said in shown, shown[-2000:]


def test_an_unknown_host_fails_fast_and_says_so() -> None:
    """A name that does not resolve is a typo or no network: not retried for a minute."""
    import time

    started = time.monotonic()
    result = reconciler(
        "workers",
        "--base-url",
        "https://no-such-host.invalid",
        timeout=30,
        RECONCILER_TOKEN="a-token",
    )
    _clear(result, 1, "cannot find the service's host 'no-such-host.invalid' (DNS: ")
    assert "nothing was sent" in result.stderr and "retrying" not in result.stderr
    assert time.monotonic() - started < 15
