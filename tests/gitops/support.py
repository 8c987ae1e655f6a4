"""Running the CLI as the CI jobs do: a subprocess, with only the environment a job would set."""

from __future__ import annotations

from pathlib import Path

from tests.cli import ROOT, reconciler
from tests.cli import user_environment as job_environment

FIXTURES = Path(__file__).resolve().parent / "fixtures"

__all__ = ["FIXTURES", "ROOT", "job_environment", "reconciler"]
