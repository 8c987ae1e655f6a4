"""The README's quickstart stays true: CI runs exactly its test command."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _quickstart_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = readme.split("## Quickstart", 1)[1]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", quickstart, re.S)[:2]]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    _, test_command = _quickstart_commands()
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [
        line for line in script.splitlines() if line.strip() and not line.startswith(("#", "set "))
    ]
    assert commands[-1] == test_command


def test_the_first_command_plans_a_file_that_exists() -> None:
    first, _ = _quickstart_commands()
    assert "reconciler plan --sandbox" in first
    path = first.rsplit(" ", 1)[1]
    assert (ROOT / path).is_file()


def test_the_look_commands_run_as_written_against_the_sandbox(tmp_path: Path) -> None:
    """Every `--sandbox` line of "Looking at the account" (docs/look.md), exactly as written."""
    import shlex

    from tests.cli import reconciler
    from tests.docs.support import section

    text = section(ROOT / "docs" / "look.md", "# Looking at the account")
    (block,) = re.findall(r"```bash\n(.*?)```", text, re.S)
    lines = [line for line in block.splitlines() if "--sandbox" in line]
    assert len(lines) >= 4
    for line in lines:
        command, _, comment = line.partition("#")
        words = shlex.split(command)
        assert words[0] == "reconciler"
        result = reconciler(*words[1:], cwd=tmp_path)
        expected = 1 if "exit 1" in comment else 0
        assert result.returncode == expected, (line, result.stdout, result.stderr)


def test_the_local_ci_try_runs_as_written(tmp_path: Path) -> None:
    """The CI recipes' "try it on your machine" block (docs/ci.md), run by bash as written."""
    import os
    import shutil
    import subprocess
    import sys

    from tests.cli import user_environment

    recipes = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    section = recipes.split("Try what the pull-request and merge jobs do", 1)[1]
    block = re.findall(r"```bash\n(.*?)```", section, re.S)[0]
    assert "plan-compare" in block and "reconciler apply" in block
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "reconciler").write_text(f'#!/bin/sh\nexec {sys.executable} -m reconciler "$@"\n')
    (bin_dir / "reconciler").chmod(0o755)
    env = user_environment(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, (result.stdout[-3000:], result.stderr[-3000:])
    assert "Apply complete" in result.stdout + result.stderr


def test_the_readme_says_where_the_docs_tools_come_from() -> None:
    """The paragraph that runs `mkdocs` says which install brings it, and that install does."""
    import tomllib

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (paragraph,) = [p for p in readme.split("\n\n") if "mkdocs serve" in p]
    assert 'pip install -e ".[test]"' in paragraph
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(re.match(r"mkdocs\b", requirement) for requirement in extra["test"])
