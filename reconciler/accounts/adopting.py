"""`adopt` over a fleet: each account's files edited from its own live account, side by side,
each with the connection its entry makes (`reconciler.adopt.account`); a fleet of one (PATH)
with the command line's connection, shown as one account always was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.accounts.fleet import Fleet, run_fleet
from reconciler.accounts.options import exit_for, nothing_selected
from reconciler.adopt.account import adopt_account
from reconciler.adopt.model import Adoption

if TYPE_CHECKING:  # the runner (and the service's modules) only when accounts run
    from reconciler.accounts.run import Job
    from reconciler.session.connection import Connect


def adopt_fleet(
    fleet: Fleet,
    *,
    only: tuple[str, ...],
    into: Path | None,
    dry_run: bool,
    fmt: str,
    connect: Connect,
) -> None:
    """Adopt each account's drift into its files and show it (`fmt`: diff or json); exit 2
    with `dry_run` when there is something to adopt, 1 when an account failed."""
    if into is not None and not fleet.single:
        raise click.UsageError("--into names one file: it is for PATH, not for accounts")
    loaded, chosen = fleet.load()
    if not chosen:
        nothing_selected(loaded, fleet.options)
        return

    def work(job: Job) -> Adoption:
        connection = job.connect(connect)
        return adopt_account(job.entry.path, connection, only=only, into=into, write=not dry_run)

    outcomes = run_fleet(fleet, loaded, chosen, work, doing="reading")
    if fleet.single:
        (outcome,) = outcomes
        assert outcome.value is not None, "a fleet of one raises its error"
        _show(outcome.value, dry_run, fmt)
    else:
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


def _show(adoption: Adoption, dry_run: bool, fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(adoption.document(), indent=2))
    elif fmt == "diff":
        click.echo(adoption.diff(), nl=False)
    report = adoption.report()
    if dry_run and adoption.anything:
        report = report.replace("Adopted ", "Would adopt ", 1) + "Nothing written (--dry-run).\n"
    click.echo(report, nl=False, err=True)
