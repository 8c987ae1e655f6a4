"""Running the reconciler as a user does: a process of its own, a clean environment (forked
from a warm process that has imported the package: tests/warm.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from reconciler.sandbox import SandboxServer
from tests import warm

ROOT = Path(__file__).resolve().parents[1]

#: Settings of this machine that must not leak into a test's run.
_FOREIGN = ("RECONCILER_", "GITHUB_", "GH_")


def user_environment(
    server: SandboxServer | None = None, token: str | None = None, **env: str
) -> dict[str, str]:
    """This machine's environment without its reconciler and GitHub settings, plus `env`.

    With `server`, the connection settings point at that sandbox (with its demo token unless
    `token` is given).
    """
    environ = {key: value for key, value in os.environ.items() if not key.startswith(_FOREIGN)}
    environ |= {"PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    if server is not None:
        environ |= {"RECONCILER_BASE_URL": server.base_url}
        environ |= {"RECONCILER_TOKEN": server.token if token is None else token}
    return environ | env


def reconciler(
    *args: str,
    server: SandboxServer | None = None,
    token: str | None = None,
    cwd: Path = ROOT,
    stdin: Any = subprocess.DEVNULL,
    timeout: float = 120,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """`reconciler ARGS...` in a subprocess; stdin is no terminal unless one is given."""
    return subprocess.run(
        [*warm.command(), *args],
        stdin=stdin,
        capture_output=True,
        text=True,
        env=user_environment(server, token, **env),
        cwd=cwd,
        timeout=timeout,
    )
