"""`validate` loads only what it needs: a pre-commit hook pays for the desired-state code, not
for logging, HTTP, the apply engine, the sandbox or rich (timed in benchmarks/startup.py); and
no command loads structlog until it has something to log."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from reconciler.cli import _COMMANDS, main
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


def _imported(*arguments: str, cwd: Path = ROOT) -> set[str]:
    """The modules `reconciler ARGUMENTS` imports (it must succeed)."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "reconciler", *arguments],
        cwd=cwd,
        env=user_environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line}


def test_validate_imports_nothing_it_does_not_use() -> None:
    imported = _imported("validate", "examples/quickstart.yaml")
    loaded = sorted(name for name in imported if name.startswith(NOT_FOR_VALIDATE))
    assert loaded == []


def test_a_plan_with_nothing_to_log_does_not_load_structlog(tmp_path: Path) -> None:
    shutil.copy(ROOT / "examples" / "quickstart.yaml", tmp_path)
    imported = _imported("plan", "--sandbox", "quickstart.yaml", cwd=tmp_path)
    assert "reconciler.service.client" in imported  # it did read the account
    assert sorted(name for name in imported if name.split(".")[0] == "structlog") == []


def test_help_lists_every_command_without_loading_any() -> None:
    imported = _imported("--help")
    assert sorted(name for name in imported if name.startswith("reconciler.cli.")) == [
        "reconciler.cli.logging_options"
    ]


@pytest.mark.parametrize("name", sorted(_COMMANDS))
def test_the_listed_line_is_the_commands_own(name: str) -> None:
    command = main.get_command(click.Context(main), name)
    assert command is not None and command.help is not None
    first_paragraph = " ".join(command.help.split("\n\n")[0].split())
    assert _COMMANDS[name][2] == first_paragraph
