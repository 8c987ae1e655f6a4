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
    "email_validator",  # plain domains are known valid without it; it checks the others
    "idna",
    "httpx",
    "rich",
    "uvicorn",
    "starlette",
    "reconciler.apply",
    "reconciler.sandbox",
    "reconciler.service",
    "reconciler.logs",
)


def _imported(*arguments: str, cwd: Path = ROOT, environ: dict[str, str] | None = None) -> set[str]:
    """The modules `reconciler ARGUMENTS` imports (it must succeed)."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "reconciler", *arguments],
        cwd=cwd,
        env={**user_environment(), **(environ or {})},
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


#: What a valid file never needs, and costs `validate` a third of its start-up: the version's
#: metadata, PyYAML (only to locate problems), OpenSSL (keyed hashes), difflib (suggestions).
NOT_FOR_A_VALID_FILE = {"importlib.metadata", "yaml", "hashlib", "_hashlib", "hmac", "difflib"}


def test_validate_of_a_valid_file_leaves_out_what_only_problems_need() -> None:
    assert sorted(_imported("validate", "examples/quickstart.yaml") & NOT_FOR_A_VALID_FILE) == []


def test_version_and_problems_still_load_what_they_need(tmp_path: Path) -> None:
    from importlib.metadata import version

    result = subprocess.run(
        [sys.executable, "-m", "reconciler", "--version"],
        env=user_environment(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout == f"reconciler, version {version('reconciler')}\n"
    (tmp_path / "bad.yaml").write_text("version: 1\nworkers:\n  - {externalId: X-1, colour: red}\n")
    located = subprocess.run(
        [sys.executable, "-m", "reconciler", "validate", str(tmp_path / "bad.yaml")],
        env=user_environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert located.returncode == 1
    assert "bad.yaml:3:" in located.stdout and "unknown key 'colour'" in located.stdout


def test_a_plan_with_nothing_to_log_does_not_load_structlog(tmp_path: Path) -> None:
    shutil.copy(ROOT / "examples" / "quickstart.yaml", tmp_path)
    imported = _imported("plan", "--sandbox", "quickstart.yaml", cwd=tmp_path)
    assert "reconciler.service.client" in imported  # it did read the account
    assert sorted(name for name in imported if name.split(".")[0] == "structlog") == []


def test_what_comes_before_the_first_request_leaves_out_metadata_and_countries() -> None:
    """The modules a plan imports before it sends its first request (the command's, the
    client's) leave out `importlib.metadata` (the User-Agent's version is a constant) and
    pycountry (loaded with the first page's first worker, while the next pages are awaited):
    about 60 ms of start-up."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import reconciler.cli.plan"],
        env=user_environment(),
        capture_output=True,
        text=True,
        check=True,
    )
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()}
    assert "reconciler.service.client" in imported and "httpx" in imported
    assert sorted(imported & {"importlib.metadata", "pycountry"}) == []


def test_a_command_that_reads_the_account_leaves_out_httpx_s_command_line(sandbox) -> None:
    """httpx imports its own command line (rich's syntax, pygments) unless it is kept out
    (`reconciler.lean_httpx`): about 30 ms before the first request."""
    environ = {"RECONCILER_BASE_URL": sandbox.base_url, "RECONCILER_TOKEN": sandbox.token}
    imported = _imported("workers", environ=environ)
    assert "httpx" in imported and "reconciler.service.client" in imported
    # httpx._main itself is listed: its import was tried, and refused.
    assert sorted(name for name in imported if name.startswith(("pygments", "rich.syntax"))) == []


def test_a_command_that_reads_the_account_leaves_out_trio(sandbox) -> None:
    """httpcore imports trio whenever it is installed (as here), for an asynchronous client
    the command line never runs (`reconciler.cli.run`): about 40 ms before the first request."""
    pytest.importorskip("trio")
    environ = {"RECONCILER_BASE_URL": sandbox.base_url, "RECONCILER_TOKEN": sandbox.token}
    imported = _imported("workers", environ=environ)
    assert "httpcore" in imported and "reconciler.service.client" in imported
    # trio itself is listed: its import was tried, and refused.
    assert sorted(name for name in imported if name.startswith("trio.")) == []


def test_help_lists_every_command_without_loading_any() -> None:
    imported = _imported("--help")
    assert sorted(name for name in imported if name.startswith("reconciler.cli.")) == [
        "reconciler.cli.logging_options",
    ]
    assert "reconciler.ending" in imported  # how the process ends: the standard library only


@pytest.mark.parametrize("name", sorted(_COMMANDS))
def test_the_listed_line_is_the_commands_own(name: str) -> None:
    command = main.get_command(click.Context(main), name)
    assert command is not None and command.help is not None
    first_paragraph = " ".join(command.help.split("\n\n")[0].split())
    assert _COMMANDS[name][2] == first_paragraph
