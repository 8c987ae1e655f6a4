"""`comment` over a fleet: the body of the pull-request plan comment, for any CI system.

The selected accounts' comment is one body (`reconciler.accounts.combined`), made from their
plans or from a folder of their saved plans; a fleet of one (PATH) is the plan's comment as a
single account's always was, from its files or from its saved plan (resumed against the live
account first, as `apply PLAN` does).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.accounts.fleet import Fleet
from reconciler.accounts.plans import plan_accounts, save_plan
from reconciler.plan import Plan, PlanOptions
from reconciler.render.marker import Marker

if TYPE_CHECKING:
    from reconciler.accounts.approving import Gate
    from reconciler.session.connection import Connect, Connection


def comment_fleet(
    fleet: Fleet,
    *,
    marker: Marker,
    out: Path | None,
    full: Path | None,
    show_unmanaged: bool,
    pull_request: tuple[int, str] | None,
    connect: Connect,
    gate: Gate | None = None,
) -> None:
    """Print the comment's body (under `marker`); `out`: also save the plans (from files: a
    file for a fleet of one, a folder for several, as `plan --out`); `full`: also write the
    whole plan as Markdown. Exit 1 when an account failed."""
    from reconciler.accounts.combined import Look, parts_comment, parts_markdown, shown_parts
    from reconciler.accounts.saved import saved_parts
    from reconciler.plan.saved import is_saved_plan

    if fleet.path is not None and (not fleet.single or is_saved_plan(fleet.path)):
        what = "a desired-state PATH, not a saved plan"
        if not fleet.single:
            what = "accounts to plan, not a folder of saved plans"
        if out is not None:
            raise click.BadParameter(f"--out needs {what}")
        if pull_request is not None:  # the saved plan names its own pull request
            raise click.BadParameter(f"--pull-request and --head-sha need {what}")
        if fleet.single:
            assert fleet.connection is not None, "a fleet of one is connected"
            _print(*_resume(fleet.path, fleet.connection), marker, full, show_unmanaged)
            return
        parts = saved_parts(fleet.options, fleet.path)
    else:
        if pull_request is not None and out is None:
            raise click.UsageError(
                "--pull-request and --head-sha are recorded in a saved plan: add --out"
            )
        done = plan_accounts(
            fleet,
            look=Look("markdown", show_unmanaged=show_unmanaged),
            plan_options=PlanOptions(),
            out=out,
            money_since=None,
            pull_request=pull_request,
            connect=connect,
            gate=gate,
        )
        if done is not None and fleet.single:
            planned = done[0].value.planned if done[0].value is not None else None
            assert planned is not None and fleet.path is not None and fleet.connection is not None
            if out is not None:
                save_plan(out, planned, fleet.path, fleet.connection, pull_request=pull_request)
            commit = pull_request[1] if pull_request is not None else None
            _print(planned.plan, commit, marker, full, show_unmanaged)
            return
        parts = None if done is None else shown_parts(done)
    if parts is None:
        return
    if full is not None:
        full.write_text(parts_markdown(parts, limit=None), encoding="utf-8")
    click.echo(parts_comment(parts, marker), nl=False)
    if any(part.error is not None for part in parts):
        raise click.exceptions.Exit(1)


def _print(
    result: Plan, commit: str | None, marker: Marker, full: Path | None, show_unmanaged: bool
) -> None:
    """One account's comment on stdout (naming `commit`), and its full plan in `full`."""
    from reconciler.render.comment_body import plan_comment
    from reconciler.render.markdown import MarkdownRenderer

    if full is not None:
        renderer = MarkdownRenderer(show_unmanaged=show_unmanaged, limit=None)
        full.write_text(renderer.render(result), encoding="utf-8")
    body = plan_comment(result, marker, show_unmanaged=show_unmanaged, commit=commit)
    click.echo(body, nl=False)


def _resume(path: Path, connection: Connection) -> tuple[Plan, str | None]:
    """The saved plan as it holds now, and the commit it was planned at (if any)."""
    from reconciler.plan.refresh import refresh
    from reconciler.plan.resume import resume
    from reconciler.plan.saved import DEFAULT_MAX_AGE, StalePlan, load_saved_plan
    from reconciler.session.account import check_saved_account
    from reconciler.session.plankey import plan_key

    saved = load_saved_plan(path)
    with connection.open(read_only=True) as client:
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
