"""The command reference as Markdown, from the click commands themselves.

Each option's default is the one `--help` shows (click's own help extras), never the raw
`Option.default`: since click 8.3 an option declared without a default holds the `UNSET`
sentinel there, and one whose help tells its default in words (`--plan-ttl`, "default 1h")
holds None. So the table says nothing where `--help` says nothing.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator

import click

#: The line of a reference page that this module replaces: `<!-- reference MODULE:ATTR PROG -->`.
MARKER = "<!-- reference "


def _escape(text: str) -> str:
    """Text for a table cell: a pipe would end the cell, a line break the row."""
    return " ".join(text.split()).replace("|", "&#124;")


def _help(command: click.Command) -> str:
    text = inspect.cleandoc(command.help or command.short_help or "")
    text = text.split("\f", 1)[0]
    return "\n".join(line for line in text.splitlines() if line.strip() != "\b")


def _value(option: click.Option, ctx: click.Context) -> str:
    if option.is_flag and not option.count:
        return "flag"
    if isinstance(option.type, click.Choice):
        return " &#124; ".join(f"`{choice}`" for choice in option.type.choices)
    return _escape(option.make_metavar(ctx))


def _option_row(option: click.Option, ctx: click.Context) -> str:
    names = ", ".join(f"`{name}`" for name in option.opts)
    if option.secondary_opts:
        names += " / " + ", ".join(f"`{name}`" for name in option.secondary_opts)
    extra = option.get_help_extra(ctx)
    description = _escape(option.help or "")
    value = _value(option, ctx)
    if "range" in extra:
        value += f" (`{_escape(extra['range'])}`)"
    default = f"`{_escape(extra['default'])}`" if "default" in extra else ""
    if "required" in extra:
        default = "required"
    return f"| {names} | {value} | {description} | {default} |"


def _command(command: click.Command, ctx: click.Context, path: str, level: int) -> Iterator[str]:
    yield f"{'#' * level} {path}"
    yield ""
    if help_text := _help(command):
        yield help_text
        yield ""
    yield "```text"
    yield " ".join([f"Usage: {path}", *command.collect_usage_pieces(ctx)])
    yield "```"
    yield ""
    options = [p for p in command.get_params(ctx) if isinstance(p, click.Option) and not p.hidden]
    if options:
        yield "| Option | Value | Description | Default |"
        yield "| --- | --- | --- | --- |"
        yield from (_option_row(option, ctx) for option in options)
        yield ""
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            sub_ctx = click.Context(sub, parent=ctx, info_name=name)
            yield from _command(sub, sub_ctx, f"{path} {name}", min(level + 1, 6))


def reference(target: str, prog: str) -> str:
    """The reference of every command under `target` (`package.module:attribute`)."""
    module, _, attribute = target.partition(":")
    root = getattr(importlib.import_module(module), attribute)
    if not isinstance(root, click.Command):
        raise TypeError(f"{target} is not a click command")
    ctx = click.Context(root, info_name=prog)
    lines = list(_command(root, ctx, prog, 2))
    return "\n".join(lines) + "\n"


def expand(markdown: str) -> str:
    """The page with each marker line replaced by the reference it names."""
    out = []
    for line in markdown.splitlines():
        if line.startswith(MARKER) and line.rstrip().endswith("-->"):
            target, prog = line[len(MARKER) :].removesuffix("-->").split()
            out.append(reference(target, prog))
        else:
            out.append(line)
    return "\n".join(out) + "\n"
