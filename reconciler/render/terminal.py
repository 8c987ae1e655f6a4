"""How text written to a stream looks: colour and wrapping only on a terminal.

A terminal folds a line wider than itself wherever the edge falls ("--replac" / "e ID"). The
text plan is wrapped first (`wrap`), between words: a continuation keeps the line's
indentation, and lines that start with a plan symbol (`+`, `-`, `~`, `!`, `#`, `=`) continue
under the text after the symbol. A word wider than the terminal (a long id or URL) is left whole
for the terminal to fold: cutting it would change what a reader copies.
"""

from __future__ import annotations

import os
import shutil
import textwrap
from typing import TextIO

_SYMBOLS = ("-/+", "+", "-", "~", "!", "#", "=")


def text_look(stream: TextIO) -> tuple[bool, int | None]:
    """(colour, width) for the text plan written to `stream`: on a terminal, its width and
    colour unless NO_COLOR is set; elsewhere (a file, a pipe, CI) neither."""
    if not stream.isatty():
        return False, None
    return "NO_COLOR" not in os.environ, shutil.get_terminal_size().columns


def wrap(text: str, width: int | None) -> list[str]:
    """`text` as lines of at most `width` columns where words allow (None: as it is)."""
    if width is None or len(text) <= width:
        return [text]
    body = text.lstrip(" ")
    indent = text[: len(text) - len(body)]
    symbol = next((s for s in _SYMBOLS if body.startswith(s + " ")), None)
    hanging = indent + (" " * (len(symbol) + 1) if symbol else "")
    lines = textwrap.wrap(
        body,
        width=width,
        initial_indent=indent,
        subsequent_indent=hanging,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return lines or [text]
