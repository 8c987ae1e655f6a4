"""The docs pages' shell blocks run as written, against the embedded sandbox or offline.

Each block becomes one bash script, run in a fresh folder holding the examples: its `export`
lines set what the next lines read, and each `reconciler` line must end with the exit status
its comment gives ("exits 2", "exit 1"), else 0. A line is left out only for a reason the test
names: it asks a question (a terminal answers it), serves in the background, names a file or a
value the reader supplies, or talks to GitHub or a real service (no `--sandbox`). A comment line
asking the reader to do something ("fill in ...") ends the block there. README.md's lines are run
by test_snippets.py and test_readme.py."""

from __future__ import annotations

import itertools
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli import user_environment
from tests.docs.support import ROOT, shell_blocks

_STATUS = re.compile(r"\bexits? (\d)\b")
_READER_STEP = re.compile(r"^\s*#\s*(fill in|set |edit |replace )", re.I)


_OUTPUTS = ("--out", "--full", ">")


def _runs_here(words: list[str], comment: str, made: set[str]) -> bool:
    """One line of reconciler commands that needs nothing but the examples and the files the
    lines before it made (`made` grows with what this one writes)."""
    if "asks" in comment or "&" in words:  # a question needs a terminal; a server runs on
        return False
    commands: list[list[str]] = [[]]
    for word in words:
        if word in ("&&", "||", "|", ";"):
            commands.append([])
        else:
            commands[-1].append(word)
    writes: set[str] = set()
    for command in commands:
        if command[:1] != ["reconciler"]:
            return False
        outputs = {b for a, b in itertools.pairwise(command) if a in _OUTPUTS}
        reads = [
            word
            for word in command[2:]
            if word not in outputs
            and not word.startswith("-")
            and ("/" in word or word.endswith((".json", ".yaml", ".yml")))
        ]
        # A file the reader supplies (workforce/, my-seed.yaml) leaves the line out; the examples
        # are the checkout's, so a path into them that is wrong fails the run instead.
        if not all(w in made or w.startswith("examples/") or (ROOT / w).exists() for w in reads):
            return False
        offline = command[1:2] == ["validate"] or command[1:2] == ["plan-compare"]
        if not offline and "--sandbox" not in command:
            return False  # a real service, or GitHub
        writes |= outputs
    made |= writes
    return True


def _script(block: str) -> str | None:
    """The block as a checked bash script, or None when no line of it runs here."""
    lines = ["set -u"]
    made: set[str] = set()
    ran = 0
    for number, line in enumerate(block.replace("\\\n", " ").splitlines(), 1):
        command, _, comment = line.partition("#")
        if _READER_STEP.match(line):
            break
        if not command.strip():
            continue
        words = shlex.split(command)
        if words[0] == "export" and "..." not in command:
            lines.append(command)
        elif words[0] == "reconciler" and _runs_here(words, comment, made):
            said = _STATUS.search(comment)
            expected = int(said[1]) if said else 0
            lines.append(command)
            lines.append(
                f's=$?; [ "$s" -eq {expected} ] || '
                f'{{ echo "line {number} exited $s, not {expected}: {shlex.quote(command)}" >&2; '
                "exit 99; }"
            )
            ran += 1
    return "\n".join(lines) if ran else None


def _blocks() -> list[tuple[str, str]]:
    found = []
    for path in sorted((ROOT / "docs").rglob("*.md")):
        for index, block in enumerate(shell_blocks(path)):
            script = _script(block)
            if script is not None:
                found.append((f"{path.name}[{index}]", script))
    return found


BLOCKS = _blocks()


def test_the_runnable_blocks_are_many() -> None:
    pages = {where.split("[", 1)[0] for where, _ in BLOCKS}
    assert len(BLOCKS) >= 7 and len(pages) >= 6, BLOCKS


@pytest.mark.parametrize(("where", "script"), BLOCKS, ids=[where for where, _ in BLOCKS])
def test_each_block_runs_as_written(where: str, script: str, tmp_path: Path) -> None:
    folder = tmp_path / "work"
    shutil.copytree(ROOT / "examples", folder / "examples")
    bin_dir = tmp_path / "bin"  # `reconciler` as installed: this Python's module
    bin_dir.mkdir()
    shim = bin_dir / "reconciler"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m reconciler "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    env = user_environment()
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    result = subprocess.run(
        ["bash", "-c", script],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert result.returncode == 0, (where, result.stdout[-3000:], result.stderr[-3000:])
    assert "Traceback" not in result.stderr
