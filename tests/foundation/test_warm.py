"""The tests' warm processes (tests/warm.py) behave as a new `python -m reconciler` does: the
same output, exit status and streams; signals reach the command, and its end is the client's;
a command whose interpreter would start otherwise runs in a new one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from tests import warm
from tests.cli import ROOT, user_environment

COLD = [sys.executable, "-m", "reconciler"]


def _both(*args: str, **env: str) -> tuple[subprocess.CompletedProcess[str], ...]:
    environ = user_environment(**env)
    return tuple(
        subprocess.run(
            [*start, *args],
            capture_output=True,
            text=True,
            env=environ,
            cwd=ROOT,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        for start in (warm.command(), COLD)
    )


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("--version",),
        ("validate", "examples/quickstart.yaml"),
        ("validate", "no-such-file.yaml"),
        ("plan", "--no-such-option"),
        ("validate", "examples/quickstart.yaml", "--format", "json"),
    ],
)
def test_a_warm_command_says_and_ends_as_a_new_interpreter_does(args: tuple[str, ...]) -> None:
    hot, cold = _both(*args)
    assert (hot.returncode, hot.stdout, hot.stderr) == (cold.returncode, cold.stdout, cold.stderr)


def test_the_environment_and_the_directory_are_the_commands_own() -> None:
    """A setting the warm process never had reaches the command (COLUMNS: the help's width),
    and a relative path is read from the command's own working directory."""
    narrow, cold = _both("--help", COLUMNS="40")
    assert narrow.stdout == cold.stdout
    assert narrow.stdout != _both("--help", COLUMNS="100")[0].stdout
    environ = user_environment()
    for cwd, code in ((ROOT / "examples", 0), (ROOT, 1)):
        done = subprocess.run(
            [*warm.command(), "validate", "quickstart.yaml"],
            cwd=cwd,
            capture_output=True,
            text=True,
            env=environ,
            timeout=60,
        )
        assert done.returncode == code, done.stderr


def test_another_interpreter_setting_runs_a_new_interpreter() -> None:
    """PYTHONIOENCODING is read at an interpreter's start: the warm process cannot take it on,
    so the command runs in a new interpreter, which writes in that encoding."""
    hot, cold = _both("--help", PYTHONIOENCODING="utf-16")
    assert hot.returncode == cold.returncode == 0
    assert hot.stdout == cold.stdout  # decoded by `text=True` as UTF-8 from UTF-16 bytes
    assert "\x00" in hot.stdout  # which a UTF-8 stdout would not have written


def _serve() -> tuple[subprocess.Popen[str], str]:
    """`reconciler sandbox serve` started warm, and the sandbox's address once it serves."""
    process = subprocess.Popen(
        [*warm.command(), "sandbox", "serve", "--port", "0"],
        env=user_environment(),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, json.loads(process.stdout.readline())["base_url"]


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_client_reaches_the_command(stop: signal.Signals) -> None:
    process, base_url = _serve()
    try:
        assert httpx.get(f"{base_url}/_sandbox/faults").status_code == 200
        process.send_signal(stop)
        assert process.wait(timeout=15) == 0  # the serve's own clean stop, as tests/sandbox's
    finally:
        process.kill()
        process.wait()
    assert "Traceback" not in process.stderr.read()  # type: ignore[union-attr]


def test_a_client_killed_takes_its_command_with_it() -> None:
    process, base_url = _serve()
    process.kill()  # SIGKILL: nothing can forward it
    assert process.wait(timeout=15) == -signal.SIGKILL
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            httpx.get(f"{base_url}/_sandbox/faults", timeout=1)
        except httpx.TransportError:
            break  # the command is gone
        time.sleep(0.1)
    else:
        pytest.fail("the command outlived its client")


def test_a_command_killed_by_a_signal_kills_its_client_with_it() -> None:
    process, _ = _serve()
    for pid in _forks_of_the_warm_process():
        os.kill(pid, signal.SIGKILL)
    assert process.wait(timeout=15) == -signal.SIGKILL


def _forks_of_the_warm_process() -> list[int]:
    """The pids whose parent is the warm process (read from /proc)."""
    server_pid = warm.server_pid()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == server_pid:
                found.append(int(entry))
    return found
