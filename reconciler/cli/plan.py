"""`reconciler plan` and `reconciler drift`: refresh, diff, print; never write to the service."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import click

from reconciler import __version__, logs, redaction
from reconciler.cli import ending
from reconciler.cli.account import saved_plan_account
from reconciler.cli.accounts import (
    AccountOptions,
    exit_for,
    need_path,
    refuse_connection,
    refuse_path,
    selection_options,
)
from reconciler.cli.accounts_plan import look_for, plan_accounts, print_plans
from reconciler.cli.connection import ConnectionOptions, connection_options
from reconciler.cli.moment import Moment
from reconciler.cli.reading import collector_paused, file_and_account
from reconciler.cli.review import review_options, review_planned
from reconciler.cli.terminal import text_look
from reconciler.desired.model import DesiredState
from reconciler.plan import Plan, PlanOptions, diff
from reconciler.plan.account import Account
from reconciler.plan.model import LiveState
from reconciler.plan.money import DEFAULT_STUCK_AFTER, DEFAULT_WINDOW, MoneyWindow
from reconciler.plan.saved import saved_plan_document, write_saved_plan
from reconciler.plan.signing import PlanKey
from reconciler.render import FORMATS, renderer_for
from reconciler.render.json import plan_json, write_plan_json
from reconciler.words import plural

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


@dataclass(frozen=True, slots=True)
class Planned:
    """A plan, the live state it was made against, and what saving it needs."""

    plan: Plan
    live: LiveState
    scope_prefix: str | None
    key: PlanKey | None  # only when the plan is to be saved
    max_payout: Decimal | None = None
    account: Account | None = None  # only when the plan is to be saved
    digests: tuple[tuple[str, str], ...] = ()  # of the bytes planned: `DesiredState.digests`


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


def write_planned(
    out: Path, planned: Planned, sources: list[str], pull_request: tuple[int, str] | None
) -> None:
    """Sign `planned` (made with `plan_path(keyed=True)`) and write it to `out`, recording
    `sources` and the review: the files' bytes as planned, and `pull_request`, if any."""
    assert planned.key is not None and planned.account is not None, "plan_path(keyed=True)"
    document = saved_plan_document(
        planned.plan,
        planned.live,
        key=planned.key,
        account=planned.account,
        review=review_planned(planned.digests, planned.key, pull_request),
        created_at=datetime.now(UTC),
        tool_version=__version__,
        sources=sources,
        scope_prefix=planned.scope_prefix,
        max_payout=planned.max_payout,
    )
    write_saved_plan(out, document)


def plan_path(
    path: Path,
    options: PlanOptions,
    connection: ConnectionOptions,
    *,
    keyed: bool = False,
    money_since: datetime | None = None,
    top_ups: bool = False,
    progress: Callable[[int], None] | None = None,
) -> Planned:
    """Load and validate PATH while the live account is refreshed read-only, and diff them;
    `top_ups`: the money report counts the journal's top-ups (`drift`'s)."""
    with collector_paused():

        def money(desired: DesiredState) -> MoneyWindow | None:
            return money_window(desired, money_since, top_ups=top_ups)

        with file_and_account(
            path, connection, read_only=True, keyed=keyed, money=money, progress=progress
        ) as ready:
            desired, live = ready.desired, ready.live
            account = None
            if keyed:  # the wallet the payruns read already confirms a --client-id
                account = saved_plan_account(ready.client, connection, wallet=live.wallet)
        _log.info("refreshed", agreements=len(live.workers), webhook=live.webhook is not None)
        result = diff(desired, live, options)
    ending.hold(result)  # nor the plan made of them
    _log.info("planned", **result.summary.as_dict())
    return Planned(
        result,
        live,
        desired.scope_prefix,
        ready.key,
        desired.policy.max_payout,
        account,
        desired.digests,
    )


def money_window(
    desired: DesiredState, since: datetime | None, *, top_ups: bool = False
) -> MoneyWindow | None:
    """The money window, or None when nothing of the money is to be read: no payruns, no
    `--money-since`, no `policy.moneyWindow`; `top_ups`: the journal's are read too."""
    policy = desired.policy
    if not desired.payruns and since is None and policy.money_window is None:
        return None
    if since is not None and since > datetime.now(UTC):
        raise click.BadParameter(
            f"{since.isoformat()} is in the future: no paylist is made after it yet",
            param_hint="--money-since",
        )
    stuck_after = policy.money_stuck_after or DEFAULT_STUCK_AFTER
    if since is not None:
        return MoneyWindow(since=since, stuck_after=stuck_after, top_ups=top_ups)
    window = policy.money_window or DEFAULT_WINDOW
    days, hours = window.days, window.seconds // 3600
    count, unit = (days, "day") if not hours else (days * 24 + hours, "hour")
    relative = f"the last {plural(count, unit)}"
    return MoneyWindow(datetime.now(UTC) - window, stuck_after, relative, top_ups)


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
