"""`validate` loads only what it needs: a pre-commit hook pays for the desired-state code, not
for logging, HTTP, the apply engine, the sandbox or rich (timed in benchmarks/startup.py)."""

from __future__ import annotations

import subprocess
import sys

from tests.cli import ROOT, user_environment

NOT_FOR_VALIDATE = (
    "structlog",
    "httpx",
    "rich",
    "uvicorn",
    "starlette",
    "reconciler.apply",
    "reconciler.sandbox",
    "reconciler.service",
    "reconciler.logs",
)


def test_validate_imports_nothing_it_does_not_use() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "reconciler",
            "validate",
            "examples/quickstart.yaml",
        ],
        cwd=ROOT,
        env=user_environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    imported = {
        line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line
    }
    loaded = sorted(name for name in imported if name.startswith(NOT_FOR_VALIDATE))
    assert loaded == []
