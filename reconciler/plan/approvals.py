"""Dual control: whether the approvals a payrun has are the ones its policy asks for.

Pure, no I/O (issue 46, the product spec's "Money under dual control"). A forge adapter reads
the change requests (`ReviewSource`), the session reads the money at a commit (`money_at`), and
`judge` decides, per payrun to pay, which approvals count and whether they cover it:

- the rule is chosen by the total of ALL the payruns to pay (splitting one does not lower it);
- an approval counts when it is its reviewer's latest state (COMMENTED and PENDING are not
  states) and APPROVED, the reviewer is in some `from` item (by forge user id), is not the
  request's author, authored or committed none of its commits, and is not a bot;
- a commit whose author or committer the forge cannot name makes no approval of its request
  count (fail closed), and a request the adapter refuses (`refusal`) counts nobody;
- **an approval is of the money**: it counts for a payrun when the payrun's money at the commit
  approved (`money_of` of the plan made from the files there, against the same live account)
  is its money now; a later commit that changes no money keeps it, one that changes any voids it;
- a payrun is covered when the distinct approvers (by id, across the requests) reach `count`.

A payrun not covered is not paid (`WAITING`); `--force` never overrides this. The policy's
types (`ApprovalPolicy`, `Rule`, `Team`) are the desired state's (`reconciler.desired.approvals`,
which parses them), named here too so that this module is the whole contract.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Protocol

from reconciler.desired.approvals import ApprovalPolicy as ApprovalPolicy
from reconciler.desired.approvals import Approver as Approver
from reconciler.desired.approvals import Rule as Rule
from reconciler.desired.approvals import Team as Team
from reconciler.desired.approvals import approver_text as approver_text
from reconciler.desired.approvals_rules import build_approvals
from reconciler.money import two_places
from reconciler.plan.payruns import TO_PAY, WAITING, PayrunDecision
from reconciler.words import counted

#: The review states GitHub reports; COMMENTED and PENDING change nobody's decision.
APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING = (
    "APPROVED",
    "CHANGES_REQUESTED",
    "COMMENTED",
    "DISMISSED",
    "PENDING",
)
_NOT_A_DECISION = frozenset({COMMENTED, PENDING})


@dataclass(frozen=True, slots=True)
class Person:
    """An account of the forge. `id` None: the forge names no account (fail closed)."""

    id: int | None
    login: str
    bot: bool = False

    @property
    def is_bot(self) -> bool:
        """A bot by the forge's flag, or by GitHub's `[bot]` login suffix."""
        return self.bot or self.login.lower().endswith("[bot]")


@dataclass(frozen=True, slots=True)
class Review:
    """One review as the forge reports it (`state` as GitHub says it)."""

    reviewer: Person
    state: str
    commit: str | None
    submitted_at: str


@dataclass(frozen=True, slots=True)
class Commit:
    """A commit of a change request; author or committer None: no account is named for it."""

    sha: str
    author: Person | None
    committer: Person | None


@dataclass(frozen=True, slots=True)
class RequestFacts:
    """What the forge says of one change request, read now."""

    number: int
    author: Person
    merged_by: Person | None
    head: str
    reviews: tuple[Review, ...]
    commits: tuple[Commit, ...]
    refusal: str | None = None  # why none of its approvals can count (the forge's settings, ...)


MoneyKey = str  # digest of one payrun's money (see money_of)


class _Paying(Protocol):
    """A plan, as far as its money goes (`Plan.payruns`)."""

    @property
    def payruns(self) -> Sequence[PayrunDecision]: ...


def money_of(plan: _Paying) -> dict[str, MoneyKey]:
    """payrun id -> digest of what it pays: payrun id, and per payment (all parts, in order)
    the payee's resolved agreement id and email, amount (two places) and description.

    Two plans with the same digest for a payrun send the same money for it; any change of a
    payee, an amount, a description, a computed payment or the parts changes the digest."""
    payments: dict[str, list[list[object]]] = {}
    for decision in sorted(plan.payruns, key=lambda d: (d.payrun_id, d.part or 0)):
        rows = payments.setdefault(decision.payrun_id, [])
        agreements = decision.agreements or (None,) * len(decision.payments)
        for index, payment in enumerate(decision.payments):
            agreement = agreements[index] if index < len(agreements) else None
            rows.append(
                [
                    decision.part or 0,
                    agreement,
                    payment.email,
                    two_places(payment.amount),
                    payment.description,
                ]
            )
    return {payrun: _digest(payrun, rows) for payrun, rows in payments.items()}


def _digest(payrun: str, rows: list[list[object]]) -> MoneyKey:
    text = json.dumps([payrun, rows], separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class MoneyUnreadable(Exception):
    """`money_at` could not read the files at a commit: no approval of it counts."""


@dataclass(frozen=True, slots=True)
class Approval:
    """An approval that counts: who, of which commit, when, on which request."""

    login: str
    id: int | None
    commit: str
    submitted_at: str
    request: int

    def as_dict(self) -> dict[str, object]:
        return {
            "login": self.login,
            "id": self.id,
            "commit": self.commit,
            "submitted_at": self.submitted_at,
            "request": self.request,
        }


@dataclass(frozen=True, slots=True)
class Verdict:
    """One payrun's approvals: the rule, those that count, those that do not (and why)."""

    payrun: str
    total: Decimal
    rule: Rule | None
    approvals: tuple[Approval, ...]  # those that count
    not_counted: tuple[str, ...]  # each approval that does not, and why (one line each)
    missing: str | None  # None: covered; else what is missing, one line

    @property
    def covered(self) -> bool:
        return self.missing is None

    def needs_has(self) -> str:
        """`needs 2 of alice, bob, dave: 1 (bob at a1b2c3d)`; `needs no approval` without a
        rule; the reason alone when none could be read (`missing` without a rule)."""
        if self.rule is None:
            return self.missing or "needs no approval"
        has = ", ".join(f"{a.login} at {a.commit[:7]}" for a in self.approvals)
        return f"{self.rule.needs()}: {counted(len(self.approvals))}" + (f" ({has})" if has else "")

    def as_dict(self) -> dict[str, object]:
        return {
            "payrun": self.payrun,
            "total": two_places(self.total),
            "rule": self.rule.as_dict() if self.rule is not None else None,
            "approvals": [a.as_dict() for a in self.approvals],
            "not_counted": list(self.not_counted),
            "missing": self.missing,
            "needs_has": self.needs_has(),
        }


class ReviewSource(Protocol):
    """What a forge adapter gives the core."""

    def requests(self) -> Sequence[RequestFacts]:
        """Read now: the change requests in range."""
        ...

    def members(self, approver: Approver) -> frozenset[int] | None:
        """The user ids `approver` stands for (a login: its own id); None: unreadable."""
        ...


@dataclass(slots=True)
class _Counted:
    """What one request's approvals give: per reviewer, the approval or why it does not count."""

    approvals: list[tuple[Approval, Person]] = field(default_factory=list)
    not_counted: list[str] = field(default_factory=list)


def judge(
    policy: ApprovalPolicy | None,
    money: Mapping[str, MoneyKey],
    totals: Mapping[str, Decimal],
    requests: Sequence[RequestFacts],
    money_at: Callable[[str], Mapping[str, MoneyKey]],
    members: Callable[[Approver], frozenset[int] | None],
) -> dict[str, Verdict]:
    """Each payrun of `money` (the payruns to pay, with their `totals`) judged under `policy`
    by the approvals of `requests` (see the module's rules). No policy or no rule: covered."""
    payruns = list(money)
    grand = sum((totals.get(payrun, Decimal("0.00")) for payrun in payruns), Decimal("0.00"))
    rule = policy.rule_for(grand) if policy is not None else None
    if rule is None:
        return {
            payrun: Verdict(payrun, totals.get(payrun, Decimal("0.00")), None, (), (), None)
            for payrun in payruns
        }
    ids = _Members(members)
    at = _MoneyAt(money_at)
    people = [_people(request, rule, ids) for request in requests]
    verdicts = {}
    for payrun in payruns:
        taken: dict[int, Approval] = {}
        not_counted: list[str] = []
        for one in people:
            not_counted += one.not_counted
            for approval, reviewer in one.approvals:
                where = f"{reviewer.login} at {approval.commit[:7]} (#{approval.request})"
                then = at(approval.commit)
                if isinstance(then, str):
                    not_counted.append(f"{where}: {then}")
                elif payrun not in then:
                    not_counted.append(f"{where}: the payrun is not in the files at that commit")
                elif then[payrun] != money[payrun]:
                    not_counted.append(f"{where}: the money of this payrun changed since")
                elif reviewer.id is not None and reviewer.id not in taken:
                    taken[reviewer.id] = approval
        found = tuple(taken.values())
        missing = None
        if len(found) < rule.count:
            more = rule.count - len(found)
            missing = (
                f"{rule.needs()}: has {counted(len(found))}, {counted(more)} more "
                f"approval{'s' if more > 1 else ''} needed"
            )
        verdicts[payrun] = Verdict(
            payrun,
            totals.get(payrun, Decimal("0.00")),
            rule,
            found,
            tuple(dict.fromkeys(not_counted)),
            missing,
        )
    return verdicts


def judge_change(
    rule: Rule,
    requests: Sequence[RequestFacts],
    members: Callable[[Approver], frozenset[int] | None],
    *,
    subject: str,
    same_at: Callable[[str], bool] | None = None,
) -> Verdict:
    """Whether the requests changing the policy have the approvals `rule` (the strictest rule
    of the policy in force) asks for: the same rules as `judge`, of the commit whose policy is
    the one it changes to (`same_at(commit)`; without it, the request's head). `subject` names
    what is judged (`policy.approvals`)."""
    ids = _Members(members)
    taken: dict[int, Approval] = {}
    not_counted: list[str] = []
    for request in requests:
        one = _people(request, rule, ids)
        not_counted += one.not_counted
        for approval, reviewer in one.approvals:
            same = approval.commit == request.head if same_at is None else same_at(approval.commit)
            if reviewer.id is not None and same:
                taken.setdefault(reviewer.id, approval)
            elif reviewer.id is not None:
                not_counted.append(
                    f"{reviewer.login} at {approval.commit[:7]} (#{request.number}): approved "
                    "a commit whose policy.approvals is not the one changed to"
                )
    found = tuple(taken.values())
    missing = None
    if len(found) < rule.count:
        missing = f"{rule.needs()}: has {counted(len(found))}"
    return Verdict(
        subject, Decimal("0.00"), rule, found, tuple(dict.fromkeys(not_counted)), missing
    )


class _Members:
    """`members`, asked once per approver."""

    def __init__(self, members: Callable[[Approver], frozenset[int] | None]) -> None:
        self._members = members
        self._known: dict[Approver, frozenset[int] | None] = {}

    def __call__(self, approver: Approver) -> frozenset[int] | None:
        if approver not in self._known:
            self._known[approver] = self._members(approver)
        return self._known[approver]


class _MoneyAt:
    """`money_at`, asked once per commit; a failure is the reason none of its approvals count."""

    def __init__(self, money_at: Callable[[str], Mapping[str, MoneyKey]]) -> None:
        self._money_at = money_at
        self._known: dict[str, Mapping[str, MoneyKey] | str] = {}

    def __call__(self, commit: str) -> Mapping[str, MoneyKey] | str:
        if commit not in self._known:
            try:
                self._known[commit] = self._money_at(commit)
            except MoneyUnreadable as error:
                self._known[commit] = f"its money could not be read ({error})"
        return self._known[commit]


def _same(one: Person, other: Person | None) -> bool:
    """The same account: by id when both have one, else by login (case-insensitive)."""
    if other is None:
        return False
    if one.id is not None and other.id is not None:
        return one.id == other.id
    return one.login.lower() == other.login.lower()


def _latest(reviews: Sequence[Review]) -> list[Review]:
    """Each reviewer's latest decision (COMMENTED and PENDING are none), in first-seen order."""
    latest: dict[object, Review] = {}
    ordered = sorted(enumerate(reviews), key=lambda pair: (pair[1].submitted_at, pair[0]))
    for _, review in ordered:
        if review.state.upper() in _NOT_A_DECISION:
            continue
        who = review.reviewer.id if review.reviewer.id is not None else review.reviewer.login
        latest.pop(who, None)
        latest[who] = review
    return list(latest.values())


def _people(request: RequestFacts, rule: Rule, members: _Members) -> _Counted:
    """The approvals of one request that count before the money is compared, and why each
    other one does not."""
    result = _Counted()
    latest = [r for r in _latest(request.reviews) if r.state.upper() == APPROVED]
    tag = f"#{request.number}"
    if request.refusal is not None:
        result.not_counted += [f"{r.reviewer.login} ({tag}): {request.refusal}" for r in latest]
        if not latest:
            result.not_counted.append(f"{tag}: {request.refusal}")
        return result
    unnamed = [c.sha[:7] for c in request.commits if c.author is None or c.committer is None]
    if unnamed:
        why = (
            f"commit {', '.join(unnamed)} has an author or committer the forge names no "
            "account for, so no approval of this request counts"
        )
        result.not_counted += [f"{r.reviewer.login} ({tag}): {why}" for r in latest]
        return result
    for review in latest:
        reviewer = review.reviewer
        where = f"{reviewer.login} ({tag})"
        reason = _why_not(request, review, rule, members)
        if reason is not None:
            result.not_counted.append(f"{where}: {reason}")
            continue
        assert review.commit is not None and reviewer.id is not None  # _why_not checked
        approval = Approval(
            reviewer.login, reviewer.id, review.commit, review.submitted_at, request.number
        )
        result.approvals.append((approval, reviewer))
    return result


def _why_not(request: RequestFacts, review: Review, rule: Rule, members: _Members) -> str | None:
    """Why this latest APPROVED review does not count (before the money), or None."""
    reviewer = review.reviewer
    if reviewer.is_bot:
        return "a bot's approval never counts"
    if reviewer.id is None:
        return "the forge names no account for this reviewer"
    if _same(reviewer, request.author):
        return "the author's approval never counts"
    for commit in request.commits:
        if _same(reviewer, commit.author) or _same(reviewer, commit.committer):
            return f"authored or committed commit {commit.sha[:7]} of the request"
    if review.commit is None:
        return "the forge names no commit for this approval"
    unreadable = []
    for approver in rule.approvers:
        ids = members(approver)
        if ids is None:
            unreadable.append(approver_text(approver))
        elif reviewer.id in ids:
            return None
    if unreadable:
        return (
            f"not in {', '.join(map(approver_text, rule.approvers))} ("
            f"{', '.join(unreadable)} could not be read, and counts nobody)"
        )
    return f"not in {', '.join(map(approver_text, rule.approvers))}"


@dataclass(frozen=True, slots=True)
class Approvals:
    """What a plan says of its payruns' approvals: the policy judged by (None: none), each
    payrun's verdict, a note when they could not be judged here (`checked at the merge`, no
    forge, reviews unreadable), the change requests read, and the money at each commit an
    approval was given to (`{commit: {payrun: key}}`, so a later status can reuse it)."""

    policy: ApprovalPolicy | None
    verdicts: tuple[Verdict, ...] = ()
    note: str | None = None
    requests: tuple[int, ...] = ()
    money_at: Mapping[str, Mapping[str, MoneyKey]] = field(default_factory=dict)
    #: The change requests as the forge said them at the gate (for the evidence records).
    facts: tuple[RequestFacts, ...] = field(default=(), compare=False)

    def verdict(self, payrun: str) -> Verdict | None:
        return next((v for v in self.verdicts if v.payrun == payrun), None)

    def as_dict(self) -> dict[str, object]:
        """As the saved plan keeps it (signed) and `plan --format json` shows it."""
        return {
            "policy": self.policy.as_list() if self.policy is not None else None,
            "note": self.note,
            "requests": list(self.requests),
            "verdicts": [verdict.as_dict() for verdict in self.verdicts],
            "money_at": {commit: dict(money) for commit, money in self.money_at.items()},
        }

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> Approvals:
        """Back from `as_dict` (a saved plan's, its shape checked and its signature verified)."""
        policy = build_approvals(record["policy"])
        verdicts = tuple(
            Verdict(
                item["payrun"],
                Decimal(item["total"]),
                _rule(item["rule"]),
                tuple(Approval(**approval) for approval in item["approvals"]),
                tuple(item["not_counted"]),
                item["missing"],
            )
            for item in record["verdicts"]
        )
        money_at = {commit: dict(money) for commit, money in record["money_at"].items()}
        return cls(policy, verdicts, record["note"], tuple(record["requests"]), money_at)

    def line(self, payrun: str) -> str | None:
        """What the payrun needs and has, for the plan and the comment (None: not judged)."""
        verdict = self.verdict(payrun)
        if verdict is not None:
            return verdict.needs_has()
        return None


def _rule(record: Any) -> Rule | None:
    if record is None:
        return None
    built = build_approvals([record])
    return built.rules[0] if built is not None else None


NO_POLICY = "no approvals policy: any merge pays"


def waiting_reason(verdict: Verdict) -> str:
    """`waiting for approvals: needs 2 of alice, bob: 1 (bob at a1b2c3d)`, and why it could
    not be judged when that is what is missing (no forge, reviews unreadable)."""
    reason = f"waiting for approvals: {verdict.needs_has()}"
    missing = verdict.missing
    if missing is not None and verdict.rule is not None and not missing.startswith("needs"):
        reason += f" ({missing})"
    return reason


def unjudged(
    policy: ApprovalPolicy | None,
    money: Mapping[str, MoneyKey],
    totals: Mapping[str, Decimal],
    why: str,
    *,
    every: bool = False,
) -> dict[str, Verdict]:
    """The payruns judged with no approval to count, for `why` (no forge, the reviews
    unreadable): those a rule applies to are not covered; with `every` (the policy in force
    unknown), none is."""
    grand = sum((totals.get(payrun, Decimal("0.00")) for payrun in money), Decimal("0.00"))
    rule = policy.rule_for(grand) if policy is not None else None
    return {
        payrun: Verdict(
            payrun,
            totals.get(payrun, Decimal("0.00")),
            rule,
            (),
            (),
            why if rule is not None or every else None,
        )
        for payrun in money
    }


def to_judge(decisions: Sequence[PayrunDecision]) -> tuple[dict[str, MoneyKey], dict[str, Decimal]]:
    """The money and totals of the payruns to pay (every part of each), for `judge`."""
    money = money_of(_Decisions(tuple(d for d in decisions if d.state == TO_PAY)))
    totals: dict[str, Decimal] = {}
    for decision in decisions:
        if decision.state == TO_PAY:
            totals[decision.payrun_id] = totals.get(decision.payrun_id, Decimal("0.00")) + (
                decision.total
            )
    return money, totals


@dataclass(frozen=True, slots=True)
class _Decisions:
    payruns: tuple[PayrunDecision, ...]


def held(
    decisions: Sequence[PayrunDecision], verdicts: Mapping[str, Verdict]
) -> tuple[PayrunDecision, ...]:
    """Each payrun to pay whose verdict is not covered, WAITING with why (every part of it);
    the others as they are."""
    out = []
    for decision in decisions:
        verdict = verdicts.get(decision.payrun_id)
        if decision.state == TO_PAY and verdict is not None and not verdict.covered:
            reasons = (waiting_reason(verdict), *verdict.not_counted)
            out.append(replace(decision, state=WAITING, reasons=reasons))
        else:
            out.append(decision)
    return tuple(out)
