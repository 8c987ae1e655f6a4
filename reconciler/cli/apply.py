"""`reconciler apply PATH|PLAN`: make the account match the file or a saved plan, safely.

From a desired-state PATH it plans, shows the plan and asks on a terminal (`--auto-approve`
skips the question; without a terminal it refuses). From a saved PLAN (told apart by content)
it re-reads the live state and applies without asking, unless the plan is stale or too old.
Either way a plan over the safety threshold needs `--force`. The ledger is printed at the end;
the exit status is 0 only when every change was applied.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar

import click

from reconciler import logs
from reconciler.accounts.options import AccountOptions
from reconciler.accounts.saved import is_plans_folder
from reconciler.apply import DEFAULT_PARALLELISM, Ledger
from reconciler.apply.lock import hold
from reconciler.apply.paying import pay, progress_steps
from reconciler.apply.running import execute, print_ledger
from reconciler.cli.accounts import need_path, refuse_connection, refuse_path, selection_options
from reconciler.cli.connection import ConnectionOptions, connection_options, open_client
from reconciler.cli.review import expect_options
from reconciler.desired import DesiredState
from reconciler.errors import ReconcilerError
from reconciler.plan import Plan, PlanOptions, WebhookCreate, WebhookUpdate, diff
from reconciler.plan.model import LiveState
from reconciler.plan.payruns import REFUSED
from reconciler.plan.refresh import refresh
from reconciler.plan.resume import resume
from reconciler.plan.saved import DEFAULT_MAX_AGE, SavedPlan, is_saved_plan, load_saved_plan
from reconciler.render import renderer_for
from reconciler.render.text import Line, lines_text, payrun_lines
from reconciler.service.client import ServiceClient
from reconciler.session.account import check_saved_account, current_account
from reconciler.session.plankey import plan_key
from reconciler.session.reading import file_and_account, refresh_progress
from reconciler.session.review import check_expected
from reconciler.terminal import text_look, text_width

_log = logs.get_logger("reconciler.apply")


class ApplyRefused(ReconcilerError):
    """Apply would not start: nothing was changed."""


class Duration(click.ParamType):  # type: ignore[type-arg]
    """A duration such as `90s`, `30m`, `1h`, `1h30m` or `2d` (a bare number is seconds);
    `zero`: 0 too (`--lock-timeout 0s`, as Terraform's)."""

    name = "duration"
    MOST: ClassVar[timedelta] = timedelta(days=366)
    _PART = re.compile(r"(\d+(?:\.\d+)?)([dhms])")
    _UNITS: ClassVar[dict[str, int]] = {"d": 86400, "h": 3600, "m": 60, "s": 1}

    def __init__(self, *, zero: bool = False) -> None:
        self.zero = zero

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, timedelta):
            return value
        text = str(value).strip().lower()
        seconds: float | None = None
        if re.fullmatch(r"\d+(\.\d+)?", text):
            seconds = float(text)
        elif text and self._PART.sub("", text) == "":
            seconds = sum(
                float(number) * self._UNITS[unit] for number, unit in self._PART.findall(text)
            )
        if seconds is None or seconds < 0 or (seconds == 0 and not self.zero):
            self.fail(
                f"{value!r:.40} is not a positive duration such as 90s, 30m, 1h or 1h30m", param
            )
        if seconds > self.MOST.total_seconds():
            self.fail(f"{value!r:.40} is longer than {self.MOST.days} days", param)
        return timedelta(seconds=seconds)


@click.command("apply")
@click.argument(
    "source", metavar="PATH|PLAN|DIR", type=click.Path(exists=True, path_type=Path), required=False
)
@click.option("--auto-approve", is_flag=True, help="Apply a planned PATH without asking.")
@click.option(
    "--force",
    is_flag=True,
    help="Apply a plan over the safety threshold (too many inactivations, or every owned worker).",
)
@click.option(
    "--parallelism",
    type=click.IntRange(1, 64),
    default=DEFAULT_PARALLELISM,
    show_default=True,
    help="How many requests run at once (inactivations, and invitation batches of 100).",
)
@click.option(
    "--settle-timeout",
    type=Duration(),
    default="10m",
    show_default=True,
    help="How long to follow a payrun's payments until none is PENDING.",
)
@click.option("--no-wait", is_flag=True, help="Stop following payruns once they are accepted.")
@click.option(
    "--lock-timeout",
    type=Duration(zero=True),
    default="0s",
    show_default=True,
    help="How long to wait for another apply of the account to end (0s: refuse at once).",
)
@click.option(
    "--plan-ttl",
    type=Duration(),
    default=None,
    help="How old a saved PLAN may be (default 1h): 90s, 30m, 1h30m...",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="The ledger at the end: a table, or JSON on stdout (the plan then goes to stderr).",
)
@click.option(
    "--target",
    "targets",
    multiple=True,
    metavar="ID",
    help="Apply only this externalId (or `webhook`); repeatable. PATH only.",
)
@click.option(
    "--exclude",
    "excludes",
    multiple=True,
    metavar="ID",
    help="Leave this externalId out. PATH only.",
)
@click.option(
    "--replace",
    "replaces",
    multiple=True,
    metavar="ID",
    help="Inactivate this worker and invite it again (the only fix for drift). PATH only.",
)
@expect_options
@connection_options
@selection_options
def apply(
    source: Path | None,
    auto_approve: bool,
    force: bool,
    parallelism: int,
    settle_timeout: timedelta,
    no_wait: bool,
    lock_timeout: timedelta,
    plan_ttl: timedelta | None,
    fmt: str,
    targets: tuple[str, ...],
    excludes: tuple[str, ...],
    replaces: tuple[str, ...],
    expect_pull_request: int | None,
    expect_head_sha: str | None,
    expect_files: Path | None,
    connection: ConnectionOptions,
    accounts: AccountOptions,
) -> None:
    """Apply the desired state at PATH (after a plan and a question) or a saved PLAN.

    Several accounts: a folder DIR of saved plans (`plan --all --out DIR`), or --all.
    """
    if accounts.active or (source is not None and is_plans_folder(source)):
        from reconciler.accounts.saved import Carry, apply_accounts

        refuse_connection(connection)
        if source is not None and not is_plans_folder(source):
            refuse_path(source, accounts)
        shape = PlanOptions(frozenset(targets), frozenset(excludes), frozenset(replaces))
        carry = Carry(
            force,
            parallelism,
            not no_wait,
            settle_timeout.total_seconds(),
            lock_timeout=lock_timeout.total_seconds(),
        )
        max_age = plan_ttl or DEFAULT_MAX_AGE
        expected = (expect_pull_request, expect_head_sha, expect_files)
        apply_accounts(
            accounts, source, shape, carry, max_age, auto_approve, fmt, expected, ConnectionOptions
        )
        return
    source = need_path(source)
    saved = load_saved_plan(source) if is_saved_plan(source) else None
    expected = (expect_pull_request, expect_head_sha, expect_files)
    if saved is None and expected != (None, None, None):
        raise ApplyRefused(
            f"--expect-pull-request, --expect-head-sha and --expect-files check a saved plan, "
            f"and {source} is a desired-state file"
        )
    if saved is not None and (targets or excludes or replaces):
        raise ApplyRefused(
            "--target, --exclude and --replace shape a plan; a saved plan is already shaped",
            hint="pass them to `reconciler plan --out` instead",
        )
    if saved is None and plan_ttl is not None:
        raise ApplyRefused(f"--plan-ttl is for a saved plan, and {source} is a desired-state file")
    if saved is None and not auto_approve and not sys.stdin.isatty():
        raise ApplyRefused(
            "no terminal to ask for confirmation on, and --auto-approve was not given: "
            "nothing was changed",
            hint="review with `reconciler plan`, then apply with --auto-approve, or apply a "
            "saved plan made with `reconciler plan --out`",
        )
    settle_s = settle_timeout.total_seconds()
    locked = functools.partial(_locked, timeout=lock_timeout.total_seconds())
    carry_out = functools.partial(
        _carry_out,
        force=force,
        parallelism=parallelism,
        wait=not no_wait,
        settle_s=settle_s,
        fmt=fmt,
    )
    if saved is not None:
        with open_client(connection, read_only=False, parallelism=parallelism) as client:
            # An edited plan, another key's or account's, is refused before the refresh.
            key = plan_key(client)
            saved.verify(key)
            check_expected(saved, key, *expected)
            check_saved_account(saved, client, connection, doing="talks to")
            with locked(client, connection):  # before the refresh: it sees the last apply
                with refresh_progress() as on_progress:
                    live = refresh(
                        client,
                        on_progress,
                        payruns=bool(saved.payruns),
                        parallelism=client.config.parallelism,
                    )
                plan = _resume(saved, live, client, max_age=plan_ttl or DEFAULT_MAX_AGE)
                ledger = carry_out(client, plan, confirm=False)
    else:
        options = PlanOptions(
            targets=frozenset(targets), excludes=frozenset(excludes), replaces=frozenset(replaces)
        )
        # The file is loaded while the account is read; a problem in it stops apply first.
        with (
            file_and_account(source, connection, read_only=False, parallelism=parallelism) as ready,
            locked(ready.client, connection),
        ):
            plan = _plan_file(ready.desired, options, fmt, ready.live)
            ledger = carry_out(ready.client, plan, confirm=not auto_approve)
    print_ledger(ledger, fmt)
    if not ledger.complete:
        raise click.exceptions.Exit(1)


def _carry_out(
    client: ServiceClient,
    plan: Plan,
    *,
    confirm: bool,
    force: bool,
    parallelism: int,
    wait: bool,
    settle_s: float,
    fmt: str,
) -> Ledger:
    """The plan's changes, then its payruns, after the safety check and the question."""
    refused = any(decision.state == REFUSED for decision in plan.payruns)
    if not plan.has_changes and not refused:  # the ledger is empty and complete
        return Ledger(())
    plan.raise_if_unsafe(force)
    if confirm:
        _confirm(plan)

    def pay_payruns(ledger: Ledger, phase: Callable[[str, int], None]) -> None:
        pay(client, plan, ledger, force=force, wait=wait, settle_timeout=settle_s, phase=phase)

    payments = progress_steps(plan, force=force)
    return execute(client, plan, parallelism, payments, then=pay_payruns, fmt=fmt)


def _locked(
    client: ServiceClient, connection: ConnectionOptions, *, timeout: float
) -> AbstractContextManager[None]:
    """The account's lock (`reconciler.apply.lock`), held from before the first write to the
    ledger: a second apply of the account refuses, or waits up to `timeout` seconds."""
    return hold(
        current_account(client, connection),
        timeout=timeout,
        notice=lambda text: click.echo(text, err=True),
    )


def _plan_file(desired: DesiredState, options: PlanOptions, fmt: str, live: LiveState) -> Plan:
    """Plan the file against the live state, and show it."""
    plan = diff(desired, live, options)
    _register_header_values(plan)
    _show(plan, fmt)
    return plan


def _resume(
    saved: SavedPlan, live: LiveState, client: ServiceClient, *, max_age: timedelta
) -> Plan:
    """The saved plan, if it still holds (`StalePlan` otherwise)."""
    plan = resume(saved, live, key=plan_key(client), environ=os.environ, max_age=max_age)
    _register_header_values(plan)
    width = text_width(terminal=sys.stderr.isatty())
    opening = Line(
        f"Applying the saved plan made at {saved.created_at.isoformat()} "
        f"(reconciler {saved.tool_version}): {plan.actions_line}."
    )
    click.echo(lines_text([opening], width=width), err=True)
    if plan.payruns:  # what the checks at apply time found, before anything is paid
        click.echo(lines_text(payrun_lines(plan), width=width).lstrip("\n"), err=True)
    return plan


def _register_header_values(plan: Plan) -> None:
    """Header values go into the request, so no log line or error may ever show them."""
    for change in plan.changes:
        if isinstance(change, WebhookCreate | WebhookUpdate):
            for header in change.webhook.headers:
                logs.register_secret(header.value.reveal())


def _show(plan: Plan, fmt: str) -> None:
    """The plan as text: on stdout, or on stderr when stdout carries the JSON ledger."""
    to_stderr = fmt == "json"
    stream = sys.stderr if to_stderr else sys.stdout
    color, width = text_look(stream)
    text = renderer_for("text", color=color, width=width).render(plan)
    click.echo(text, nl=False, err=to_stderr, color=color)


def _confirm(plan: Plan) -> None:
    """Ask on the terminal, as Terraform does: only `yes` applies."""
    click.echo(
        f"\nDo you want to perform these actions? ({plan.actions_line})\n"
        "  Only 'yes' will be accepted to approve.\n",
        err=True,
    )
    try:
        answer = click.prompt("  Enter a value", default="", show_default=False, err=True)
    except click.exceptions.Abort:
        answer = ""
    if answer.strip() != "yes":
        raise ApplyRefused("apply cancelled: nothing was changed")
