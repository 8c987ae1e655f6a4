"""The approvals gate of `apply`: right before any write, the reviews are read again and each
payrun to pay is judged under the policy in force (issue 46, "Money under dual control").

- The policy in force is the one at the account's last successful apply (`--policy-at SHA`:
  its files' and its entry's there; `none`: never applied, so the first policy needs no
  approval; without the option, the files' own). A commit git cannot read there: the record
  is unknown, and every payrun waits.
- A change of `policy.approvals` since then needs the approvals the strictest rule of the policy
  in force asks for, on the change requests in range; without them nothing at all is applied
  (`PolicyChangeWaits`, exit status 4), so nobody loosens the rule and then pays on it.
- Each payrun to pay is judged by `reconciler.plan.approvals.judge` (the money at each approved
  commit read from git, against the live account this apply read); one not covered WAITS:
  nothing of it is sent, the other changes go. No forge to read reviews from, or reviews that
  could not be read: every payrun under a policy waits, saying why. `--force` changes nothing
  here.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, cast

from reconciler.accounts.file import AccountEntry, approvals_in_force
from reconciler.desired import load_desired_state
from reconciler.desired.approvals import ApprovalPolicy
from reconciler.desired.approvals_rules import approvals_problems, build_approvals
from reconciler.errors import EXIT_POLICY_CHANGE, ReconcilerError, Refused
from reconciler.plan import Plan, PlanOptions
from reconciler.plan.approvals import (
    NO_POLICY,
    Approvals,
    MoneyKey,
    MoneyUnreadable,
    RequestFacts,
    ReviewSource,
    Verdict,
    held,
    judge,
    judge_change,
    money_of,
    to_judge,
    unjudged,
)
from reconciler.plan.model import LiveState
from reconciler.plan.saved import SavedPlan
from reconciler.session.approvals import FilesUnreadable, files_at, money_reader, policy_at
from reconciler.words import counted

#: `--policy-at none`: the account was never applied, so no policy is in force yet.
NEVER_APPLIED = "none"
NO_FORGE = (
    "no forge to read reviews from: holding the service token and the plan key is not an approval"
)
#: The account name of a single PATH or PLAN in its evidence records (`<account>/<key>.json`).
SINGLE = "default"


class PolicyChangeWaits(Refused):
    """`policy.approvals` changed since the last apply without the approvals the policy in
    force asks for: nothing was applied (the merge stays pending)."""

    exit_code = EXIT_POLICY_CHANGE


#: How the command line opens the forge's reviews of the change requests: the source (None:
#: no forge) or why it could not be opened. A module's function, so a gate can be pickled to
#: the processes that plan accounts side by side.
OpenReviews = Callable[[Sequence[int]], tuple[ReviewSource | None, str | None]]


@dataclass(frozen=True, slots=True)
class Gate:
    """What `apply` was told of the change requests: `--approvals-from` (their numbers),
    `--policy-at` (SHA, `none`, or None: the files' own policy is in force), `--run-url`,
    `--records-out`, and how to open the forge's reviews (None: there is no forge)."""

    requests: tuple[int, ...] = ()
    policy_at: str | None = None
    run_url: str | None = None
    records_out: Path | None = None
    reviews: OpenReviews | None = None

    @contextmanager
    def opened(self) -> Iterator[tuple[ReviewSource | None, str | None]]:
        """The reviews, read afresh for each account (closed after), or why there are none."""
        source, unreadable = self.reviews(self.requests) if self.reviews else (None, None)
        try:
            yield source, unreadable
        finally:
            close = getattr(source, "close", None)
            if callable(close):
                close()


@dataclass(frozen=True, slots=True)
class Subject:
    """The account the gate judges: its files (a file or a folder; None: not known to this
    apply), its policy now (`approvals_in_force` of its files and entry), the live state the
    apply read and the plan's options (the money at a commit is planned against the same),
    and, for an account of the accounts file, its name and that file."""

    files: Path | None
    policy: ApprovalPolicy | None
    live: LiveState
    options: PlanOptions
    environ: Mapping[str, str]
    account: str | None = None
    accounts_file: Path | None = None

    def where(self) -> str:
        """`policy.approvals of workforce.yaml`, or of an account."""
        if self.account is not None:
            return f"account {self.account}'s policy.approvals"
        return f"policy.approvals of {self.files}" if self.files else "policy.approvals"

    def policy_at(self, commit: str) -> ApprovalPolicy | None:
        """The policy as `commit` holds it (files and entry); `FilesUnreadable` when git cannot
        say."""
        if self.files is None:
            raise FilesUnreadable("the plan's files are not known to this apply")
        files = policy_at(self.files, commit, self.environ)
        entry = None
        if self.account is not None and self.accounts_file is not None:
            entry = _entry_policy_at(self.accounts_file, commit, self.account)
        if entry is not None and files is not None:
            raise FilesUnreadable(
                f"at {commit[:12]} both account {self.account}'s entry and its files set "
                "policy.approvals"
            )
        return entry if entry is not None else files


def plan_files(saved: SavedPlan, given: Path | None) -> Path | None:
    """The files a saved plan was made from: `--expect-files`, else its one source file (or
    the folder of its sources); None when it names none."""
    if given is not None:
        return given
    sources = [Path(source) for source in saved.sources if not source.startswith("account:")]
    if not sources:
        return None
    if len(sources) == 1:
        return sources[0]
    parents = {source.parent for source in sources}
    return parents.pop() if len(parents) == 1 else None


def saved_policy(
    saved: SavedPlan,
    files: Path | None,
    environ: Mapping[str, str],
    entry: AccountEntry | None = None,
    accounts_path: Path | None = None,
) -> ApprovalPolicy | None:
    """The policy a saved plan is applied under: the files' (and the entry's) in the checkout,
    as they will be in force once this merge applies (so a merge that loosens the policy is
    judged as loosening it, whatever the plan recorded); only where the files are not known
    to this apply, the one the plan records (signed with it)."""
    if files is None:
        if saved.approvals is not None:
            return build_approvals(saved.approvals.get("policy"))
        return entry.approvals if entry is not None else None
    desired = load_desired_state(files, environ, read_variables=False)
    if entry is None:
        return desired.policy.approvals
    return approvals_in_force(entry, accounts_path, desired.policy.approvals)


def _entry_policy_at(accounts_file: Path, commit: str, account: str) -> ApprovalPolicy | None:
    """The account's entry's `policy.approvals` in the accounts file as `commit` holds it."""
    from reconciler.accounts.file import InvalidAccountsFile, load_accounts_file

    with tempfile.TemporaryDirectory(prefix="reconciler-at-") as folder:
        where = files_at(accounts_file, commit, Path(folder))
        if where is None:
            return None
        try:
            entry = load_accounts_file(where).named(account)
        except InvalidAccountsFile:
            raise FilesUnreadable(f"the accounts file at {commit[:12]} is invalid") from None
    return entry.approvals if entry is not None else None


def gated(gate: Gate | None, plan: Plan, subject: Subject, *, hold: bool = True) -> Plan:
    """The plan with each payrun its approvals do not cover WAITING, and its verdicts; raises
    `PolicyChangeWaits` when the policy changed without the approvals it needs. Without
    `hold` (`plan`, for the comment) the verdicts are only recorded: the payruns stay to pay,
    and a policy change is not checked (apply checks it at the merge)."""
    gate = gate or Gate()
    if not hold:
        return _judged_only(gate, plan, subject)
    with gate.opened() as (source, unreadable):
        return _gated(gate, plan, subject, _Reviews(source, unreadable))


@dataclass(frozen=True, slots=True)
class _Reviews:
    source: ReviewSource | None
    unreadable: str | None


def _gated(gate: Gate, plan: Plan, subject: Subject, reviews: _Reviews) -> Plan:
    in_force, unknown = _in_force(gate, subject)
    money, totals = to_judge(plan.payruns)
    if unknown is not None:
        why = f"the policy in force is unknown ({unknown}): payruns are refused"
        policy = subject.policy or in_force
        verdicts = unjudged(policy, money, totals, why, every=True)
        return _with(plan, policy, verdicts, gate, why)
    if in_force is not None and in_force != subject.policy:
        _check_change(gate, subject, in_force, reviews)
    policy = subject.policy
    if policy is None:
        return _unguarded(plan, money)
    if not money:
        return replace(plan, approvals=Approvals(policy, requests=gate.requests))
    source = reviews.source
    if source is None:
        why = reviews.unreadable or f"{NO_FORGE} ({subject.where()})"
        return _with(plan, policy, unjudged(policy, money, totals, why), gate, why)
    money_at = _Remembered(
        money_reader(subject.files, subject.live, subject.options, subject.environ)
    )
    try:
        requests = source.requests()
        verdicts = judge(policy, money, totals, requests, money_at, source.members)
    except ReconcilerError as error:
        why = f"refused: the reviews could not be read ({error.one_line()})"
        return _with(plan, policy, unjudged(policy, money, totals, why), gate, why)
    return _with(plan, policy, verdicts, gate, None, money_at.known, tuple(requests))


def _judged_only(gate: Gate, plan: Plan, subject: Subject) -> Plan:
    """`plan`'s verdicts: with `--approvals-from`, read from the forge; else "checked at the
    merge" (the payruns stay to pay either way)."""
    policy = subject.policy
    money, totals = to_judge(plan.payruns)
    if policy is None:
        return _unguarded(plan, money)
    if not gate.requests or not money:
        note = "checked at the merge" if money else None
        verdicts = unjudged(policy, money, totals, note or "")
        view = Approvals(policy, tuple(verdicts.values()), note, gate.requests)
        return replace(plan, approvals=view)
    judged = gated(gate, plan, replace(subject, policy=policy))
    assert judged.approvals is not None
    return replace(plan, approvals=judged.approvals)


def _unguarded(plan: Plan, money: Mapping[str, str]) -> Plan:
    """No approvals policy: with payruns to pay, the risk that any merge pays them; else the
    plan as it is (nothing to say)."""
    return replace(plan, approvals=Approvals(None, note=NO_POLICY)) if money else plan


def _in_force(gate: Gate, subject: Subject) -> tuple[ApprovalPolicy | None, str | None]:
    """The policy in force, or why it is unknown."""
    if gate.policy_at is None:
        return subject.policy, None
    if gate.policy_at == NEVER_APPLIED:
        return None, None
    try:
        return subject.policy_at(gate.policy_at), None
    except FilesUnreadable as error:
        return None, f"the last apply's commit {gate.policy_at[:12]}: {error.message}"


def _check_change(
    gate: Gate, subject: Subject, in_force: ApprovalPolicy, reviews: _Reviews
) -> None:
    """Refuse the whole apply unless the change of the policy has the approvals the strictest
    rule of the policy in force asks for."""
    strictest = in_force.strictest()
    what = (
        f"{subject.where()} changed since the last apply ({str(gate.policy_at)[:12]}), and the "
        f"change needs the approvals of the policy in force: {strictest.needs()}"
    )
    source = reviews.source
    if source is None:
        reason = reviews.unreadable or NO_FORGE
        raise PolicyChangeWaits(f"{what}; {reason}: nothing was applied")
    try:
        requests: Sequence[RequestFacts] = source.requests()

        def same_at(commit: str) -> bool:
            try:
                return subject.policy_at(commit) == subject.policy
            except FilesUnreadable:
                return False

        verdict = judge_change(
            strictest,
            requests,
            source.members,
            subject="policy.approvals",
            same_at=same_at,
        )
    except ReconcilerError as error:
        raise PolicyChangeWaits(
            f"{what}; the reviews could not be read ({error.one_line()}): nothing was applied"
        ) from None
    if not verdict.covered:
        if gate.records_out is not None:  # the outcome note says who must approve
            from reconciler.accounts.records import write_verdicts

            view = {"policy": in_force.as_list(), "verdicts": [verdict.as_dict()]}
            write_verdicts(gate.records_out, subject.account or SINGLE, view)
        why = "; ".join(verdict.not_counted)
        raise PolicyChangeWaits(
            f"{what}: it has {verdict.needs_has()}, so nothing was applied"
            + (f" (not counted: {why})" if why else ""),
            hint="approve the pull request that changes policy.approvals as the policy in "
            "force asks; the merge stays pending until then",
        )


def _with(
    plan: Plan,
    policy: ApprovalPolicy | None,
    verdicts: Mapping[str, Verdict],
    gate: Gate,
    note: str | None,
    money_at: Mapping[str, Mapping[str, str]] | None = None,
    facts: tuple[RequestFacts, ...] = (),
) -> Plan:
    view = Approvals(
        policy, tuple(verdicts.values()), note, gate.requests, dict(money_at or {}), facts
    )
    return replace(plan, payruns=held(plan.payruns, verdicts), approvals=view)


class _Remembered:
    """`money_at`, keeping what each commit gave (the saved plan records it)."""

    def __init__(self, read: Callable[[str], Mapping[str, str]]) -> None:
        self._read = read
        self.known: dict[str, Mapping[str, str]] = {}

    def __call__(self, commit: str) -> Mapping[str, str]:
        found = self._read(commit)
        self.known[commit] = dict(found)
        return found


# --- the reviewed plan's approvals, judged again with the reviews as they are now ----------
# (the approvals' commit status on each review: advice for the reviewer, never the gate; an
# approval counts when it is of a commit whose money the reviewed plan recorded, or of the
# head; any other is checked at the merge, where the whole history is read)

#: Why an approval of a commit the reviewed plan did not read counts only at the merge.
AT_THE_MERGE = "checked at the merge"


@dataclass(frozen=True, slots=True)
class ReviewedApprovals:
    """What a reviewed plan says of its approvals: the policy in force, the money of each
    payrun to pay and its total, and the money at each commit the plan job read."""

    policy: ApprovalPolicy | None
    money: Mapping[str, MoneyKey]
    totals: Mapping[str, Decimal]
    money_at: Mapping[str, Mapping[str, MoneyKey]]
    head: str


def reviewed_of(path: Path) -> ReviewedApprovals | None:
    """What the saved plan at `path` says of its approvals: the policy it was judged by, the
    money of each payrun it pays (`money_of` of its payruns, as the plan's own) and its total,
    and the money at each commit the plan job read (`approvals.money_at`); None: it was not
    judged (no `approvals`: planned without `--approvals-from`, or before dual control). Read
    as data: the job that reads it holds no plan key, and the status it sets is advice."""
    from reconciler.accounts.saved_view import read_document  # a review's job only

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
    return ReviewedApprovals(build_approvals(rules), money, totals, money_at, head)


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


def judge_again(reviewed: ReviewedApprovals, source: ReviewSource) -> dict[str, Verdict]:
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


def approvals_state(verdicts: Sequence[Judged]) -> tuple[str, str]:
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
