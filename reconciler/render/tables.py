"""Tables for people that fit the terminal, as `kubectl get` and `gh` print them.

A value is never broken inside a word or an email: when a table is wider than the terminal,
its free-text columns (a description, a cause) wrap between words first, each keeping at
least `WRAPPED_MIN` columns, then its least important columns are left out (the caption names
them) and, when the most important ones still do not fit, their values are cut with an
ellipsis. Amounts are right-aligned. `--wide` shows every
column and every value whole, letting the terminal wrap the lines; output that goes to no
terminal (a pipe, a file) is written whole too.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text

#: The fewest columns a wrapping (free-text) column is given before columns are left out.
WRAPPED_MIN = 16

#: What rich's default box adds to a table: a border and a space either side of each column.
_PER_COLUMN = 3
_EDGE = 1


@dataclass(frozen=True)
class Fit:
    """The columns a table keeps (in display order) and those it leaves out."""

    kept: tuple[int, ...]
    hidden: tuple[str, ...]


def natural_width(widths: Sequence[int]) -> int:
    """The width of a table whose columns are `widths` wide, borders included."""
    return sum(widths) + _PER_COLUMN * len(widths) + _EDGE


def fit_columns(
    headers: Sequence[str],
    widths: Sequence[int],
    width: int | None,
    priority: Sequence[str] = (),
) -> Fit:
    """The columns (`widths` wide) that fit `width` (None: all), the least important left out.

    `priority` names the columns from the most important; the ones it does not name come
    after them, in display order. At least the most important column is always kept.
    """
    order = [headers.index(name) for name in priority if name in headers]
    order += [i for i in range(len(headers)) if i not in order]
    kept = list(order)
    while width is not None and len(kept) > 1 and natural_width([widths[i] for i in kept]) > width:
        kept.pop()
    hidden = tuple(headers[i] for i in order if i not in kept)
    return Fit(tuple(sorted(kept)), hidden)


def column_widths(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[int]:
    """Each column's width with every value whole."""
    return [
        max([cell_len(header), *(_longest_line(row[i]) for row in rows)])
        for i, header in enumerate(headers)
    ]


def _longest_line(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)


def terminal_console(*, wide: bool, needed: int) -> tuple[Console, int | None]:
    """A console for a table, and the width the table must fit (None: any width).

    On a terminal without `--wide` the table fits the terminal's width; otherwise the console
    is made as wide as the table, so rich never folds a value.
    """
    console = Console()
    if console.is_terminal and not wide:
        return console, console.width
    return Console(width=max(needed, console.width if console.is_terminal else 80)), None


def print_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    title: str,
    wide: bool,
    priority: Sequence[str] = (),
    wrapping: Collection[str] = (),
    right: Collection[str] = (),
) -> None:
    """Print `rows` under `headers` as a table that fits (see the module's docstring): the
    columns named in `wrapping` wrap between words, those in `right` are right-aligned."""
    widths = column_widths(headers, rows)
    console, width = terminal_console(wide=wide, needed=natural_width(widths))
    least = [
        min(w, WRAPPED_MIN) if width is not None and header in wrapping else w
        for header, w in zip(headers, widths, strict=True)
    ]
    fit = fit_columns(headers, least, width, priority)
    table = Table(title=title, title_justify="left")
    for i in fit.kept:
        justify: JustifyMethod = "right" if headers[i] in right else "left"
        if headers[i] in wrapping:
            table.add_column(headers[i], justify=justify, min_width=least[i], overflow="fold")
        else:  # never folded: a value that cannot fit is cut with an ellipsis, never broken
            table.add_column(headers[i], justify=justify, no_wrap=True, overflow="ellipsis")
    for row in rows:
        table.add_row(*(row[i] for i in fit.kept))
    if fit.hidden:
        table.caption = f"Hidden to fit the terminal (--wide shows all): {', '.join(fit.hidden)}"
        table.caption_justify = "left"
    console.print(table)


def print_fields(fields: Sequence[tuple[str, str]], *, title: str, wide: bool) -> None:
    """One record as a table of field and value; stacked on a terminal too narrow for it.

    Stacked, each field's name is on a line of its own and its value on the next, indented,
    so a value as long as the terminal is wide is still shown whole.
    """
    needed = natural_width(column_widths(("field", "value"), [list(pair) for pair in fields]))
    console, width = terminal_console(wide=wide, needed=needed)
    if width is None or needed <= width:
        table = Table(title=title, title_justify="left", show_header=False)
        table.add_column("field", style="bold", no_wrap=True)
        table.add_column("value", no_wrap=True, overflow="ellipsis")
        for name, value in fields:
            table.add_row(name, value)
        console.print(table)
        return
    console.print(Text(title, style="italic", overflow="ellipsis", no_wrap=True))
    for name, value in fields:
        console.print(Text(name, style="bold"))
        console.print(Text(f"  {value}", overflow="ellipsis", no_wrap=True), crop=True)
