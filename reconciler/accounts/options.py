"""What the selection options asked (`--all`, `--account`, `--changed-since`, and the accounts
file), and the accounts they choose from the file: the command line makes an `AccountOptions`,
the accounts' runs (`reconciler.accounts.plans`, `.saved`, `.validate`) read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from reconciler.accounts.file import AccountEntry, AccountsFile, find_accounts_file
from reconciler.accounts.file import load_accounts_file as _load_file
from reconciler.accounts.selection import DEFAULT_ACCOUNTS_PARALLELISM, Selection, select

if TYPE_CHECKING:  # the runner (and the service's modules) only when accounts run
    from reconciler.accounts.run import Outcome

#: `--detailed-exitcode`, `drift` and `adopt --dry-run`: something to change (or drift).
EXIT_CHANGES = 2


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


def nothing_selected(accounts: AccountsFile, options: AccountOptions) -> None:
    ref = options.selection.changed_since
    reason = f"changed since {ref}" if ref is not None else "selected"
    click.echo(f"No account of {accounts.path} {reason}: nothing to do.", err=True)


def exit_for(outcomes: list[Outcome[Any]], changes: bool) -> None:
    """1 when any account failed (after every one ran), else 2 when `changes`, else 0."""
    if any(outcome.error is not None for outcome in outcomes):
        raise click.exceptions.Exit(1)
    if changes:
        raise click.exceptions.Exit(EXIT_CHANGES)
