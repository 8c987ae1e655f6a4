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
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, cast

from reconciler.accounts.saved_view import read_document
from reconciler.desired.approvals_rules import approvals_problems, build_approvals
from reconciler.errors import ReconcilerError
from reconciler.gitops.statuses import DESCRIPTION_LIMIT, Statuses
from reconciler.plan.approvals import (
    ApprovalPolicy,
    MoneyKey,
    MoneyUnreadable,
    ReviewSource,
    Verdict,
    judge,
    money_of,
)
from reconciler.words import counted

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


def reviewed_of(path: Path) -> Reviewed | None:
    """What the saved plan at `path` says of its approvals: the policy it was judged by, the
    money of each payrun it pays (`money_of` of its payruns, as the plan's own) and its total,
    and the money at each commit the plan job read (`approvals.money_at`); None: it was not
    judged (no `approvals`: planned without `--approvals-from`, or before dual control). Read
    as data: the job that reads it holds no plan key, and the status it sets is advice."""
    document = read_document(path)
    kept = document.get("approvals") if isinstance(document, dict) else None
    if kept is None:
        return None
    try:
        rules = kept.get("policy")
        if rules is not None and list(approvals_problems(rules, ("approvals",))):
            raise ValueError("its policy is not an approvals policy")
        payruns = [_Paying.of(record) for record in document.get("payruns") or []]
        totals: dict[str, Decimal] = {}
        for one in payruns:
            total = sum((p.amount for p in one.payments), Decimal("0.00"))
            totals[one.payrun_id] = totals.get(one.payrun_id, Decimal("0.00")) + total
        money_at = {
            str(commit): {str(k): str(v) for k, v in dict(found).items()}
            for commit, found in dict(kept.get("money_at") or {}).items()
        }
        head = str((document.get("review") or {}).get("head_sha") or "")
    except (AttributeError, KeyError, TypeError, ValueError, InvalidOperation) as error:
        raise ReconcilerError(f"{path}: its approvals cannot be read ({error})") from None
    money = money_of(cast(Any, _Payruns(tuple(payruns))))
    return Reviewed(build_approvals(rules), money, totals, money_at, head)


@dataclass(frozen=True, slots=True)
class _Payment:
    email: str
    amount: Decimal
    description: str


@dataclass(frozen=True, slots=True)
class _Paying:
    """A saved plan's payrun record, as `money_of` reads a payrun to pay."""

    payrun_id: str
    part: int | None
    agreements: tuple[str | None, ...]
    payments: tuple[_Payment, ...]

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> _Paying:
        payments = [p for p in record["payments"] if isinstance(p, Mapping)]
        return cls(
            str(record["id"]),
            record.get("part") if isinstance(record.get("part"), int) else None,
            tuple(p.get("agreementId") for p in payments),
            tuple(
                _Payment(str(p["email"]), Decimal(str(p["amount"])), str(p["description"]))
                for p in payments
            ),
        )


@dataclass(frozen=True, slots=True)
class _Payruns:
    payruns: tuple[_Paying, ...]


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


#: A verdict and the account it is of ('' for a single desired state).
Judged = tuple[str, Verdict]


def describe(verdicts: Sequence[Judged]) -> tuple[str, str]:
    """The state and what it says: the first payrun that waits, and what it needs and has;
    else who approved (or that no payrun needs an approval)."""
    waiting = [(account, v) for account, v in verdicts if not v.covered]
    if waiting:
        account, first = waiting[0]
        more = f" (and {counted(len(waiting) - 1)} more)" if len(waiting) > 1 else ""
        where = f"{account}: " if account else ""
        return "pending", f'{where}paylist["{first.payrun}"] {first.needs_has()}{more}'
    approved = sorted({a.login for _, v in verdicts for a in v.approvals})
    if approved:
        return "success", f"approved by {', '.join(approved)}"
    if verdicts:
        return "success", "no payrun needs an approval"
    return "success", "no payrun to pay"


def set_approvals_status(
    forge: Statuses, sha: str, verdicts: Sequence[Judged], context: str, target_url: str
) -> str:
    """POST the status on `sha`; what it says."""
    state, description = describe(verdicts)
    if len(description) > DESCRIPTION_LIMIT:
        description = description[: DESCRIPTION_LIMIT - 1] + "…"
    forge.set_status(sha, state, context, description, target_url)
    return f"{state}: {description}"


#: What the status says when the head has no reviewed plan (yet).
NOT_PLANNED = "the head's reviewed plan is not found (not planned yet, or it failed)"


def status_from_plans(
    forge: Statuses, source: ReviewSource, plans: Path, sha: str, context: str, target_url: str
) -> str:
    """Set the status on `sha` from the reviewed plan `plans` (or a folder of accounts'
    plans, `<name>.json` each) and the reviews `source` reads now; what it says."""
    files = sorted(plans.glob("*.json")) if plans.is_dir() else [plans]
    if not any(path.is_file() for path in files):
        forge.set_status(sha, "pending", context, NOT_PLANNED, target_url)
        return f"pending: {NOT_PLANNED}"
    judged: list[Judged] = []
    for path in files:
        reviewed = reviewed_of(path)
        if reviewed is not None:
            account = path.stem if plans.is_dir() else ""
            judged += [(account, v) for v in judge_again(reviewed, source).values()]
    return set_approvals_status(forge, sha, judged, context, target_url)
