"""How text written to a stream looks: colour on a terminal, and the width lines fit.

The width is `COLUMNS` when it is set to a positive number, terminal or not (a shell exports
it, and a CI job may set it to read its log at that width); else a terminal's own; else none:
with no terminal and no `COLUMNS` (a file, a pipe, a CI log), each item stays one line.
"""

from __future__ import annotations

import os
import shutil
from typing import TextIO


def text_look(stream: TextIO) -> tuple[bool, int | None]:
    """(colour, width) for text written to `stream`: colour on a terminal unless NO_COLOR is
    set; the width as `text_width` says."""
    terminal = stream.isatty()
    return terminal and "NO_COLOR" not in os.environ, text_width(terminal=terminal)


def text_width(*, terminal: bool) -> int | None:
    """`COLUMNS` when set to a positive number; else the terminal's width, or None off one."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return shutil.get_terminal_size().columns if terminal else None
