"""`reconciler comment`: exactly the body of the pull-request plan comment, for any CI system.

The body is the plan's Markdown with a hidden marker on its first line, so a bot (ours on
GitHub, a few lines of script on GitLab or Jenkins) can find its comment again and update it.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from reconciler.accounts.options import AccountOptions
from reconciler.accounts.plans import plan_accounts
from reconciler.accounts.saved import is_plans_folder
from reconciler.cli.accounts import need_path, refuse_connection, selection_options
from reconciler.cli.connection import ConnectionOptions, connection_options, open_client
from reconciler.cli.plan import save_plan
from reconciler.cli.review import review_options
from reconciler.plan import Plan, PlanOptions
from reconciler.plan.refresh import refresh
from reconciler.plan.resume import resume
from reconciler.plan.saved import DEFAULT_MAX_AGE, StalePlan, is_saved_plan, load_saved_plan
from reconciler.render.comment_body import plan_comment
from reconciler.render.markdown import MarkdownRenderer
from reconciler.render.marker import PLAN, InvalidMarkerKey, Marker
from reconciler.session.account import check_saved_account
from reconciler.session.plankey import plan_key
from reconciler.session.planning import plan_path

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
@connection_options
@selection_options
def comment(
    source: Path | None,
    key: str | None,
    out: Path | None,
    full: Path | None,
    show_unmanaged: bool,
    pull_request: tuple[int, str] | None,
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
    if accounts.active or (source is not None and is_plans_folder(source)):
        _comment_accounts(
            source, accounts, connection, marker, (out, pull_request), full, show_unmanaged
        )
        return
    source = need_path(source)
    if is_saved_plan(source):
        if out is not None:
            raise click.BadParameter("--out needs a desired-state PATH, not a saved plan")
        if pull_request is not None:  # the saved plan names its own pull request
            raise click.BadParameter(
                "--pull-request and --head-sha need a desired-state PATH, not a saved plan"
            )
        result, commit = _resume(source, connection)
    else:
        if pull_request is not None and out is None:
            raise click.UsageError(
                "--pull-request and --head-sha are recorded in a saved plan: add --out"
            )
        planned = plan_path(source, PlanOptions(), connection, keyed=out is not None)
        result = planned.plan
        commit = pull_request[1] if pull_request is not None else None
        if out is not None:
            save_plan(out, planned, source, connection, pull_request=pull_request)
    if full is not None:
        renderer = MarkdownRenderer(show_unmanaged=show_unmanaged, limit=None)
        full.write_text(renderer.render(result), encoding="utf-8")
    body = plan_comment(result, marker, show_unmanaged=show_unmanaged, commit=commit)
    click.echo(body, nl=False)


def _resume(path: Path, connection: ConnectionOptions) -> tuple[Plan, str | None]:
    """The saved plan as it holds now, and the commit it was planned at (if any)."""
    saved = load_saved_plan(path)
    with open_client(connection, read_only=True) as client:
        key = plan_key(client)
        saved.verify(key)  # an edited plan is refused before the account is read
        check_saved_account(saved, client, connection, doing="talks to")
        live = refresh(client, payruns=bool(saved.payruns))
    commit = saved.review.head_sha if saved.review is not None else None
    try:
        return resume(saved, live, key=key, environ=os.environ, max_age=DEFAULT_MAX_AGE), commit
    except StalePlan as error:
        raise StalePlan(
            error.message,
            hint="the plan no longer describes the account; make it again with "
            "`reconciler plan --out`",
        ) from None


def _comment_accounts(
    source: Path | None,
    accounts: AccountOptions,
    connection: ConnectionOptions,
    marker: Marker,
    saving: tuple[Path | None, tuple[int, str] | None],
    full: Path | None,
    show_unmanaged: bool,
) -> None:
    """The combined comment of the selected accounts, or of the saved plans in a folder;
    `saving`: `--out DIR` and the pull request its plans are bound to, as `plan --out`."""
    from reconciler.accounts.combined import Look, parts_comment, parts_markdown, shown_parts
    from reconciler.accounts.saved import saved_parts

    refuse_connection(connection)
    out, pull_request = saving
    if source is not None:
        if out is not None:
            raise click.BadParameter("--out needs accounts to plan, not a folder of saved plans")
        if pull_request is not None:  # each saved plan names its own pull request
            raise click.BadParameter(
                "--pull-request and --head-sha need accounts to plan, not a folder of saved plans"
            )
        parts = saved_parts(accounts, source)
    else:
        if pull_request is not None and out is None:
            raise click.UsageError(
                "--pull-request and --head-sha are recorded in a saved plan: add --out"
            )
        done = plan_accounts(
            accounts,
            look=Look("markdown", show_unmanaged=show_unmanaged),
            plan_options=PlanOptions(),
            out=out,
            money_since=None,
            pull_request=pull_request,
            connect=ConnectionOptions,
        )
        parts = None if done is None else shown_parts(done)
    if parts is None:
        return
    if full is not None:
        full.write_text(parts_markdown(parts, limit=None), encoding="utf-8")
    click.echo(parts_comment(parts, marker), nl=False)
    if any(part.error is not None for part in parts):
        raise click.exceptions.Exit(1)
