"""The shell snippets of the README and of every docs page: each `reconciler` command in them
names a command and options that exist, and the README's loops run as written."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import click
import pytest

from tests.cli import reconciler
from tests.docs.support import ROOT, documents, section, shell_blocks


def _reconciler_commands(block: str) -> list[list[str]]:
    """Each `reconciler ...` command of a block, as words (comments and `VAR=...` dropped)."""
    found = []
    for line in block.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        parts: list[list[str]] = [[]]
        for word in words:
            if word in ("&&", "||", "|", ";", "&", ">", "<"):
                parts.append([])
            else:
                parts[-1].append(word)
        for part in parts:
            while part and re.fullmatch(r"[A-Z_]+=.*", part[0]):
                part = part[1:]
            if part and part[0] == "reconciler":
                found.append(part[1:])
    return found


def _snippets() -> list[tuple[str, list[str]]]:
    found = []
    for path in documents():
        for block in shell_blocks(path):
            for words in _reconciler_commands(block):
                found.append((f"{path.relative_to(ROOT)}: reconciler {shlex.join(words)}", words))
    return found


SNIPPETS = _snippets()


def test_the_docs_have_snippets_in_many_pages() -> None:
    pages = {where.split(":", 1)[0] for where, _ in SNIPPETS}
    assert len(SNIPPETS) >= 40 and len(pages) >= 8, pages


def _options(command: click.Command) -> set[str]:
    return {option for p in command.params for option in (*p.opts, *p.secondary_opts)}


@pytest.mark.parametrize(("where", "words"), SNIPPETS, ids=[w for w, _ in SNIPPETS])
def test_every_snippet_names_a_command_and_options_that_exist(where: str, words: list[str]) -> None:
    from reconciler.cli import main

    command: click.Command = main
    ctx = click.Context(main, info_name="reconciler")
    options = _options(main) | {"--help", "-h", "--version"}
    for word in words:
        if word.startswith("-"):
            assert word.split("=", 1)[0] in options, f"{where}: no option {word}"
        elif isinstance(command, click.Group):
            sub = command.get_command(ctx, word)
            if sub is None and command is main:
                pytest.fail(f"{where}: no command {word!r}")
            if sub is not None:
                command, ctx = sub, click.Context(sub, parent=ctx, info_name=word)
                options = _options(sub) | {"--help", "-h"}
    assert command is not main, where


def test_the_readme_loops_run_as_written(tmp_path: Path) -> None:
    """The review-and-apply loop and the payroll loop, each line in order, in a fresh folder."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    readme = ROOT / "README.md"
    blocks = shell_blocks(readme)[2:]  # after the Quickstart's install and test commands
    assert len(blocks) >= 2
    loop = section(readme, "## Quickstart")
    assert all(block in loop for block in blocks)
    for block in blocks:
        for words in _reconciler_commands(block):
            result = reconciler(*words, cwd=tmp_path)
            assert result.returncode == 0, (words, result.stdout, result.stderr)
    # The last line of the payroll loop shows the payrun as paid.
    assert "paid" in result.stdout, result.stdout


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")
def test_the_secrets_bundle_snippet_writes_the_values_as_the_files_hold_them(
    tmp_path: Path,
) -> None:
    """docs/accounts-ci.md's `jq` line, as written, on value files an editor saved (with a
    final newline): the bundle holds each value without it (a webhook header value is sent
    as it is, so a newline there would be part of it)."""
    import json
    import subprocess

    page = ROOT / "docs" / "accounts-ci.md"
    (block,) = [b for b in shell_blocks(page) if "jq -n" in b]
    lines = block.replace("\\\n", " ").splitlines()
    (line,) = [line for line in lines if line.lstrip().startswith("jq -n")]
    (tmp_path / "eu-token.txt").write_text("the-token\n")
    (tmp_path / "eu-webhook-token.txt").write_text("the-hook\n")

    subprocess.run(["bash", "-c", line], cwd=tmp_path, check=True)

    written = json.loads((tmp_path / "eu-secrets.json").read_text())
    assert written == {"RECONCILER_TOKEN_EU": "the-token", "WEBHOOK_TOKEN_EU": "the-hook"}
