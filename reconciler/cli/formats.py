"""`--format` and `--wide`, the look commands' options; what they choose is printed by
`reconciler.render.rows`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from reconciler.render.rows import FORMATS, WIDE

F = TypeVar("F", bound=Callable[..., Any])


def format_option(command: F) -> F:
    """`--format` and `--wide` (every column of a table, whatever the terminal's width)."""
    command = click.option(
        "--wide",
        is_flag=True,
        expose_value=False,
        callback=_remember_wide,
        help="A table shows every column and every value whole, wider than the terminal if it "
        "must be.",
    )(command)
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(FORMATS),
        default=None,
        help="table (the default on a terminal), json (the default otherwise) or csv.",
    )(command)


def _remember_wide(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    ctx.meta[WIDE] = value
    return value
