"""A single PATH is a fleet of one: an accounts file of one entry made from the PATH, connected
as the command line says (never as an entry's variables), whose run raises its own error."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from reconciler.accounts.fleet import Fleet, fleet_of, run_fleet
from reconciler.accounts.options import AccountOptions
from reconciler.accounts.run import Job
from reconciler.accounts.selection import Selection
from reconciler.cli.connection import ConnectionOptions
from reconciler.errors import ReconcilerError


def test_a_path_is_an_accounts_file_of_one_entry_with_the_command_lines_connection() -> None:
    connection = ConnectionOptions(sandbox=True, environ={"RECONCILER_TOKEN": "t"})
    fleet = fleet_of(Path("workforce"), AccountOptions.none(), connection, ConnectionOptions)
    assert fleet.single and fleet.connection is connection
    accounts, chosen = fleet.load()
    (entry,) = accounts.accounts
    assert chosen == [entry] and entry.path == Path("workforce")
    assert entry.variables() == [] and entry.env == ()  # it reads the process's, as always

    seen: list[Job] = []
    (outcome,) = run_fleet(fleet, accounts, chosen, lambda job: seen.append(job) or "planned")
    assert outcome.value == "planned" and outcome.error is None
    assert seen[0].connect(ConnectionOptions) is connection
    assert seen[0].environ == {"RECONCILER_TOKEN": "t"} and seen[0].progress is None


def test_a_fleet_of_one_raises_its_error_as_it_is() -> None:
    fleet = Fleet(AccountOptions.none(), Path("workforce"), ConnectionOptions(), single=True)
    accounts, chosen = fleet.load()

    def work(job: Job) -> None:
        raise ReconcilerError("the service said no", hint="check the token")

    with pytest.raises(ReconcilerError, match="the service said no"):
        run_fleet(fleet, accounts, chosen, work)


def test_a_selection_refuses_a_path_and_the_connection_options() -> None:
    selected = AccountOptions(Selection(every=True), None, 1)
    with pytest.raises(click.UsageError, match=r"give PATH \(workforce\) or select accounts"):
        fleet_of(Path("workforce"), selected, ConnectionOptions(), ConnectionOptions)
    with pytest.raises(click.UsageError, match="--base-url, --token-file"):
        fleet_of(None, selected, ConnectionOptions(sandbox=True), ConnectionOptions)
    assert not fleet_of(None, selected, ConnectionOptions(), ConnectionOptions).single
    with pytest.raises(click.UsageError, match="Missing argument 'PATH'"):
        fleet_of(None, AccountOptions.none(), ConnectionOptions(), ConnectionOptions)
