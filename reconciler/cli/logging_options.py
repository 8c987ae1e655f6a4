"""`--log-level` and `--log-format`, accepted before the command and after it alike.

The group reads them before the command (`reconciler --log-level debug plan ...`); every command
also takes them after its name (`reconciler plan ... --log-level debug`), which is where people
add an option to a command they are copying. The later one wins.
"""

from __future__ import annotations

from typing import Any

import click

from reconciler import logconfig

LOG_FORMATS = ("auto", "console", "json")
LOG_LEVELS = ("debug", "info", "warning", "error")
_SETTINGS = "reconciler.log_settings"


def _reconfigure(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    if value is None or param.name is None:
        return
    root = ctx.find_root()
    settings: dict[str, str] = root.meta.setdefault(
        _SETTINGS,
        {
            "log_format": root.params.get("log_format", "auto"),
            "log_level": root.params.get("log_level", "warning"),
        },
    )
    settings[param.name] = value
    logconfig.request(settings["log_format"], settings["log_level"])


def _options() -> list[click.Option]:
    return [
        click.Option(
            ["--log-level"],
            type=click.Choice(LOG_LEVELS, case_sensitive=False),
            default=None,
            expose_value=False,
            callback=_reconfigure,
            help="Log detail on stderr (also accepted before the command).",
        ),
        click.Option(
            ["--log-format"],
            type=click.Choice(LOG_FORMATS),
            default=None,
            expose_value=False,
            callback=_reconfigure,
            help="Log lines: console or JSON (also accepted before the command).",
        ),
    ]


def add_logging_options(command: click.Command) -> None:
    """Give `command`, or every command under a group, the two logging options."""
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            add_logging_options(sub)
        return
    names = {name for param in command.params for name in getattr(param, "opts", ())}
    command.params += [option for option in _options() if option.opts[0] not in names]
