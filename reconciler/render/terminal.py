"""How text written to a stream looks: colour and wrapping only on a terminal."""

from __future__ import annotations

import os
import shutil
from typing import TextIO


def text_look(stream: TextIO) -> tuple[bool, int | None]:
    """(colour, width) for the text plan written to `stream`: on a terminal, its width and
    colour unless NO_COLOR is set; elsewhere (a file, a pipe, CI) neither."""
    if not stream.isatty():
        return False, None
    return "NO_COLOR" not in os.environ, shutil.get_terminal_size().columns
