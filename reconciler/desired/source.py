"""Reading the desired-state path: one file, or every `*.yaml`/`*.yml` of a directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reconciler.desired.model import Location
from reconciler.desired.problems import Problem

_SUFFIXES = (".yaml", ".yml")
_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class SourceText:
    """The text of one file, under the name its problems are reported with."""

    name: str
    text: str


def read_sources(path: str | Path) -> tuple[list[SourceText], list[Problem]]:
    """The files a path names, decoded, and the problems met reading them."""
    path = Path(path)
    if path.is_dir():
        files = sorted(
            entry for entry in path.iterdir() if entry.suffix in _SUFFIXES and entry.is_file()
        )
        if not files:
            message = "the directory holds no *.yaml or *.yml file"
            return [], [Problem(Location(str(path), 1, 1), message)]
    elif path.exists():
        files = [path]
    else:
        return [], [Problem(Location(str(path), 1, 1), "no such file or directory")]
    sources: list[SourceText] = []
    problems: list[Problem] = []
    for file in files:
        try:
            raw = file.read_bytes()
        except OSError as error:
            problems.append(Problem(Location(str(file), 1, 1), f"cannot read: {error.strerror}"))
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            problems.append(_encoding_problem(str(file), raw, error.start))
            continue
        sources.append(SourceText(str(file), text.removeprefix(_BOM)))
    return sources, problems


def _encoding_problem(name: str, raw: bytes, offset: int) -> Problem:
    line_start = raw.rfind(b"\n", 0, offset) + 1
    line = raw.count(b"\n", 0, offset) + 1
    column = len(raw[line_start:offset].decode("utf-8", errors="replace")) + 1
    message = f"the file is not UTF-8 text: byte 0x{raw[offset]:02x} cannot be decoded"
    return Problem(Location(name, line, column), message)
