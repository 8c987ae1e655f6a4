"""`reconciler plan` and `reconciler drift`: refresh, diff, print; never write to the service."""

from __future__ import annotations

import shlex
import sys
from datetime import datetime
from pathlib import Path

import click

from reconciler import logs, redaction
from reconciler.accounts.options import AccountOptions, exit_for
from reconciler.accounts.plans import look_for, plan_accounts, print_plans
from reconciler.cli.accounts import need_path, refuse_connection, refuse_path, selection_options
from reconciler.cli.connection import ConnectionOptions, connection_options
from reconciler.cli.moment import Moment
from reconciler.cli.review import review_options
from reconciler.plan import Plan, PlanOptions
from reconciler.render import FORMATS, renderer_for
from reconciler.render.json import plan_json, write_plan_json
from reconciler.session.planning import Planned, plan_path, write_planned
from reconciler.terminal import text_look

#: `--detailed-exitcode` and `drift`: something to change (or drift, for `drift`).
EXIT_CHANGES = 2

_log = logs.get_logger("reconciler.plan")

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
    if accounts.active:
        refuse_path(path, accounts)
        refuse_connection(connection)
        look = look_for(fmt, show_unmanaged=show_unmanaged)
        done = plan_accounts(
            accounts,
            look=look,
            plan_options=options,
            out=out,
            money_since=money_since,
            connect=ConnectionOptions,
            pull_request=pull_request,
        )
        if done is not None:
            print_plans(done, look)
            changes = detailed_exitcode and any(o.value and o.value.changes for o in done)
            exit_for(done, changes)
        return
    path = need_path(path)
    if out is not None and out.is_dir():
        raise click.BadParameter(
            f"{out} is a folder: a single plan is one file (a folder of plans is for --all)",
            param_hint="--out",
        )
    planned = plan_path(path, options, connection, keyed=out is not None, money_since=money_since)
    _print(planned.plan, fmt, show_unmanaged)
    if out is not None:
        save_plan(out, planned, path, connection, pull_request=pull_request)
    if detailed_exitcode and planned.plan.has_changes:
        raise click.exceptions.Exit(EXIT_CHANGES)


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
    if accounts.active:
        refuse_path(path, accounts)
        refuse_connection(connection)
        look = look_for(fmt, show_unmanaged=show_unmanaged or strict, strict=strict, drift=True)
        done = plan_accounts(
            accounts,
            look=look,
            plan_options=PlanOptions(),
            out=None,
            money_since=money_since,
            connect=ConnectionOptions,
            top_ups=True,
            doing="reading",
        )
        if done is not None:
            print_plans(done, look)
            exit_for(done, any(o.value and o.value.drift_found for o in done))
        return
    path = need_path(path)
    # drift's money summary counts the journal's top-ups; a plan shows the money as counts.
    result = plan_path(path, PlanOptions(), connection, money_since=money_since, top_ups=True).plan
    # Under --strict, unmanaged workers make drift exit 2: the report names them (the issue).
    _print(result, fmt, show_unmanaged or strict, strict=strict, drift=True)
    if result.drift_detected(strict=strict):
        raise click.exceptions.Exit(EXIT_CHANGES)


def save_plan(
    out: Path,
    planned: Planned,
    source: Path,
    connection: ConnectionOptions | None = None,
    *,
    pull_request: tuple[int, str] | None = None,
) -> None:
    """Write `--out`: the signed saved plan, made from `source` against the live state (for
    `pull_request`, (number, head commit), when it is reviewed on one)."""
    write_planned(out, planned, [str(source)], pull_request)
    again = connection.repeated() if connection is not None else ""
    click.echo(
        f"Saved the plan to {out}; apply it with: reconciler apply{again} {shlex.quote(str(out))}",
        err=True,
    )


def _print(
    result: Plan, fmt: str, show_unmanaged: bool, *, strict: bool = False, drift: bool = False
) -> None:
    if fmt == "json":  # written as it is made: it lists every managed resource
        _write_json(result)
        return
    color, width = text_look(sys.stdout) if fmt == "text" else (False, None)
    renderer = renderer_for(
        fmt, color=color, show_unmanaged=show_unmanaged, strict=strict, drift=drift, width=width
    )
    output = renderer.render(result)
    click.echo(output, nl=False, color=color)


def _write_json(result: Plan) -> None:
    """The JSON plan to stdout in UTF-8 as it is made, through the secrets' redaction."""
    sys.stdout.flush()
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:  # a stream of text only (a caller's StringIO)
        click.echo(plan_json(result), nl=False)
        return
    write_plan_json(result, redaction.ScrubbedBytes(binary))
    binary.flush()
