"""`reconciler validate PATH`: check the desired-state file(s) only, with no network."""

from __future__ import annotations

import os
from pathlib import Path

import click

from reconciler.accounts.confine import path_environment
from reconciler.accounts.options import AccountOptions
from reconciler.accounts.validate import validate_accounts
from reconciler.cli.accounts import refuse_path, selection_options
from reconciler.desired import InvalidDesiredState, load_desired_state
from reconciler.desired.report import LISTED, expired_rules, render_problems
from reconciler.errors import ReconcilerError
from reconciler.words import plural

#: pre-commit sets this in the environment of every hook it runs.
_PRE_COMMIT = "PRE_COMMIT"


@click.command()
@click.argument("path", type=click.Path(path_type=Path), required=False)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="text: file:line:col lines; json: a list of objects; github: workflow annotations.",
)
@click.option(
    "--no-env",
    is_flag=True,
    help="Check ${VAR} references by name only, without their values (for a pre-commit hook "
    "on a machine without the secrets); plan and apply always read them.",
)
@selection_options
def validate(path: Path | None, output_format: str, no_env: bool, accounts: AccountOptions) -> None:
    """Check the desired-state file, or directory of files, at PATH: exit 0 valid, 1 invalid."""
    if accounts.active:
        refuse_path(path, accounts)
        validate_accounts(accounts, output_format, no_env)
        return
    if path is None:
        message, hint = _missing_path()
        raise ReconcilerError(message, hint=hint)
    try:
        state = load_desired_state(
            path, path_environment(path, os.environ), read_variables=not no_env
        )
    except InvalidDesiredState as error:
        click.echo(render_problems(error, output_format))
        if output_format != "text" and error.total > len(error.problems[: LISTED[output_format]]):
            click.echo(error.count_line(LISTED[output_format]), err=True)
        raise click.exceptions.Exit(1) from None
    if expired := expired_rules(state, output_format):
        click.echo(expired, err=output_format != "github")
    if output_format == "json":
        click.echo("[]")
    elif output_format == "text":
        count = len(state.workers)
        webhook = "a webhook" if state.webhook is not None else "no webhook"
        click.echo(f"{path}: valid ({plural(count, 'worker')}, {webhook})")


def _missing_path() -> tuple[str, str]:
    """What to say when no PATH is given: in a pre-commit hook, the lines to add."""
    if os.environ.get(_PRE_COMMIT):
        return (
            "the reconciler-validate hook needs the path of your desired state",
            "add it to the hook in .pre-commit-config.yaml, for instance\n"
            "        - id: reconciler-validate\n"
            "          args: [workforce/]      # your file or directory\n"
            "          files: ^workforce/",
        )
    return (
        "no PATH given: name the desired-state file or directory to check",
        "reconciler validate workforce.yaml   (or a directory of *.yaml files)",
    )
