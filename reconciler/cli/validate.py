"""`reconciler validate PATH`: check the desired-state file(s) only, with no network."""

from __future__ import annotations

from pathlib import Path

import click

from reconciler.accounts.options import AccountOptions
from reconciler.accounts.validate import validate_fleet
from reconciler.cli.accounts import selection_options


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
    validate_fleet(path, accounts, output_format, no_env)
