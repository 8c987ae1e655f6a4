"""The command line: a thin layer that parses options, calls the core, and prints.

Each command lives in its own module beside this one, imported only when it runs (or when
`--help` lists them): `validate` in a pre-commit hook pays for the desired-state code alone, not
for the apply engine, the HTTP client or the sandbox.
"""

from __future__ import annotations

import importlib
import sys

import click

from reconciler import __version__, logconfig, redaction
from reconciler.cli.logging_options import LOG_FORMATS, LOG_LEVELS, add_logging_options
from reconciler.errors import ReconcilerError

#: Each command's name, and the module and attribute that define it.
_COMMANDS = {
    "sandbox": ("reconciler.cli.sandbox", "sandbox"),
    "validate": ("reconciler.cli.validate", "validate"),
    "schema": ("reconciler.cli.schema", "schema"),
    "workers": ("reconciler.cli.look", "workers"),
    "worker": ("reconciler.cli.look_more", "worker"),
    "wallet": ("reconciler.cli.look", "wallet"),
    "transactions": ("reconciler.cli.look", "transactions"),
    "payments": ("reconciler.cli.look", "payments"),
    "paylists": ("reconciler.cli.look_more", "paylists"),
    "paylist": ("reconciler.cli.look_more", "paylist"),
    "payment": ("reconciler.cli.look_more", "payment"),
    "webhook": ("reconciler.cli.look_more", "webhook"),  # look_more adds `webhook test`
    "plan": ("reconciler.cli.plan", "plan"),
    "drift": ("reconciler.cli.plan", "drift"),
    "apply": ("reconciler.cli.apply", "apply"),
    "export": ("reconciler.cli.export", "export"),
    "comment": ("reconciler.cli.comment", "comment"),
    "github": ("reconciler.cli.gitops", "github"),
    "plan-compare": ("reconciler.cli.gitops", "plan_compare"),
}


class _Group(click.Group):
    """Loads each command when it is used; turns every error into a message and an exit
    status, never a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _COMMANDS:
            module, attribute = _COMMANDS[cmd_name]
            command: click.Command = getattr(importlib.import_module(module), attribute)
            add_logging_options(command)
            self.commands[cmd_name] = command
        return self.commands.get(cmd_name)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except ReconcilerError as error:
            click.echo(f"Error: {error}", err=True)
            ctx.exit(error.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            ctx.exit(130)
        except Exception as error:  # the last line of defence: a message, not a traceback
            from reconciler import logs

            logs.get_logger("reconciler").debug("internal error", exc_info=True)
            message = redaction.scrub(f"{type(error).__name__}: {error}")
            click.echo(
                f"Error: internal error: {message}\n"
                "  hint: run with --log-level debug to see where it happened, and report it.",
                err=True,
            )
            ctx.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="reconciler")
@click.option(
    "--log-format",
    type=click.Choice(LOG_FORMATS),
    default="auto",
    show_default=True,
    envvar="RECONCILER_LOG_FORMAT",
    help="Log lines on stderr: readable on a terminal, JSON lines otherwise.",
)
@click.option(
    "--log-level",
    type=click.Choice(LOG_LEVELS, case_sensitive=False),
    default="warning",
    show_default=True,
    envvar="RECONCILER_LOG_LEVEL",
)
def main(log_format: str, log_level: str) -> None:
    """Keep a workforce account's workers and webhook in a YAML file, and reconcile it."""
    redaction.guard_output()
    logconfig.request(log_format, log_level)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
