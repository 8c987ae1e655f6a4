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
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import click

from reconciler.accounts.applying import apply_fleet
from reconciler.accounts.fleet import fleet_or_plans
from reconciler.accounts.options import AccountOptions
from reconciler.accounts.saved import Carry
from reconciler.apply import DEFAULT_PARALLELISM
from reconciler.apply.lock import AccountLock
from reconciler.cli.accounts import selection_options
from reconciler.cli.approvals import approvals_options
from reconciler.cli.connection import ConnectionOptions, connection_options
from reconciler.cli.review import expect_options
from reconciler.plan import PlanOptions

if TYPE_CHECKING:  # the gate's module is imported when a command runs, not for --help
    from reconciler.accounts.approving import Gate


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


@contextmanager
def forge_lock(environ: Mapping[str, str]) -> Iterator[AccountLock | None]:
    """The forge's account lock when the environment names a forge and has its token and
    repository (`gitops.environment`: the client the approvals' reads share, closed after);
    None elsewhere (this machine's lock only)."""
    from reconciler.apply.forge_lock import ForgeLock
    from reconciler.gitops.environment import shared_forge

    with shared_forge(environ, configured=True) as records:
        notice = functools.partial(click.echo, err=True)
        yield None if records is None else ForgeLock(records, environ=environ, notice=notice)


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
@approvals_options(apply=True)
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
    gate: Gate,
    connection: ConnectionOptions,
    accounts: AccountOptions,
) -> None:
    """Apply the desired state at PATH (after a plan and a question) or a saved PLAN.

    Several accounts: a folder DIR of saved plans (`plan --all --out DIR`), or --all.
    """
    with forge_lock(os.environ) as lock:
        apply_fleet(
            fleet_or_plans(
                source, accounts, connection, ConnectionOptions, folder_when_selected=False
            ),
            auto_approve=auto_approve,
            carry=Carry(
                force,
                parallelism,
                not no_wait,
                settle_timeout.total_seconds(),
                lock_timeout=lock_timeout.total_seconds(),
                forge_lock=lock,
                gate=gate,
            ),
            plan_ttl=plan_ttl,
            fmt=fmt,
            shape=PlanOptions(frozenset(targets), frozenset(excludes), frozenset(replaces)),
            expected=(expect_pull_request, expect_head_sha, expect_files),
            connect=ConnectionOptions,
        )
