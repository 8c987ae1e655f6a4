"""Lines of the text plan wrapped at word boundaries to the terminal's width.

A terminal folds a line wider than itself wherever the edge falls ("--replac" / "e ID"). The
text plan is wrapped first, between words: a continuation keeps the line's indentation, and
lines that start with a plan symbol (`+`, `-`, `~`, `!`, `#`, `=`) continue under the text after
the symbol. A word wider than the terminal (a long id or URL) is left whole for the terminal to
fold: cutting it would change what a reader copies.
"""

from __future__ import annotations

import textwrap

_SYMBOLS = ("-/+", "+", "-", "~", "!", "#", "=")


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
