"""Shared fixtures: the sandbox on a loopback port, its controls, and clients of the service.

One sandbox server runs per test process; the `sandbox` fixture resets it before each test
(every table emptied, the demo client recreated with its token, faults and request log
cleared), so each test sees a fresh sandbox without paying for a server start. A test that
needs other settings (a file database, other timings) starts its own `SandboxServer`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reconciler import redaction
from reconciler.sandbox import SandboxServer
from tests.sandbox.support import ClientAccess, Controls, service_client

_ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    """The commands a test runs see no width of the runner's: COLUMNS is the width the text
    plan and the ledger fit (reconciler/terminal.py), and pytest-xdist's workers have
    COLUMNS=80 (and LINES). A test that wants a width sets COLUMNS itself. And they start from
    compiled bytecode (`_bytecode_once`)."""
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)
    _bytecode_once(config)


def _bytecode_once(config: pytest.Config) -> None:
    """Where PYTHONDONTWRITEBYTECODE is set (this machine sets it), every `reconciler` process
    a test starts (thousands: the CLI's tests, each job of the workflow runners, each command
    a job runs) compiled the hundred modules it imports again. The package is compiled once
    instead, as an install compiles it (into `__pycache__`, which git ignores); a module
    changed since is compiled again from its source, as Python does. Not compiled (a read-only
    tree, a module that does not parse): the tests run from the source, and say what fails."""
    if sys.flags.dont_write_bytecode and not hasattr(config, "workerinput"):  # not a worker
        compiled = [sys.executable, "-m", "compileall", "-q", str(_ROOT / "reconciler")]
        subprocess.run(compiled, check=False, capture_output=True)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` (the README's test command): two workers a core. The suite waits about as
    much as it computes (the sandbox's latencies and settling, retries' backoff, the child
    processes of the workflow runners), so a second worker a core uses the waits. On 2 cores:
    11 min 18 s with 2 workers, 9 min 43 s with 3, 9 min 2 s with 4, every test passing in
    each (docs/benchmarks.md, "The test suite"). PYTEST_XDIST_AUTO_NUM_WORKERS, xdist's own
    setting, still wins: None leaves the answer to xdist's hook, which reads it."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return 2 * min(cores or 1, _cgroup_cores())


def _cgroup_cores() -> int:
    """The cores a container's CPU quota allows (cgroup v2 `cpu.max`: "QUOTA PERIOD" or "max
    PERIOD"), which the affinity mask does not show; 1,024 when there is none."""
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        return max(1, -(-int(quota) // int(period)))
    except (OSError, ValueError):  # no cgroup v2, or "max": no quota
        return 1024


@pytest.fixture(autouse=True)
def _secrets_of_this_test_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The redaction registry is the process's: what one test registers (a variable's value
    such as `hooks.example.com`) must not mask another test's output in the same process."""
    monkeypatch.setattr(redaction, "_needles", redaction._needles)
    monkeypatch.setattr(redaction, "_probed", redaction._probed)
    monkeypatch.setattr(redaction, "_folded", redaction._folded)
    monkeypatch.setattr(redaction, "_registered", set(redaction._registered))


@pytest.fixture(scope="session")
def _sandbox_server() -> Iterator[SandboxServer]:
    with SandboxServer() as server:
        yield server


@pytest.fixture(scope="session")
def _controls(_sandbox_server: SandboxServer) -> Iterator[Controls]:
    controls = Controls(_sandbox_server.base_url)
    yield controls
    controls.close()


@pytest.fixture
def sandbox(_sandbox_server: SandboxServer, _controls: Controls) -> SandboxServer:
    """A fresh in-memory sandbox (the shared server, reset); `.base_url`, `.token`, ..."""
    _controls.reset()
    return _sandbox_server


@pytest.fixture
def controls(sandbox: SandboxServer, _controls: Controls) -> Controls:
    """The `/_sandbox/` controls of the fresh sandbox."""
    return _controls


@pytest.fixture
def api(sandbox: SandboxServer) -> Iterator[httpx.Client]:
    """An httpx client of the service as the demo client."""
    with service_client(sandbox.base_url, sandbox.token) as client:
        yield client


@pytest.fixture
def other_client(controls: Controls) -> ClientAccess:
    """A second client (company) of the same sandbox."""
    return controls.create_client(name="Other company")


@pytest.fixture
def other_api(sandbox: SandboxServer, other_client: ClientAccess) -> Iterator[httpx.Client]:
    """An httpx client of the service as the second client."""
    with service_client(sandbox.base_url, other_client.token) as client:
        yield client
