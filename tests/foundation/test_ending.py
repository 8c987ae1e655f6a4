"""The process ends quickly only through the console entry: a command run in a test's process
(click's runner calls `main`) holds nothing of what it built, and leaves the process running."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from reconciler import ending
from reconciler.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_a_command_run_in_process_holds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(ROOT / "examples" / "quickstart.yaml", tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["plan", "--sandbox", "quickstart.yaml"])
    assert result.exit_code == 0, result.output
    assert "Plan:" in result.output
    assert ending._held == []  # the plan and its states were freed as usual
