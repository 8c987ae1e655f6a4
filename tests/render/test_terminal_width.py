"""On a terminal 60 columns wide: the text plan wraps between words, `reconciler workers` keeps
`external_id` (the key everything else uses), and payment lines align their descriptions.

The commands run on a pseudo-terminal of 60 columns (and COLUMNS=60), as a person sees them.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator

import pytest

from reconciler.sandbox import SandboxServer
from tests.cli import ROOT, user_environment

COLUMNS = 60
PAYROLL = ROOT / "examples" / "payroll"


@pytest.fixture(scope="module")
def demo() -> Iterator[SandboxServer]:
    with SandboxServer(seed=ROOT / "examples" / "sandbox-seed.yaml") as server:
        yield server


def on_terminal(server: SandboxServer, *args: str) -> list[str]:
    """`reconciler ARGS...` with its output on a terminal COLUMNS wide: the lines it shows."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, COLUMNS, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "reconciler", *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.PIPE,
        env=user_environment(server, COLUMNS=str(COLUMNS)),
        cwd=ROOT,
    )
    os.close(follower)
    seen = b""
    try:
        while chunk := os.read(leader, 65536):
            seen += chunk
    except OSError:  # the terminal closes with the process
        pass
    os.close(leader)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode in (0, 2), stderr.decode()
    text = re.sub(r"\x1b\[[0-9;]*m", "", seen.decode()).replace("\r\n", "\n")
    return text.splitlines()


def test_the_text_plan_wraps_between_words(demo: SandboxServer) -> None:
    lines = on_terminal(demo, "plan", str(PAYROLL))
    words = " ".join(lines).split()
    assert "--replace" in words and "ID" in words  # never "--replac" / "e ID"
    long = [line for line in lines if len(line) > COLUMNS]
    # Only a word wider than the terminal may leave a line too long (none in this plan).
    assert long == []
    drift = lines.index("Drift: the service cannot change a worker in place;")
    assert lines[drift + 1] == "--replace ID inactivates it and invites it again."


def test_payment_lines_align_their_descriptions(demo: SandboxServer) -> None:
    lines = on_terminal(demo, "plan", str(PAYROLL))
    payments = [line for line in lines if re.match(r"\s+\+\s+[\d,]+\.\d\d  ", line)]
    assert len(payments) == 2
    starts = {line.index('"November 2026') for line in payments}
    assert len(starts) == 1, payments


def test_workers_keeps_external_id_on_a_narrow_terminal(demo: SandboxServer) -> None:
    lines = on_terminal(demo, "workers")
    header = next(line for line in lines if "email" in line)
    assert "external_id" in header
    assert any("ENG-001" in line for line in lines)
    assert all(len(line) <= COLUMNS for line in lines)
    hidden = " ".join(lines[lines.index(next(x for x in lines if x.startswith("Hidden"))) :])
    assert "external_id" not in hidden
