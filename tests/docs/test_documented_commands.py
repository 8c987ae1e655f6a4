"""Every documented command runs as written, and prints what the docs say it prints.

The fenced `bash`, `sh` and `console` blocks of README.md and docs/*.md that run `reconciler`
are run, each as one bash script in a fresh folder holding the examples, with `reconciler` on
the PATH as installed. In a `console` block a line `$ COMMAND` is a command and the lines after
it, up to the next `$ `, are what it prints (stdout and stderr, as a terminal shows them): they
are compared with what it printed, white space aside (a line break is a space), a word `...`
standing for any words (a timestamp, a part left out). Each command must end with the exit
status its comment gives (`# exits 2`, `exit 1`), else 0.

Nothing is left out silently. A block that cannot run here (it needs a real service, GitHub, a
terminal or a file of the reader's) says so just before its fence, `<!-- not run: why -->`, and
is reported as skipped with that reason. Inside a block, a comment asking the reader to do
something (`# fill in ...`) ends what is run, and a line holding a `...` for the reader to
supply is a template; every other line runs. So a command of a page that talks to the service
without `--sandbox` (and so cannot run here) must sit in a block marked not run: a walk-through
that starts on the sandbox and goes on without it fails here.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.cli import user_environment
from tests.docs.support import ROOT, documents

_FENCE = re.compile(r"^```(bash|sh|console)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
_NOT_RUN = re.compile(r"^<!--\s*not run:\s*(.+?)\s*-->$")
_STATUS = re.compile(r"\bexits? (\d+)\b")
_READER_STEP = re.compile(r"^\s*#\s*(fill in|set |edit |replace )", re.I)
#: Commands that talk to no service.
_OFFLINE = {"validate", "schema", "plan-compare", "sandbox", "--help", "--version"}


@dataclass
class Step:
    line: int
    command: str
    status: int
    output: list[str] | None = None  # a console block's quoted output


@dataclass
class Block:
    where: str
    language: str
    not_run: str | None
    steps: list[Step] = field(default_factory=list)  # what runs
    unrun: list[tuple[int, str]] = field(default_factory=list)  # after a reader step


def _split_comment(line: str) -> tuple[str, str]:
    command, _, comment = line.partition(" #")
    return command.rstrip(), comment


def _parts(command: str) -> list[list[str]]:
    """The simple commands of a command line, as words (`a && b | c` is three)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    parts: list[list[str]] = [[]]
    for word in lexer:
        if word in ("&&", "||", "|", ";", "&"):
            parts.append([])
        else:
            parts[-1].append(word)
    return parts


def _reconciler_words(part: list[str]) -> list[str] | None:
    """A simple command's arguments when it runs `reconciler` (after `VAR=value`s), else None."""
    while part and re.fullmatch(r"[A-Z_]+=.*", part[0]):
        part = part[1:]
    return part[1:] if part[:1] == ["reconciler"] else None


def _is_reconciler(command: str) -> bool:
    """Whether a command line runs `reconciler` (alone, or in a list such as `a && reconciler`)."""
    return any(_reconciler_words(part) is not None for part in _parts(command))


def _step(line: int, text: str) -> Step:
    command, comment = _split_comment(text)
    said = _STATUS.search(comment)
    return Step(line, command, int(said[1]) if said and _is_reconciler(command) else 0)


def _parse(where: str, language: str, body: str, not_run: str | None, first: int) -> Block:
    block = Block(where, language, not_run)
    stopped = False
    lines = body.replace("\\\n", " ").splitlines()
    for offset, text in enumerate(lines):
        number = first + offset
        if language == "console":
            if text.startswith("$ "):
                block.steps.append(_step(number, text[2:]))
                block.steps[-1].output = []
            elif block.steps and block.steps[-1].output is not None:
                block.steps[-1].output.append(text)
            continue
        if _READER_STEP.match(text):
            stopped = True
        command, _ = _split_comment(text)
        if not command.strip() or command.lstrip().startswith("#"):
            continue
        if stopped or "..." in command.replace("=...", "= ...").split():
            block.unrun.append((number, command))  # after a reader's step, or a template
        else:
            block.steps.append(_step(number, text))
    return block


def _blocks() -> list[Block]:
    found = []
    for path in documents():
        text = path.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            if not any(
                _is_reconciler(_split_comment(line.removeprefix("$ "))[0])
                for line in match[2].replace("\\\n", " ").splitlines()  # one line each
                if line.strip()
                and not line.lstrip().startswith("#")
                and (match[1] != "console" or line.startswith("$ "))
            ):
                continue
            before = text[: match.start()].rstrip().splitlines()
            marker = _NOT_RUN.match(before[-1].strip()) if before else None
            line = text.count("\n", 0, match.start()) + 2
            where = f"{path.relative_to(ROOT)}:{line - 1}"
            found.append(_parse(where, match[1], match[2], marker[1] if marker else None, line))
    return found


BLOCKS = _blocks()


def test_the_documented_commands_are_many() -> None:
    pages = {block.where.split(":", 1)[0] for block in BLOCKS if block.not_run is None}
    commands = sum(len(block.steps) for block in BLOCKS if block.not_run is None)
    assert len(pages) >= 8 and commands >= 25, (pages, commands)
    assert any(b.language == "console" and b.not_run is None for b in BLOCKS)


def _talks_to_the_service(command: str) -> bool:
    for part in _parts(command):
        words = _reconciler_words(part)
        if words is None:
            continue
        offline = not words or words[0] in _OFFLINE or "--help" in words
        if not offline and "--sandbox" not in words and "..." not in " ".join(part):
            return True
    return False


def test_every_command_that_talks_to_a_service_runs_on_the_sandbox_or_is_marked() -> None:
    """A block not marked `<!-- not run: ... -->` runs on the sandbox from end to end, the
    lines after a reader's step included (those are not run: the reader edits a file first)."""
    wrong = [
        f"{block.where} line {line}: {command}"
        for block in BLOCKS
        if block.not_run is None
        for line, command in [*((s.line, s.command) for s in block.steps), *block.unrun]
        if _talks_to_the_service(command)
    ]
    assert not wrong, "needs a service; add --sandbox, or mark the block not run:\n" + "\n".join(
        wrong
    )


def _words(text: str) -> list[str]:
    return text.split()


def _matches(expected: list[str], actual: str) -> bool:
    """The quoted output, white space aside, `...` standing for any words (none included)."""
    pattern = "".join(
        r"(?:\S+\n)*?" if word == "..." else re.escape(word) + r"\n" for word in expected
    )
    return re.fullmatch(pattern, "".join(f"{word}\n" for word in _words(actual))) is not None


def _script(block: Block) -> str:
    lines = ["set -u", "mkdir -p .said"]
    for index, step in enumerate(block.steps):
        lines.append(f"{{ {step.command}\n}} > .said/{index}.out 2>&1")
        lines.append(f"echo $? > .said/{index}.status")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("block", BLOCKS, ids=[b.where for b in BLOCKS])
def test_each_block_runs_and_prints_what_it_says(block: Block, tmp_path: Path) -> None:
    if block.not_run is not None:
        pytest.skip(f"{block.where}: marked not run: {block.not_run}")
    folder = tmp_path / "work"
    shutil.copytree(ROOT / "examples", folder / "examples")
    bin_dir = tmp_path / "bin"  # `reconciler` as installed: this Python's module
    bin_dir.mkdir()
    shim = bin_dir / "reconciler"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m reconciler "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    env = user_environment(PYTHONUNBUFFERED="1", COLUMNS="120")
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    result = subprocess.run(
        ["bash", "-c", _script(block)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert result.returncode == 0, (result.stdout, result.stderr)
    wrong = []
    for index, step in enumerate(block.steps):
        output = (folder / ".said" / f"{index}.out").read_text(encoding="utf-8")
        status = int((folder / ".said" / f"{index}.status").read_text())
        here = f"{block.where.split(':')[0]}:{step.line}: {step.command}"
        if "Traceback" in output:
            wrong.append(f"{here}\n  printed a traceback:\n{output}")
        elif status != step.status:
            wrong.append(f"{here}\n  exited {status}, not {step.status}:\n{output[-3000:]}")
        elif step.output and not _matches(_words(quoted := "\n".join(step.output)), output):
            wrong.append(f"{here}\n  the docs say it prints:\n{quoted}\n  it printed:\n{output}")
    assert not wrong, "\n\n".join(wrong)


def test_the_comparison_takes_white_space_but_not_words() -> None:
    printed = "Plan: 1 to invite,\n  1 to inactivate.\nApplying at 2026-11-26T19:08:59 (x)\n"
    assert _matches(_words("Plan: 1 to invite, 1 to inactivate. ..."), printed)
    assert _matches(_words("Plan: 1 to invite,\n1   to inactivate.\nApplying at ... (x)"), printed)
    assert not _matches(_words("Plan: 1 to invite, 2 to inactivate. ..."), printed)
    assert not _matches(_words("Plan: 1 to invite, 1 to inactivate."), printed)
    assert not _matches(_words("... 1 to inactivate. Applying (x)"), printed)


def test_a_file_the_docs_cite_is_in_the_repository() -> None:
    """A `name.md` a page cites is a page of docs/ or a file of the repository, unless it is
    one a documented command writes (`> comment.md`, `--full plan.md`)."""
    texts = {path: path.read_text(encoding="utf-8") for path in documents()}
    written = {
        name
        for text in texts.values()
        for name in re.findall(r"(?:>|--full|--out)\s+(\S+\.md)\b", text)
    }
    known = {p.name for p in (ROOT / "docs").glob("*.md")} | {p.name for p in ROOT.glob("*.md")}
    missing = [
        f"{path.relative_to(ROOT)}: {name}"
        for path, text in texts.items()
        for name in re.findall(r"[`(\[/]([\w.-]+\.md)\b", text)
        if name not in known and name not in written
    ]
    assert not missing, missing


def test_the_ledger_actions_apply_lists_are_the_ledger_s() -> None:
    from reconciler.apply import ledger, paying

    text = (ROOT / "docs" / "apply.md").read_text(encoding="utf-8")
    sentence = re.search(r"`action` is (.+?);", text, re.S)
    assert sentence, "docs/apply.md no longer says which actions the ledger has"
    listed = set(re.findall(r"`(\w+)`", sentence[1]))
    assert listed == {*ledger._ACTIONS.values(), paying.PAY}, listed
