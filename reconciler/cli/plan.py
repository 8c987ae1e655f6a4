"""`reconciler plan` and `reconciler drift`: refresh, diff, print; never write to the service."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.accounts.fleet import fleet_of
from reconciler.accounts.options import AccountOptions
from reconciler.accounts.plans import look_for, plan_fleet
from reconciler.cli.accounts import selection_options
from reconciler.cli.approvals import approvals_options
from reconciler.cli.connection import ConnectionOptions, connection_options
from reconciler.cli.moment import Moment
from reconciler.cli.review import review_options
from reconciler.plan import PlanOptions
from reconciler.render import FORMATS

if TYPE_CHECKING:  # the gate's module is imported when a command runs, not for --help
    from reconciler.accounts.approving import Gate

_format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text for people, json (Terraform's plan JSON shape) for machines, markdown for a PR.",
)


_money_since_option = click.option(
    "--money-since",
    type=Moment(),
    help="Report the money of paylists made since DATE (default: policy.moneyWindow, 35 days); "
    "given without payruns, it turns the money report on.",
)
_show_unmanaged_option = click.option(
    "--show-unmanaged",
    is_flag=True,
    help="List the open agreements this file does not own (they are always counted).",
)


@click.command("plan")
@click.argument("path", type=click.Path(path_type=Path), required=False)
@click.option(
    "--out",
    type=click.Path(writable=True, path_type=Path),
    help="Save the plan, for `reconciler apply PLAN` (with accounts selected: a folder, "
    "one DIR/<name>.json each).",
)
@_format_option
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="Exit 2 when there are changes (0 none, 1 error), as Terraform does.",
)
@click.option(
    "--target",
    "targets",
    multiple=True,
    metavar="ID",
    help="Plan only this externalId (or `webhook`); repeatable.",
)
@click.option(
    "--exclude", "excludes", multiple=True, metavar="ID", help="Leave this externalId out."
)
@click.option(
    "--replace",
    "replaces",
    multiple=True,
    metavar="ID",
    help="Inactivate this worker and invite it again (the only fix for drift); repeatable.",
)
@_show_unmanaged_option
@_money_since_option
@review_options
@approvals_options(apply=False)
@connection_options
@selection_options
def plan(
    path: Path | None,
    out: Path | None,
    fmt: str,
    detailed_exitcode: bool,
    targets: tuple[str, ...],
    excludes: tuple[str, ...],
    replaces: tuple[str, ...],
    show_unmanaged: bool,
    money_since: datetime | None,
    pull_request: tuple[int, str] | None,
    gate: Gate,
    connection: ConnectionOptions,
    accounts: AccountOptions,
) -> None:
    """Compare the file(s) at PATH with the live account and print what apply would do."""
    if pull_request is not None and out is None:
        raise click.UsageError(
            "--pull-request and --head-sha are recorded in a saved plan: add --out"
        )
    options = PlanOptions(
        targets=frozenset(targets), excludes=frozenset(excludes), replaces=frozenset(replaces)
    )
    plan_fleet(
        fleet_of(path, accounts, connection, ConnectionOptions),
        look=look_for(fmt, show_unmanaged=show_unmanaged),
        plan_options=options,
        out=out,
        money_since=money_since,
        connect=ConnectionOptions,
        detailed_exitcode=detailed_exitcode,
        pull_request=pull_request,
        gate=gate,
    )


@click.command("drift")
@click.argument("path", type=click.Path(path_type=Path), required=False)
@_format_option
@click.option(
    "--strict",
    is_flag=True,
    help="Exit 2 for unmanaged workers, conflicts, and untraced, failed or stuck money too.",
)
@_show_unmanaged_option
@_money_since_option
@connection_options
@selection_options
def drift(
    path: Path | None,
    fmt: str,
    strict: bool,
    show_unmanaged: bool,
    money_since: datetime | None,
    connection: ConnectionOptions,
    accounts: AccountOptions,
) -> None:
    """A read-only plan for scheduled jobs: exit 2 on changes or drift, 0 when in sync."""
    fleet = fleet_of(path, accounts, connection, ConnectionOptions)
    # Under --strict, unmanaged workers make drift exit 2: the report names them (the issue).
    look = look_for(fmt, show_unmanaged=show_unmanaged or strict, strict=strict, drift=True)
    plan_fleet(
        fleet,
        look=look,
        plan_options=PlanOptions(),
        out=None,
        money_since=money_since,
        connect=ConnectionOptions,
    )
