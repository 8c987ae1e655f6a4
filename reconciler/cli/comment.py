"""`reconciler comment`: exactly the body of the pull-request plan comment, for any CI system.

The body is the plan's Markdown with a hidden marker on its first line, so a bot (ours in
the CI flow, or a few lines of script in any other CI system) can find its comment again and
update it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.accounts.commenting import comment_fleet
from reconciler.accounts.fleet import fleet_or_plans
from reconciler.accounts.options import AccountOptions
from reconciler.cli.accounts import selection_options
from reconciler.cli.approvals import approvals_options
from reconciler.cli.connection import ConnectionOptions, connection_options
from reconciler.cli.review import review_options
from reconciler.render.marker import PLAN, InvalidMarkerKey, Marker

if TYPE_CHECKING:  # the gate's module is imported when a command runs, not for --help
    from reconciler.accounts.approving import Gate

key_option = click.option(
    "--key",
    metavar="KEY",
    help="Tell apart several plan comments on one pull request (one per account or directory).",
)


def marker_for(kind: str, key: str | None) -> Marker:
    """The marker of this kind with `--key`, with a clear error for a key it cannot hold."""
    try:
        return Marker(kind, key)
    except InvalidMarkerKey as error:
        raise click.BadParameter(str(error), param_hint="--key") from None


@click.command("comment")
@click.argument(
    "source", metavar="PATH|PLAN|DIR", type=click.Path(exists=True, path_type=Path), required=False
)
@key_option
@click.option(
    "--out",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Also save the plan (from a desired-state PATH), for `reconciler apply PLAN` (with "
    "accounts selected: a folder, DIR/<name>.json each).",
)
@click.option(
    "--full",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Also write the full plan, every change, as Markdown (for the job summary and the "
    "plan artifact: the comment cuts the low-risk tail of a large plan).",
)
@click.option("--show-unmanaged", is_flag=True, help="List the unmanaged open agreements.")
@review_options
@approvals_options(apply=False)
@connection_options
@selection_options
def comment(
    source: Path | None,
    key: str | None,
    out: Path | None,
    full: Path | None,
    show_unmanaged: bool,
    pull_request: tuple[int, str] | None,
    gate: Gate,
    connection: ConnectionOptions,
    accounts: AccountOptions,
) -> None:
    """Print the plan comment's body for the desired state at PATH, or for a saved PLAN.

    From a saved plan the comment shows its changes, and the drift and unmanaged workers it
    counted when it was made, after checking its signature and that it still holds. With
    accounts selected (--all, --account, --changed-since), or from a folder DIR of saved plans
    (`plan --all --out DIR`), one comment for every account.
    """
    marker = marker_for(PLAN, key)
    comment_fleet(
        fleet_or_plans(source, accounts, connection, ConnectionOptions, folder_when_selected=True),
        marker=marker,
        out=out,
        full=full,
        show_unmanaged=show_unmanaged,
        pull_request=pull_request,
        connect=ConnectionOptions,
        gate=gate,
    )
