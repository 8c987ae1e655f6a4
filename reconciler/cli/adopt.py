"""`reconciler adopt`: write into the files what people changed in the service."""

from __future__ import annotations

from pathlib import Path

import click

from reconciler.accounts.adopting import adopt_fleet
from reconciler.accounts.fleet import fleet_of
from reconciler.accounts.options import AccountOptions
from reconciler.cli.accounts import selection_options
from reconciler.cli.connection import ConnectionOptions, connection_options


@click.command("adopt")
@click.argument("path", type=click.Path(path_type=Path), required=False)
@click.option(
    "--only",
    "only",
    multiple=True,
    metavar="ADDRESS",
    help='Adopt only this address (worker["ENG-002"], worker["ENG-002"].jobTitle, webhook, '
    "webhook.url; * and ? match any text); repeatable.",
)
@click.option(
    "--into",
    type=click.Path(path_type=Path),
    help="The file new workers are written to (default: the file that lists the most).",
)
@click.option(
    "--dry-run", is_flag=True, help="Print the diff and write nothing: exit 2 when it is not empty."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["diff", "json"]),
    default="diff",
    show_default=True,
    help="diff for people; json (every file's new text) for `reconciler github adopt-pr`.",
)
@connection_options
@selection_options
def adopt(
    path: Path | None,
    only: tuple[str, ...],
    into: Path | None,
    dry_run: bool,
    fmt: str,
    connection: ConnectionOptions,
    accounts: AccountOptions,
) -> None:
    """Write into the file(s) at PATH what people changed in the live account.

    Reads the account (only reads) and, for each drift it can adopt, writes the live value into
    the files, every other byte left as it was; prints the diff. Exit 0, or 2 with --dry-run when
    there is something to adopt.
    """
    fleet = fleet_of(path, accounts, connection, ConnectionOptions)
    adopt_fleet(fleet, only=only, into=into, dry_run=dry_run, fmt=fmt, connect=ConnectionOptions)
