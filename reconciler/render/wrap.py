"""Lines of the text plan wrapped at word boundaries to the terminal's width.

A terminal folds a line wider than itself wherever the edge falls ("--replac" / "e ID"). The
text plan is wrapped first, between words: a continuation keeps the line's indentation, and
lines that start with a plan symbol (`+`, `-`, `~`, `!`, `#`, `=`) continue under the text after
the symbol. A word wider than the terminal (a long id or URL) is left whole for the terminal to
fold: cutting it would change what a reader copies. A line laid out in columns (a payment:
amount, payee, description) gives the columns its continuations may start under (`hang`,
the first that leaves room wins), so a wrapped description stays in its column, or else under
the payee's; a hang too close to the edge falls back to the symbol's.
"""

from __future__ import annotations

import textwrap

_SYMBOLS = ("-/+", "+", "-", "~", "!", "#", "=")


#: The fewest columns a hanging continuation keeps for its text.
_HANG_ROOM = 20


def wrap(text: str, width: int | None, hang: tuple[int, ...] = ()) -> list[str]:
    """`text` as lines of at most `width` columns where words allow (None: as it is); the
    continuations start at the first column of `hang` that leaves room, if any."""
    if width is None or len(text) <= width:
        return [text]
    body = text.lstrip(" ")
    indent = text[: len(text) - len(body)]
    symbol = next((s for s in _SYMBOLS if body.startswith(s + " ")), None)
    hanging = indent + (" " * (len(symbol) + 1) if symbol else "")
    column = next((c for c in hang if len(hanging) < c <= width - _HANG_ROOM), None)
    if column is not None:
        hanging = " " * column
    lines = textwrap.wrap(
        body,
        width=width,
        initial_indent=indent,
        subsequent_indent=hanging,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return lines or [text]
