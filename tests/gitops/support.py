"""Running the CLI as the CI jobs do: a subprocess, with only the environment a job would set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"

#: Variables a CI runner sets that would leak into the tests from the machine running them.
_FOREIGN = ("RECONCILER_", "GITHUB_", "GH_")


def job_environment(**env: str) -> dict[str, str]:
    """The machine's environment without its reconciler/GitHub variables, plus `env`."""
    environ = {key: value for key, value in os.environ.items() if not key.startswith(_FOREIGN)}
    return environ | {"PYTHONPATH": str(ROOT), "NO_COLOR": "1"} | env


def reconciler(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess[str]:
    """`reconciler ARGS...` as a subprocess of this Python."""
    return subprocess.run(
        [sys.executable, "-m", "reconciler", *args],
        capture_output=True,
        text=True,
        env=job_environment(**env),
        cwd=cwd,
        timeout=120,
    )
