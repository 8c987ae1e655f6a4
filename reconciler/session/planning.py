"""One account planned: its file and its live state read at once, diffed, and the plan signed
and written when it is to be saved.

`plan`, `drift`, `comment` and each account of several (`reconciler.accounts.saved`) plan
this way; the commands only print what it made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import click

from reconciler import __version__, ending, logs
from reconciler.desired.approvals import ApprovalPolicy
from reconciler.desired.model import DesiredState
from reconciler.plan import Plan, PlanOptions, diff
from reconciler.plan.account import Account
from reconciler.plan.model import LiveState
from reconciler.plan.money import DEFAULT_STUCK_AFTER, DEFAULT_WINDOW, MoneyWindow
from reconciler.plan.saved import saved_plan_document, write_saved_plan
from reconciler.plan.signing import PlanKey
from reconciler.session.account import saved_plan_account
from reconciler.session.collector import collector_paused
from reconciler.session.connection import Connection
from reconciler.session.reading import file_and_account
from reconciler.session.review import review_planned
from reconciler.words import plural

_log = logs.get_logger("reconciler.plan")


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
    #: The files' `policy.approvals` (an account's entry may set it instead: the caller's).
    approvals: ApprovalPolicy | None = None


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
    connection: Connection,
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
        desired.policy.approvals,
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
