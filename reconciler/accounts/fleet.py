"""The accounts a command runs over: those the selection chose from the accounts file, or one
PATH as a fleet of one.

`validate`, `plan`, `drift`, `comment`, `adopt` and `apply` each make a `Fleet` of what they
were given and hand it to one function of this package. A single PATH is an accounts file of
one entry, synthesized from the PATH and connected as the command line's options and the
process's environment say (as `reconciler plan PATH` always connected), so one run serves one
account and fifty (`run_fleet`). A fleet of one is shown as one account always was (no header,
no summary line), and what its run raises is the command's error: there is no other account
to finish first.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from reconciler.accounts.file import AccountEntry, AccountsFile
from reconciler.accounts.options import AccountOptions

if TYPE_CHECKING:  # the runner (and the service's modules) only when accounts run
    from reconciler.accounts.run import Job, Outcome
    from reconciler.session.connection import Connect, Connection

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Fleet:
    """The selected accounts of the accounts file, or (`single`) the fleet of one of `path`,
    connected by `connection` (None for `validate`, which connects to nothing)."""

    options: AccountOptions
    path: Path | None = None
    connection: Connection | None = None
    single: bool = False

    def load(self) -> tuple[AccountsFile, list[AccountEntry]]:
        """The accounts file and the accounts chosen from it (none when nothing changed)."""
        if not self.single:
            return self.options.load()
        assert self.path is not None, "a fleet of one is its PATH"
        entry = AccountEntry(
            name=str(self.path),
            path=self.path,
            written_path=str(self.path),
            base_url=None,
            token_env=None,
            email_env=None,
            password_env=None,
            plan_key_env=None,
            client_id=None,
            line=0,
        )
        return AccountsFile(self.path, 1, (entry,), {}), [entry]


def fleet_of(
    path: Path | None,
    options: AccountOptions,
    connection: Connection | None = None,
    connect: Connect | None = None,
) -> Fleet:
    """The accounts a selection chose (PATH and connection options refused with it), else the
    fleet of one of PATH (which must then be given)."""
    if not options.active:
        return Fleet(options, need_path(path), connection, single=True)
    refuse_path(path)
    if connect is not None:
        refuse_connection(connection, connect)
    return Fleet(options)


def fleet_or_plans(
    path: Path | None,
    options: AccountOptions,
    connection: Connection,
    connect: Connect,
    *,
    folder_when_selected: bool,
) -> Fleet:
    """As `fleet_of`, and a folder of saved plans (`plan --all --out DIR`) is the fleet of the
    accounts of the file (its `path`); with `folder_when_selected`, a PATH given with a
    selection is always such a folder (`comment`: an account without a plan in it is shown
    failed), else it is refused unless it is one."""
    folder = path is not None and is_plans_folder(path)
    if not options.active and not folder:
        return Fleet(options, need_path(path), connection, single=True)
    refuse_connection(connection, connect)
    if path is not None and not folder and not folder_when_selected:
        refuse_path(path)
    return Fleet(options, path)


def is_plans_folder(path: Path) -> bool:
    """A folder whose `*.json` files are saved plans (what `plan --out DIR` wrote), and that
    holds no desired state (`*.yaml`, `*.yml`): a desired-state folder stays one."""
    from reconciler.plan.saved import is_saved_plan

    if not path.is_dir():
        return False
    if any(entry.suffix.lower() in (".yaml", ".yml") for entry in path.iterdir()):
        return False
    files = sorted(path.glob("*.json"))
    return bool(files) and all(is_saved_plan(file) for file in files)


def run_fleet(
    fleet: Fleet,
    accounts: AccountsFile,
    chosen: list[AccountEntry],
    work: Callable[[Job], T],
    *,
    doing: str = "planning",
    processes: int = 1,
) -> list[Outcome[T]]:
    """`work` for each chosen account (`reconciler.accounts.run`); for a fleet of one, in this
    thread, with the command line's connection, its errors raised as they are."""
    from reconciler.accounts.run import Job, Outcome, run_accounts

    if not fleet.single:
        return run_accounts(
            accounts,
            chosen,
            work,
            parallelism=fleet.options.parallelism,
            environ=os.environ,
            doing=doing,
            processes=processes,
        )
    (entry,) = chosen
    connection = fleet.connection
    environ = os.environ if connection is None else connection.env()
    return [Outcome(entry, value=work(Job(entry, environ, None, _quiet, connection=connection)))]


def _quiet(*_: object) -> None:
    return None


def refuse_path(path: Path | None) -> None:
    """A PATH and a selection together: say which to drop."""
    if path is not None:
        raise click.UsageError(
            f"give PATH ({path}) or select accounts (--all, --account, --changed-since), not "
            "both: each account's files are at its path in the accounts file"
        )


def refuse_connection(connection: Any, connect: Connect) -> None:
    """Connection options with a selection: each account's connection is its entry's."""
    if connection != connect():
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
