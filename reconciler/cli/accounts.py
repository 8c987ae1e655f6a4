"""Several accounts from one repository: the selection options and `reconciler accounts`.

What the options chose (`reconciler.accounts.options`), or a single PATH, is a fleet
(`reconciler.accounts.fleet`) run by `reconciler.accounts`: each account runs the
single-account session with its own environment; `validate`, `plan`, `drift`, `comment`,
`adopt` and `apply` over a fleet are in `accounts.validate`, `.plans`, `.commenting`,
`.adopting` and `.applying`, saved plans per account in `accounts.saved`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from reconciler.accounts.file import AccountEntry
from reconciler.accounts.options import AccountOptions
from reconciler.accounts.selection import (
    DEFAULT_ACCOUNTS_PARALLELISM,
    MAX_CHUNK,
    Selection,
    matrix,
    selection_of,
)

F = TypeVar("F", bound=Callable[..., Any])


_NAMES = ("all_accounts", "account_names", "changed_since", "accounts_file", "accounts_parallelism")


def selection_options(command: F) -> F:
    """Add `--all`, `--account`, `--changed-since`, `--accounts-file` and
    `--accounts-parallelism`; the command receives `accounts` (an `AccountOptions`)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name in _NAMES}
        selection = selection_of(
            values["all_accounts"], values["account_names"], values["changed_since"]
        )
        options = AccountOptions(selection, values["accounts_file"], values["accounts_parallelism"])
        return command(*args, accounts=options, **kwargs)

    decorators = [
        click.option(
            "--all", "all_accounts", is_flag=True, help="Every account of the accounts file."
        ),
        click.option(
            "--account",
            "account_names",
            multiple=True,
            metavar="NAME",
            help="This account of the accounts file (repeatable; a space-separated list too, "
            "as `reconciler accounts --chunk` groups them).",
        ),
        click.option(
            "--changed-since",
            metavar="REF",
            help="The accounts whose files or entry changed since the merge base of REF.",
        ),
        click.option(
            "--accounts-file",
            type=click.Path(dir_okay=False, path_type=Path),
            help="The accounts file (default: reconciler.yaml here or in a parent folder).",
        ),
        click.option(
            "--accounts-parallelism",
            type=click.IntRange(1, 64),
            default=DEFAULT_ACCOUNTS_PARALLELISM,
            show_default=True,
            help="How many accounts run at once (with --all, --account or --changed-since).",
        ),
    ]
    for decorate in reversed(decorators):
        wrapper = decorate(wrapper)
    return wrapper  # type: ignore[return-value]


# --- reconciler accounts ----------------------------------------------------------------------


@click.command("accounts")
@click.option("--changed-since", metavar="REF", help="Only the accounts changed since REF.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github-matrix"]),
    default="text",
    show_default=True,
    help="text: a line per account; json: the entries; github-matrix: for strategy.matrix.",
)
@click.option(
    "--chunk",
    type=click.IntRange(1, MAX_CHUNK),
    metavar="K",
    help='github-matrix: K accounts a job, as {"accounts": "a b c"} (a fleet beyond '
    'GitHub\'s 256 jobs); pass it on as --account "${{ matrix.accounts }}".',
)
@click.option(
    "--accounts-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The accounts file (default: reconciler.yaml here or in a parent folder).",
)
def accounts(
    changed_since: str | None, fmt: str, chunk: int | None, accounts_file: Path | None
) -> None:
    """List the accounts of the accounts file (reconciler.yaml), or those changed since REF."""
    if chunk is not None and fmt != "github-matrix":
        raise click.BadParameter(
            "--chunk groups the names of --format github-matrix", param_hint="--chunk"
        )
    selection_of(False, (), changed_since)  # an empty REF names no commit
    options = AccountOptions(Selection(every=True, changed_since=changed_since), accounts_file, 1)
    _, chosen = options.load()
    if fmt == "github-matrix":
        click.echo(json.dumps(matrix([entry.name for entry in chosen], chunk)))
    elif fmt == "json":
        rows = [_row(entry) for entry in chosen]
        click.echo(json.dumps(rows, indent=2))
    else:
        for entry in chosen:
            click.echo(f"{entry.name}\t{entry.written_path}")


def _row(entry: AccountEntry) -> dict[str, Any]:
    return {
        "name": entry.name,
        "path": entry.written_path,
        "baseUrl": entry.base_url,
        "tokenEnv": entry.token_env,
        "emailEnv": entry.email_env,
        "passwordEnv": entry.password_env,
        "planKeyEnv": entry.plan_key_env,
        "env": list(entry.env),
        "clientId": entry.client_id,
    }
