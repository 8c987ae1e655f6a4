"""Several accounts from one repository: the selection options, `reconciler accounts`, and
`validate` over the selected accounts.

Each account runs the single-account code with its own environment
(`reconciler.accounts.environment`); the outputs are joined in the accounts file's order
(`reconciler.accounts.combined`). `plan`, `drift` and `comment` over them are in
`accounts_plan`; `apply` and saved plans per account in `accounts_saved`.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from reconciler.accounts.file import AccountEntry, AccountsFile, find_accounts_file
from reconciler.accounts.file import load_accounts_file as _load_file
from reconciler.accounts.selection import (
    DEFAULT_ACCOUNTS_PARALLELISM,
    MAX_CHUNK,
    Selection,
    matrix,
    select,
)
from reconciler.errors import ReconcilerError
from reconciler.words import plural

if TYPE_CHECKING:  # the runner (and the service's modules) only when accounts run
    from reconciler.accounts.run import Job, Outcome

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class AccountOptions:
    """The selection options of a command; `active` when one of them was given."""

    selection: Selection
    accounts_file: Path | None
    parallelism: int

    @property
    def active(self) -> bool:
        return self.selection.active

    @classmethod
    def none(cls) -> AccountOptions:
        """No selection (every account), from the default accounts file."""
        return cls(Selection(), None, DEFAULT_ACCOUNTS_PARALLELISM)

    def load(self) -> tuple[AccountsFile, list[AccountEntry]]:
        """The accounts file, and the accounts selected from it (none when nothing changed)."""
        accounts = _load_file(find_accounts_file(self.accounts_file))
        return accounts, select(accounts, self.selection)


_NAMES = ("all_accounts", "account_names", "changed_since", "accounts_file", "accounts_parallelism")


def selection_options(command: F) -> F:
    """Add `--all`, `--account`, `--changed-since`, `--accounts-file` and
    `--accounts-parallelism`; the command receives `accounts` (an `AccountOptions`)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name in _NAMES}
        selection = Selection(
            every=values["all_accounts"],
            names=tuple(values["account_names"]),
            changed_since=values["changed_since"],
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


def refuse_path(path: Path | None, accounts: AccountOptions) -> None:
    """A PATH and a selection together: say which to drop."""
    if path is not None:
        raise click.UsageError(
            f"give PATH ({path}) or select accounts (--all, --account, --changed-since), not "
            "both: each account's files are at its path in the accounts file"
        )


def refuse_connection(connection: Any) -> None:
    """Connection options with a selection: each account's connection is its entry's."""
    from reconciler.cli.connection import ConnectionOptions

    if connection != ConnectionOptions():
        raise click.UsageError(
            "--base-url, --token-file, --password-file, --client-id and --sandbox are for one "
            "account: with --all, --account or --changed-since each account connects as its "
            "entry in the accounts file says (baseUrl, tokenEnv, clientId...)"
        )


def need_path(path: Path | None) -> Path:
    if path is None:
        raise click.UsageError(
            "Missing argument 'PATH' (or select accounts with --all, --account NAME or "
            "--changed-since REF)"
        )
    return path


def nothing_selected(accounts: AccountsFile, options: AccountOptions) -> None:
    ref = options.selection.changed_since
    reason = f"changed since {ref}" if ref is not None else "selected"
    click.echo(f"No account of {accounts.path} {reason}: nothing to do.", err=True)


def exit_for(outcomes: list[Outcome[Any]], changes: bool) -> None:
    """1 when any account failed (after every one ran), else 2 when `changes`, else 0."""
    if any(outcome.error is not None for outcome in outcomes):
        raise click.exceptions.Exit(1)
    if changes:
        raise click.exceptions.Exit(2)


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
        "clientId": entry.client_id,
    }


# --- validate ---------------------------------------------------------------------------------


def validate_accounts(options: AccountOptions, output_format: str, no_env: bool) -> None:
    """Check the accounts file, then each selected account's files (no network)."""
    from reconciler.accounts.environment import account_environment
    from reconciler.accounts.file import InvalidAccountsFile
    from reconciler.accounts.run import Job
    from reconciler.desired import InvalidDesiredState, load_desired_state
    from reconciler.desired.report import LISTED, render_problems

    try:
        accounts, chosen = options.load()
    except InvalidAccountsFile as error:  # its problems as the desired state's are shown
        click.echo(render_problems(InvalidDesiredState(error.problems), output_format))
        raise click.exceptions.Exit(1) from None

    def check(job: Job) -> str:
        state = load_desired_state(job.entry.path, job.environ, read_variables=not no_env)
        webhook = "a webhook" if state.webhook is not None else "no webhook"
        return f"({plural(len(state.workers), 'worker')}, {webhook})"

    invalid: list[tuple[str, InvalidDesiredState]] = []
    failed: list[tuple[str, str]] = []
    valid: list[tuple[str, str]] = []
    for entry in chosen:  # reading files is CPU: one after the other
        environ = account_environment(entry, accounts, os.environ, connect=False)
        try:
            valid.append((entry.name, check(Job(entry, environ, _ignore, _ignore))))
        except InvalidDesiredState as error:
            invalid.append((entry.name, error))
        except ReconcilerError as error:
            failed.append((entry.name, str(error)))
    if output_format == "json":
        rows = []
        for name, problem in invalid:
            rows += [
                {"account": name, **row} for row in json.loads(render_problems(problem, "json"))
            ]
        rows += [{"account": name, "message": message} for name, message in failed]
        click.echo(json.dumps(rows, indent=2))
    elif output_format == "github":
        lines = [render_problems(problem, "github") for _, problem in invalid]
        lines += [f"::error::account {name}: {message}" for name, message in failed]
        if lines:
            click.echo("\n".join(lines))
    else:
        for name, summary in valid:
            path = accounts.named(name).written_path  # type: ignore[union-attr]
            click.echo(f"account {name}: {path}: valid {summary}")
        for name, problem in invalid:
            click.echo(f"account {name}: invalid")
            problems = problem.problems[: LISTED["text"]]
            click.echo("\n".join(f"  {problem}" for problem in problems))
        for name, message in failed:
            click.echo(f"account {name}: {message}")
    if invalid or failed:
        raise click.exceptions.Exit(1)


def _ignore(*_: object) -> None:
    return None
