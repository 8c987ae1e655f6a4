"""The command line: a thin layer that parses options, calls the core, and prints.

Each command lives in its own module beside this one and is registered below.
"""

from __future__ import annotations

import sys

import click

from reconciler import __version__, logs
from reconciler.cli.logging_options import LOG_FORMATS, LOG_LEVELS, add_logging_options
from reconciler.errors import ReconcilerError


class _Group(click.Group):
    """Turns every error into a message and an exit status, never a traceback."""

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
            logs.get_logger("reconciler").debug("internal error", exc_info=True)
            message = logs.scrub(f"{type(error).__name__}: {error}")
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
def main(log_format: logs.LogFormat, log_level: str) -> None:
    """Keep a workforce account's workers and webhook in a YAML file, and reconcile it."""
    logs.guard_output()
    logs.configure(log_format, log_level)


def _register() -> None:
    from reconciler.cli import (
        apply,
        comment,
        export,
        gitops,
        look,
        look_more,
        plan,
        sandbox,
        schema,
        validate,
    )

    main.add_command(sandbox.sandbox)
    main.add_command(validate.validate)
    main.add_command(schema.schema)
    for command in (*look.COMMANDS, *look_more.COMMANDS):
        main.add_command(command)
    main.add_command(plan.plan)
    main.add_command(plan.drift)
    main.add_command(apply.apply)
    main.add_command(export.export)
    main.add_command(comment.comment)
    main.add_command(gitops.github)
    main.add_command(gitops.plan_compare)
    for command in main.commands.values():
        add_logging_options(command)


_register()

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
