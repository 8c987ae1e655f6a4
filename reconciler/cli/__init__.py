"""The command line: a thin layer that parses options, calls the core, and prints.

Each command lives in its own module beside this one, imported only when it runs (or when
`--help` lists them): `validate` in a pre-commit hook pays for the desired-state code alone, not
for the apply engine, the HTTP client or the sandbox.
"""

from __future__ import annotations

import importlib
import sys
from typing import NoReturn

import click

from reconciler import ending, logconfig, redaction
from reconciler._version import ISSUE_TRACKER
from reconciler.cli.logging_options import LOG_FORMATS, LOG_LEVELS, add_logging_options
from reconciler.errors import ReconcilerError

#: Each command's name, the module and attribute that define it, and the first line of its
#: help, so that `reconciler --help` lists every command without loading any (the lines are
#: kept equal to the commands' own by tests/foundation/test_startup.py).
_COMMANDS = {
    "sandbox": (
        "reconciler.cli.sandbox",
        "sandbox",
        "The local sandbox of the workforce service (for demos and tests).",
    ),
    "accounts": (
        "reconciler.cli.accounts",
        "accounts",
        "List the accounts of the accounts file (reconciler.yaml), or those changed since REF.",
    ),
    "validate": (
        "reconciler.cli.validate",
        "validate",
        "Check the desired-state file, or directory of files, at PATH: exit 0 valid, 1 invalid.",
    ),
    "schema": (
        "reconciler.cli.schema",
        "schema",
        "Print the JSON Schema of the desired-state file, or write it with --out.",
    ),
    "workers": (
        "reconciler.cli.look",
        "workers",
        "List the account's workers (one row per agreement).",
    ),
    "worker": (
        "reconciler.cli.look_more",
        "worker",
        "Show the agreement of one worker, by email (the open one, else the latest).",
    ),
    "wallet": (
        "reconciler.cli.look",
        "wallet",
        "Show the wallet and its balance.",
    ),
    "transactions": (
        "reconciler.cli.look",
        "transactions",
        "List the wallet's journal entries, oldest first.",
    ),
    "payments": (
        "reconciler.cli.look",
        "payments",
        "List the account's payments in a date range (the service's defaults: all, until now).",
    ),
    "paylists": (
        "reconciler.cli.look_more",
        "paylists",
        "List the paylists: id, stage (PROCESSING or COMPLETED), description and total.",
    ),
    "paylist": (
        "reconciler.cli.look_more",
        "paylist",
        "Show one paylist: its header, then its payments.",
    ),
    "payment": (
        "reconciler.cli.look_more",
        "payment",
        "Show one payment.",
    ),
    "webhook": (
        "reconciler.cli.look_more",
        "webhook",
        "The account's webhook configuration.",
    ),
    "report": (
        "reconciler.cli.report",
        "report",
        "The payroll register: per month and paylist, requested, paid, failed and pending.",
    ),
    "plan": (
        "reconciler.cli.plan",
        "plan",
        "Compare the file(s) at PATH with the live account and print what apply would do.",
    ),
    "drift": (
        "reconciler.cli.plan",
        "drift",
        "A read-only plan for scheduled jobs: exit 2 on changes or drift, 0 when in sync.",
    ),
    "apply": (
        "reconciler.cli.apply",
        "apply",
        "Apply the desired state at PATH (after a plan and a question) or a saved PLAN.",
    ),
    "export": (
        "reconciler.cli.export",
        "export",
        "Write a desired-state file from the live account, so its first plan is empty.",
    ),
    "adopt": (
        "reconciler.cli.adopt",
        "adopt",
        "Write into the file(s) at PATH what people changed in the live account.",
    ),
    "comment": (
        "reconciler.cli.comment",
        "comment",
        "Print the plan comment's body for the desired state at PATH, or for a saved PLAN.",
    ),
    "github": (
        "reconciler.cli.github_runs",
        "github",
        "Post the plan comment, keep the drift issue, find the reviewed plan "
        "(needs $GITHUB_TOKEN).",
    ),
    "gitlab": (
        "reconciler.cli.gitlab_runs",
        "gitlab",
        "The GitLab pipeline's jobs: plan, note, apply, outcome, adoption (needs $GITLAB_TOKEN).",
    ),
    "plan-compare": (
        "reconciler.cli.plan_compare",
        "plan_compare",
        "Exit 0 when the saved plan NEW changes exactly what REVIEWED did, 2 when it does not.",
    ),
}


#: A command line the reconciler cannot run is an error, exit 1 as Terraform's: click's usual 2
#: means "changes" (or "drift", or "placeholders to fill") to plan, drift, export and
#: plan-compare, and a scheduled drift job would open an issue for a mistyped option.
USAGE_EXIT = 1


class _Group(click.Group):
    """Loads each command when it is used; turns every error into a message and an exit
    status, never a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, _COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _COMMANDS:
            module, attribute, _ = _COMMANDS[cmd_name]
            command: click.Command = getattr(importlib.import_module(module), attribute)
            add_logging_options(command)
            self.commands[cmd_name] = command
        return self.commands.get(cmd_name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as error:
            error.show()
            ctx.exit(USAGE_EXIT)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except click.UsageError as error:
            error.show()
            ctx.exit(USAGE_EXIT)
        except ReconcilerError as error:
            click.echo(f"Error: {error}", err=True)
            ctx.exit(error.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            ctx.exit(130)
        except BrokenPipeError:  # the reader of the output left (`| head`): nothing to say
            ending.discard_output()
            ctx.exit(1)
        except Exception as error:  # the last line of defence: a message, not a traceback
            from reconciler import logs

            logs.get_logger("reconciler").debug("internal error", exc_info=True)
            message = redaction.shown(f"{type(error).__name__}: {error}", 1000)
            click.echo(
                f"Error: internal error: {message}\n"
                "  hint: run with --log-level debug to see where it happened, and report it "
                f"with that output on {ISSUE_TRACKER}.",
                err=True,
            )
            ctx.exit(1)


def _show_version(ctx: click.Context, value: bool) -> None:
    """`--version`, as click's own option prints it; the version is read only here."""
    if not value or ctx.resilient_parsing:
        return
    from reconciler import __version__

    click.echo(f"reconciler, version {__version__}")
    ctx.exit()


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, _param, value: _show_version(ctx, value),
    help="Show the version and exit.",
)
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
    help="Log detail on stderr.",
)
def main(log_format: str, log_level: str) -> None:
    """Keep a workforce account's workers and webhook in a YAML file, and reconcile it."""
    redaction.guard_output()
    logconfig.request(log_format, log_level)


def run() -> NoReturn:
    """The console entry (`reconciler`, `python -m reconciler`): `main`, then the process ends
    as soon as its output is flushed (`ending`)."""
    ending.arm()
    # httpcore imports trio whenever it is installed, for an asynchronous client under trio,
    # which the command line never runs (its sandbox serves under asyncio): about 40 ms before
    # the first request. Kept out of the command line's own process (a None blocks an import).
    sys.modules.setdefault("trio", None)  # type: ignore[arg-type]
    try:
        main()
        code: object = 0
    except SystemExit as stop:
        code = stop.code
    ending.end(code)


if __name__ == "__main__":  # pragma: no cover
    run()
