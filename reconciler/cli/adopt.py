"""`reconciler adopt`: write into the files what people changed in the service."""

from __future__ import annotations

import json
from pathlib import Path

import click

from reconciler.accounts.adopting import adopt_accounts
from reconciler.accounts.options import AccountOptions, exit_for, nothing_selected
from reconciler.adopt import Adoption
from reconciler.adopt.account import adopt_account
from reconciler.cli.accounts import need_path, refuse_connection, refuse_path, selection_options
from reconciler.cli.connection import ConnectionOptions, connection_options
from reconciler.cli.plan import EXIT_CHANGES


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
    if accounts.active:
        refuse_path(path, accounts)
        refuse_connection(connection)
        if into is not None:
            raise click.UsageError("--into names one file: it is for PATH, not for accounts")
        _adopt_accounts(accounts, only, dry_run, fmt)
        return
    adoption = adopt_account(need_path(path), connection, only=only, into=into, write=not dry_run)
    _show(adoption, dry_run, fmt)
    if dry_run and adoption.anything:
        raise click.exceptions.Exit(EXIT_CHANGES)


def _show(adoption: Adoption, dry_run: bool, fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(adoption.document(), indent=2))
    elif fmt == "diff":
        click.echo(adoption.diff(), nl=False)
    report = adoption.report()
    if dry_run and adoption.anything:
        report = report.replace("Adopted ", "Would adopt ", 1) + "Nothing written (--dry-run).\n"
    click.echo(report, nl=False, err=True)


def _adopt_accounts(
    accounts: AccountOptions, only: tuple[str, ...], dry_run: bool, fmt: str
) -> None:
    loaded, outcomes = adopt_accounts(
        accounts, only=only, write=not dry_run, connect=ConnectionOptions
    )
    if not outcomes:
        nothing_selected(loaded, accounts)
        return
    if fmt == "json":  # one document: each account's adoption, or its error
        documents = [
            {"name": o.name, "adoption": o.value.document()}
            if o.value is not None
            else {"name": o.name, "error": {"message": o.error}}
            for o in outcomes
        ]
        click.echo(json.dumps({"accounts": documents}, indent=2))
    for outcome in outcomes:
        click.echo(f"# account {outcome.name}", err=True)
        if outcome.value is not None:
            _show(outcome.value, dry_run, "none" if fmt == "json" else fmt)
        else:
            click.echo(f"Error: {outcome.error}", err=True)
    exit_for(outcomes, dry_run and any(o.value and o.value.anything for o in outcomes))
