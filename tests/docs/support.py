"""The documentation as the tests read it: README.md and every page under docs/."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: A fenced block of shell commands: its language and its text.
_SHELL_BLOCK = re.compile(r"^```(bash|sh)\n(.*?)^```$", re.S | re.M)


def documents() -> list[Path]:
    """README.md, then every Markdown page of the site."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def shell_blocks(path: Path) -> list[str]:
    """The text of every ```bash and ```sh block of one document."""
    return [match[2] for match in _SHELL_BLOCK.finditer(path.read_text(encoding="utf-8"))]


def section(path: Path, heading: str) -> str:
    """The text under `heading` (a whole line), up to the next heading of any level."""
    text = path.read_text(encoding="utf-8")
    assert f"\n{heading}\n" in f"\n{text}", f"{path.name} has no heading {heading!r}"
    return text.split(f"{heading}\n", 1)[1].split("\n#", 1)[0]
