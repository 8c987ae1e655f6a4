"""`apply` over a fleet: make each account match its files or its saved plan, safely.

A fleet of one (PATH or PLAN) is applied as one account always was: from a desired-state PATH
it plans, shows the plan and asks on a terminal (`--auto-approve` skips the question; without a
terminal it refuses); from a saved PLAN (told apart by content) it re-reads the live state and
applies without asking, unless the plan is stale or too old. Either way a plan over the safety
threshold needs `--force`. The ledger is printed at the end; the exit status is 0 only when
every change was applied. Several accounts (a folder of saved plans, or a selection with
`--auto-approve`) are applied side by side (`reconciler.accounts.saved.apply_accounts`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import click

from reconciler.accounts.approving import SINGLE, Subject, plan_files, saved_policy
from reconciler.accounts.fleet import Fleet
from reconciler.accounts.saved import Carry, apply_accounts, register_header_values
from reconciler.apply import Ledger
from reconciler.apply.paying import pay, progress_steps
from reconciler.apply.running import execute, print_ledger
from reconciler.desired import DesiredState
from reconciler.errors import ReconcilerError
from reconciler.plan import Plan, PlanOptions, diff
from reconciler.plan.model import LiveState
from reconciler.plan.refresh import refresh
from reconciler.plan.resume import resume
from reconciler.plan.saved import DEFAULT_MAX_AGE, SavedPlan, is_saved_plan, load_saved_plan
from reconciler.render import renderer_for
from reconciler.render.text import Line, lines_text, payrun_lines
from reconciler.service.client import ServiceClient
from reconciler.session.account import check_saved_account
from reconciler.session.connection import Connect
from reconciler.session.plankey import plan_key
from reconciler.session.reading import file_and_account, refresh_progress
from reconciler.session.review import check_expected
from reconciler.terminal import text_look, text_width


class ApplyRefused(ReconcilerError):
    """Apply would not start: nothing was changed."""


def apply_fleet(
    fleet: Fleet,
    *,
    auto_approve: bool,
    carry: Carry,
    plan_ttl: timedelta | None,
    fmt: str,
    shape: PlanOptions,
    expected: tuple[int | None, str | None, Path | None],
    connect: Connect,
) -> None:
    """Apply each account (`carry`: how); `shape`: `--target`, `--exclude`, `--replace`;
    `expected`: the review a saved plan must have been made for."""
    if not fleet.single:
        max_age = plan_ttl or DEFAULT_MAX_AGE
        apply_accounts(
            fleet.options, fleet.path, shape, carry, max_age, auto_approve, fmt, expected, connect
        )
        return
    source, connection = fleet.path, fleet.connection
    assert source is not None and connection is not None, "a fleet of one is its PATH"
    parallelism = carry.parallelism
    saved = load_saved_plan(source) if is_saved_plan(source) else None
    if saved is None and expected != (None, None, None):
        raise ApplyRefused(
            f"--expect-pull-request, --expect-head-sha and --expect-files check a saved plan, "
            f"and {source} is a desired-state file"
        )
    if saved is not None and shape != PlanOptions():
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
    if saved is not None:
        with connection.open(read_only=False, parallelism=parallelism) as client:
            # An edited plan, another key's or account's, is refused before the refresh.
            key = plan_key(client)
            saved.verify(key)
            check_expected(saved, key, *expected)
            check_saved_account(saved, client, connection, doing="talks to")
            with carry.locked(client, connection):  # before the refresh: it sees the last apply
                with refresh_progress() as on_progress:
                    live = refresh(
                        client,
                        on_progress,
                        payruns=bool(saved.payruns),
                        parallelism=client.config.parallelism,
                    )
                plan = _resume(saved, live, client, max_age=plan_ttl or DEFAULT_MAX_AGE)
                files = plan_files(saved, expected[2])
                policy = saved_policy(saved, files, os.environ)
                subject = Subject(files, policy, live, PlanOptions(), os.environ)
                plan = carry.gated(plan, subject)
                _resumed(saved, plan)
                ledger = _carry_out(client, plan, carry, confirm=False, fmt=fmt)
                carry.record(SINGLE, plan, ledger, lambda: key, files)
    else:
        # The file is loaded while the account is read; a problem in it stops apply first.
        with (
            file_and_account(source, connection, read_only=False, parallelism=parallelism) as ready,
            carry.locked(ready.client, connection),
        ):
            policy = ready.desired.policy.approvals
            subject = Subject(source, policy, ready.live, shape, connection.env())
            plan = _plan_file(ready.desired, shape, fmt, ready.live, carry, subject)
            ledger = _carry_out(ready.client, plan, carry, confirm=not auto_approve, fmt=fmt)
            client = ready.client
            carry.record(SINGLE, plan, ledger, lambda: plan_key(client), source)
    print_ledger(ledger, fmt)
    if not ledger.complete:
        raise click.exceptions.Exit(1)


def _carry_out(
    client: ServiceClient, plan: Plan, carry: Carry, *, confirm: bool, fmt: str
) -> Ledger:
    """The plan's changes, then its payruns, after the safety check and the question."""
    if not carry.needed(plan):  # the ledger is empty and complete
        return Ledger(())
    if confirm:
        _confirm(plan)

    def pay_payruns(ledger: Ledger, phase: Callable[[str, int], None]) -> None:
        pay(
            client,
            plan,
            ledger,
            force=carry.force,
            wait=carry.wait,
            settle_timeout=carry.settle_s,
            phase=phase,
        )

    payments = progress_steps(plan, force=carry.force)
    return execute(client, plan, carry.parallelism, payments, then=pay_payruns, fmt=fmt)


def _plan_file(
    desired: DesiredState,
    options: PlanOptions,
    fmt: str,
    live: LiveState,
    carry: Carry,
    subject: Subject,
) -> Plan:
    """Plan the file against the live state, judge its payruns' approvals, and show it."""
    plan = carry.gated(diff(desired, live, options), subject)
    register_header_values(plan)
    _show(plan, fmt)
    return plan


def _resume(
    saved: SavedPlan, live: LiveState, client: ServiceClient, *, max_age: timedelta
) -> Plan:
    """The saved plan, if it still holds (`StalePlan` otherwise)."""
    plan = resume(saved, live, key=plan_key(client), environ=os.environ, max_age=max_age)
    register_header_values(plan)
    return plan


def _resumed(saved: SavedPlan, plan: Plan) -> None:
    """What applying the saved plan does, once its approvals are judged."""
    width = text_width(terminal=sys.stderr.isatty())
    opening = Line(
        f"Applying the saved plan made at {saved.created_at.isoformat()} "
        f"(reconciler {saved.tool_version}): {plan.actions_line}."
    )
    click.echo(lines_text([opening], width=width), err=True)
    if plan.payruns:  # what the checks at apply time found, before anything is paid
        click.echo(lines_text(payrun_lines(plan), width=width).lstrip("\n"), err=True)


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
