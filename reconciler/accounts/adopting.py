"""`adopt` over the selected accounts: each account's files edited from its own live account,
side by side, each with the connection its entry makes (`reconciler.adopt.account`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from reconciler.accounts.options import AccountOptions
from reconciler.adopt.account import adopt_account
from reconciler.adopt.model import Adoption

if TYPE_CHECKING:  # the runner (and the service's modules) only when accounts run
    from reconciler.accounts.file import AccountsFile
    from reconciler.accounts.run import Job, Outcome
    from reconciler.session.connection import Connect


def adopt_accounts(
    options: AccountOptions, *, only: tuple[str, ...], write: bool, connect: Connect
) -> tuple[AccountsFile, list[Outcome[Adoption]]]:
    """The accounts file and each selected account's adoption (or why it failed), in the file's
    order; none when nothing is selected."""
    from reconciler.accounts.run import run_accounts

    loaded, chosen = options.load()
    if not chosen:
        return loaded, []

    def work(job: Job) -> Adoption:
        connection = connect(environ=job.environ, names=job.names)
        return adopt_account(job.entry.path, connection, only=only, write=write)

    outcomes = run_accounts(
        loaded, chosen, work, parallelism=options.parallelism, environ=os.environ, doing="reading"
    )
    return loaded, outcomes
