"""The approvals' commit status on a change request's head: `reconciler/approvals` (with a key:
`reconciler/approvals/<key>`), pending until every payrun to pay has the approvals its policy
asks for, success when each has; branch protection can require it.

It is advice for the reviewer, never the gate: a pull request's own workflow could post a
status of that name, so `apply` reads the reviews again at the merge, before any write. It is
set by the plan job (from the verdicts the saved plan keeps) and again on each review (GitHub's
`pull_request_review` event, with no secret: the reviews read with the workflow's token, the
money to pay from the head's reviewed plan). On a review, an approval counts when it is of a
commit whose money the reviewed plan recorded (the plan job read it from git), or of the head;
any other is checked at the merge, where the whole history is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from reconciler.gitops.statuses import DESCRIPTION_LIMIT, Statuses
from reconciler.plan.approvals import (
    ApprovalPolicy,
    MoneyKey,
    MoneyUnreadable,
    ReviewSource,
    Verdict,
    judge,
)

#: The status's name (with a key: `reconciler/approvals/<key>`).
CONTEXT = "reconciler/approvals"
#: Why an approval of a commit the reviewed plan did not read counts only at the merge.
AT_THE_MERGE = "checked at the merge"


def context_of(key: str | None) -> str:
    """`reconciler/approvals`, or `reconciler/approvals/<key>`."""
    return f"{CONTEXT}/{key}" if key else CONTEXT


@dataclass(frozen=True, slots=True)
class Reviewed:
    """What a reviewed plan says of its approvals: the policy in force, the money of each
    payrun to pay and its total, and the money at each commit the plan job read."""

    policy: ApprovalPolicy | None
    money: Mapping[str, MoneyKey]
    totals: Mapping[str, Decimal]
    money_at: Mapping[str, Mapping[str, MoneyKey]]
    head: str


def judge_again(reviewed: Reviewed, source: ReviewSource) -> dict[str, Verdict]:
    """The verdicts with the reviews as they are now: an approval of the head, or of a commit
    whose money the plan recorded, is judged; any other is checked at the merge."""

    def money_at(commit: str) -> Mapping[str, MoneyKey]:
        if commit in reviewed.money_at:
            return reviewed.money_at[commit]
        if commit == reviewed.head:
            return reviewed.money
        raise MoneyUnreadable(AT_THE_MERGE)

    return judge(
        reviewed.policy, reviewed.money, reviewed.totals, source.requests(), money_at,
        source.members,
    )  # fmt: skip


def describe(verdicts: Sequence[Verdict]) -> tuple[str, str]:
    """The state and what it says: the first payrun that waits, and what it needs and has;
    else who approved (or that no payrun needs an approval)."""
    waiting = [v for v in verdicts if not v.covered]
    if waiting:
        first = waiting[0]
        more = f" (and {len(waiting) - 1} more)" if len(waiting) > 1 else ""
        return "pending", f'paylist["{first.payrun}"] {first.needs_has()}{more}'
    approved = sorted({a.login for v in verdicts for a in v.approvals})
    if approved:
        return "success", f"approved by {', '.join(approved)}"
    if verdicts:
        return "success", "no payrun needs an approval"
    return "success", "no payrun to pay"


def set_approvals_status(
    forge: Statuses, sha: str, verdicts: Sequence[Verdict], context: str, target_url: str
) -> str:
    """POST the status on `sha`; what it says."""
    state, description = describe(verdicts)
    if len(description) > DESCRIPTION_LIMIT:
        description = description[: DESCRIPTION_LIMIT - 1] + "…"
    forge.set_status(sha, state, context, description, target_url)
    return f"{state}: {description}"
