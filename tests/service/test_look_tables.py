"""Tables on a terminal fit it: a value is never broken inside a word or an email.

The commands run in a pseudo-terminal of 60 and 80 columns, as a user's shell runs them;
output to no terminal is written whole.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from decimal import Decimal
from typing import Any

import pytest

from reconciler.service.models import PaymentItem
from tests.cli import reconciler, user_environment
from tests.service.helpers import client_for, control, invitation

LONG_EMAIL = "maria-fernanda.de-los-santos@subsidiary.example.com"  # 51 characters
EMAILS = [*(f"worker{n}@example.com" for n in (1, 2)), LONG_EMAIL]


@pytest.fixture
def account(sandbox: Any) -> Any:
    """Three workers, one with a long email, two ACTIVE (the long one too)."""
    with client_for(sandbox) as client:
        results = client.invite_workers(
            [invitation(1), invitation(2), invitation(3, worker_email=LONG_EMAIL)]
        )
    for result in (results[0], results[2]):
        control(sandbox, f"agreements/{result.agreement_id}/status", {"status": "ACTIVE"})
    return sandbox


def on_terminal(sandbox: Any, columns: int, *args: str) -> str:
    """What `reconciler ARGS` shows on a terminal `columns` wide (no COLUMNS variable)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = user_environment(sandbox)
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "reconciler", *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    output = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closes when the process ends
            break
        if not chunk:
            break
        output += chunk
    os.close(leader)
    assert process.wait(timeout=60) == 0, output.decode()
    return output.decode()


@pytest.mark.parametrize("columns", [60, 80])
def test_every_email_is_whole_and_no_line_passes_the_terminal(account: Any, columns: int) -> None:
    shown = on_terminal(account, columns, "workers")
    lines = shown.splitlines()
    for email in EMAILS:
        assert any(email in line for line in lines), f"{email} broken at {columns}:\n{shown}"
    assert all(len(line) <= columns for line in _plain(shown).splitlines()), shown
    assert "(--wide shows all): " in shown  # the columns left out are named
    assert "created_at" in shown


@pytest.mark.parametrize("columns", [60, 80])
def test_one_worker_shows_the_email_whole(account: Any, columns: int) -> None:
    shown = on_terminal(account, columns, "worker", LONG_EMAIL)
    assert sum(LONG_EMAIL in line for line in shown.splitlines()) >= 2  # title and value
    assert all(len(line) <= columns for line in _plain(shown).splitlines()), shown


def test_wide_shows_every_column_whole(account: Any) -> None:
    shown = on_terminal(account, 60, "workers", "--wide")
    headings = next(line for line in _plain(shown).splitlines() if "agreement_id" in line)
    for column in ("agreement_id", "status", "email", "legal_name", "country_iso", "created_at"):
        assert column in headings
    assert "--wide" not in shown


def test_a_value_too_long_for_the_terminal_is_cut_with_an_ellipsis(account: Any) -> None:
    shown = _plain(on_terminal(account, 40, "workers"))
    assert "…" in shown and "worker1@example.com" in shown
    assert all(len(line) <= 40 for line in shown.splitlines()), shown


def test_piped_output_is_unchanged(account: Any) -> None:
    assert [row["email"] for row in json.loads(reconciler("workers", server=account).stdout)] == [
        "worker1@example.com",
        "worker2@example.com",
        LONG_EMAIL,
    ]
    table = reconciler("workers", "--format", "table", server=account, COLUMNS="60").stdout
    assert "created_at" in table and LONG_EMAIL in table  # written whole: no terminal to fit


def _plain(text: str) -> str:
    """The text without terminal escapes (styles), as a person reads it."""
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


DESCRIPTION = "November 2026 contractors, second half (reissued after the bank holiday)"


@pytest.fixture
def paid(account: Any) -> Any:
    """A paylist of 1,394,500.00 with a long description, FAILED (the wallet holds less)."""
    with client_for(account) as client:
        items = [PaymentItem(DESCRIPTION, Decimal("1394500.00"), "worker1@example.com")]
        client.create_paylist(DESCRIPTION, items, idempotence_key="k" * 32)
    control(account, "process")
    return account


def _words_shown(text: str, shown: str) -> bool:
    return all(word in shown.split() for word in text.split())


def test_paylists_at_80_columns_group_the_total_and_keep_the_description(paid: Any) -> None:
    shown = _plain(on_terminal(paid, 80, "paylists"))
    assert "1,394,500.00" in shown and "1394500.00" not in shown
    assert _words_shown(DESCRIPTION, shown.replace("│", " ")), shown  # wrapped between words
    assert all(len(line) <= 80 for line in shown.splitlines()), shown


def test_payments_at_80_columns_keep_the_status_and_the_cause(paid: Any) -> None:
    shown = _plain(on_terminal(paid, 80, "payments"))
    assert "FAILED" in shown and "INSUFFICIENT_FUNDS" in shown, shown
    assert "1,394,500.00" in shown
    assert all(len(line) <= 80 for line in shown.splitlines()), shown
