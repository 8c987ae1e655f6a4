"""`judge` (reconciler/plan/approvals.py), the spec's rules of dual control as a table.

Pure: the requests are the facts a forge adapter gives, the money at a commit a mapping."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from decimal import Decimal

import pytest

from reconciler.plan.approvals import (
    ApprovalPolicy,
    Approver,
    Commit,
    MoneyKey,
    MoneyUnreadable,
    Person,
    RequestFacts,
    Review,
    Rule,
    Team,
    judge,
    judge_change,
)

ALICE, BOB, DAVE, CAROL = (
    Person(1, "alice"),
    Person(2, "bob"),
    Person(4, "dave"),
    Person(3, "carol"),
)
FINANCE = Team("acme", "finance")
LOGINS = {"alice": 1, "bob": 2, "dave": 4, "carol": 3}
POLICY = ApprovalPolicy(
    (
        Rule(Decimal("0.00"), 1, ("alice", "bob", "dave")),
        Rule(Decimal("10000.00"), 2, ("alice", "bob", "dave")),
    )
)
HEAD, OLDER = "a1b2c3d4" * 5, "0ddc0mm1" * 5
MONEY = {"2027-01": "sha256:now"}
CHANGES = "CHANGES_REQUESTED"


def members(approver: Approver) -> frozenset[int] | None:
    if isinstance(approver, Team):
        return frozenset({3}) if approver == FINANCE else None
    return frozenset({LOGINS[approver]}) if approver in LOGINS else frozenset()


def money_at(commit: str) -> Mapping[str, MoneyKey]:
    return {HEAD: MONEY, OLDER: {"2027-01": "sha256:before"}}.get(commit, MONEY)


def review(who: Person, state: str = "APPROVED", commit: str | None = HEAD, at: int = 1) -> Review:
    return Review(who, state, commit, f"2027-01-0{at}T10:00:00Z")


def request(*reviews: Review, number: int = 7, author: Person = CAROL) -> RequestFacts:
    commits = (Commit(HEAD, author, author),)
    return RequestFacts(number, author, None, HEAD, tuple(reviews), commits)


def verdict(requests, total="500.00", policy=POLICY, money=MONEY, at=money_at, who=members):
    totals = dict.fromkeys(money, Decimal(total))
    return judge(policy, money, totals, requests, at, who)["2027-01"]


def counted(requests, **kwargs) -> list[str]:
    return [approval.login for approval in verdict(requests, **kwargs).approvals]


@pytest.mark.parametrize(
    ("case", "requests", "logins"),
    [
        ("an approver in `from`", [request(review(BOB))], ["bob"]),
        ("not in `from`", [request(review(Person(9, "eve")))], []),
        ("the author", [request(review(ALICE), author=ALICE)], []),
        ("a bot by flag", [request(review(Person(2, "bob", bot=True)))], []),
        ("a bot by its [bot] login", [request(review(Person(2, "bob[bot]")))], []),
        ("a reviewer with no account", [request(review(Person(None, "bob")))], []),
        ("an approval of no commit", [request(review(BOB, commit=None))], []),
        ("latest: changes requested", [request(review(BOB), review(BOB, CHANGES, at=2))], []),
        ("latest is dismissed", [request(review(BOB), review(BOB, "DISMISSED", at=2))], []),
        ("a comment after", [request(review(BOB), review(BOB, "COMMENTED", at=2))], ["bob"]),
        ("approved after changes", [request(review(BOB, CHANGES), review(BOB, at=2))], ["bob"]),
        ("by time, not order", [request(review(BOB, at=2), review(BOB, "DISMISSED"))], ["bob"]),
        ("a login matched by id, renamed", [request(review(Person(2, "robert")))], ["robert"]),
        ("a login's name but another id", [request(review(Person(99, "bob")))], []),
        ("money changed after the approval", [request(review(BOB, commit=OLDER))], []),
    ],
)  # fmt: skip
def test_which_approvals_count(case: str, requests: list[RequestFacts], logins: list[str]) -> None:
    assert counted(requests) == logins, case


def test_a_committer_or_author_of_a_commit_does_not_count() -> None:
    pushed = Commit("f00df00d" * 5, CAROL, BOB)  # bob committed (pushed) a commit of carol's
    authored = Commit("beefbeef" * 5, DAVE, CAROL)
    facts = replace(request(review(BOB), review(DAVE)), commits=(pushed, authored))
    result = verdict([facts])
    assert result.approvals == ()
    assert any(
        "bob (#7): authored or committed commit f00df00" in line for line in result.not_counted
    )
    assert any(
        "dave (#7): authored or committed commit beefbee" in line for line in result.not_counted
    )


@pytest.mark.parametrize("side", ["author", "committer"])
def test_a_commit_nobody_can_be_named_for_makes_no_approval_count(side: str) -> None:
    unnamed = Commit(
        "deadbeef" * 5, None if side == "author" else CAROL, None if side == "committer" else CAROL
    )
    facts = replace(request(review(BOB)), commits=(Commit(HEAD, CAROL, CAROL), unnamed))
    result = verdict([facts])
    assert result.approvals == () and result.missing is not None
    assert (
        "commit deadbee has an author or committer the forge names no account for"
        in result.not_counted[0]
    )


def test_money_at_the_approved_commit_the_same_keeps_the_approval() -> None:
    # A later commit that changes no money: the approval of the earlier one still counts.
    same = {OLDER: MONEY}
    result = verdict(
        [request(review(BOB, commit=OLDER))], at=lambda commit: same.get(commit, MONEY)
    )
    assert [a.commit for a in result.approvals] == [OLDER]
    assert (
        result.covered and result.needs_has() == "needs 1 of alice, bob, dave: 1 (bob at 0ddc0mm)"
    )


def test_money_changed_voids_the_approval_and_says_why() -> None:
    result = verdict([request(review(BOB, commit=OLDER))])
    assert not result.covered
    assert result.not_counted == ("bob at 0ddc0mm (#7): the money of this payrun changed since",)
    assert result.missing == "needs 1 of alice, bob, dave: has 0, 1 more approval needed"


def test_a_payrun_not_in_the_files_at_the_commit_or_unreadable_counts_nobody() -> None:
    def unreadable(commit: str) -> Mapping[str, MoneyKey]:
        raise MoneyUnreadable(f"{commit[:7]} is not in this clone")

    gone = verdict([request(review(BOB))], at=lambda commit: {})
    assert "the payrun is not in the files at that commit" in gone.not_counted[0]
    broken = verdict([request(review(BOB))], at=unreadable)
    assert "its money could not be read (a1b2c3d is not in this clone)" in broken.not_counted[0]
    assert gone.approvals == broken.approvals == ()


def test_the_rule_is_chosen_by_the_total_of_all_payruns() -> None:
    # Two payruns of 6,000.00 each: 12,000.00 in all is over 10,000.00, so each needs 2.
    money = {"2027-01-a": "sha256:a", "2027-01-b": "sha256:b"}
    totals = dict.fromkeys(money, Decimal("6000.00"))
    facts = [request(review(BOB))]
    verdicts = judge(POLICY, money, totals, facts, lambda commit: money, members)
    assert {v.rule.count for v in verdicts.values() if v.rule} == {2}
    assert not any(v.covered for v in verdicts.values())
    alone = judge(POLICY, {"2027-01-a": "sha256:a"}, totals, facts, lambda commit: money, members)
    assert alone["2027-01-a"].covered  # the same payrun alone is under the higher rule


def test_over_a_threshold_one_approval_is_not_enough_and_two_are() -> None:
    one = verdict([request(review(BOB))], total="25000.00")
    two = verdict([request(review(BOB), review(DAVE))], total="25000.00")
    assert not one.covered and one.needs_has() == "needs 2 of alice, bob, dave: 1 (bob at a1b2c3d)"
    assert two.covered and [a.login for a in two.approvals] == ["bob", "dave"]


def test_distinct_approvers_across_requests() -> None:
    # bob approves both requests of the range: one approver, not two; dave on the second: two.
    twice = [request(review(BOB)), request(review(BOB), number=8)]
    assert not verdict(twice, total="25000.00").covered
    both = [request(review(BOB)), request(review(DAVE), number=8)]
    result = verdict(both, total="25000.00")
    assert result.covered and [a.request for a in result.approvals] == [7, 8]


def test_a_team_the_token_cannot_read_counts_nobody() -> None:
    policy = ApprovalPolicy((Rule(Decimal("0.00"), 1, (Team("acme", "secret"), FINANCE)),))
    facts = [request(review(Person(5, "erin")), author=ALICE)]
    result = verdict(facts, policy=policy)
    assert result.approvals == ()
    assert "team acme/secret could not be read, and counts nobody" in result.not_counted[0]
    member = verdict([request(review(CAROL), author=ALICE)], policy=policy)
    assert member.covered  # carol is a member of the team that could be read


def test_a_refused_request_counts_nobody_and_says_why() -> None:
    facts = replace(request(review(BOB)), refusal="GitLab's reset approvals on push is off")
    result = verdict([facts])
    assert result.approvals == ()
    assert result.not_counted == ("bob (#7): GitLab's reset approvals on push is off",)


def test_no_policy_or_no_rule_is_covered() -> None:
    assert verdict([], policy=None).covered
    high = ApprovalPolicy((Rule(Decimal("1000.00"), 1, ("bob",)),))
    low = verdict([], policy=high, total="1000.00")  # not over 1,000.00: no rule
    assert low.covered and low.rule is None and low.needs_has() == "needs no approval"


def test_rule_for_and_strictest() -> None:
    assert POLICY.rule_for(Decimal("0.00")) is None
    assert POLICY.rule_for(Decimal("0.01")) == POLICY.rules[0]
    assert POLICY.rule_for(Decimal("10000.00")) == POLICY.rules[0]
    assert POLICY.rule_for(Decimal("10000.01")) == POLICY.rules[1]
    assert POLICY.strictest() == POLICY.rules[1]
    tie = ApprovalPolicy((Rule(Decimal("5"), 2, ("a", "b")), Rule(Decimal("9"), 2, ("a", "b"))))
    assert tie.strictest().over == Decimal("9")


def test_a_policy_change_needs_the_strictest_rule_at_the_head() -> None:
    strict = POLICY.strictest()
    one = judge_change(strict, [request(review(BOB))], members, subject="policy.approvals")
    assert one.missing == "needs 2 of alice, bob, dave: has 1"
    stale = judge_change(
        strict, [request(review(BOB), review(DAVE, commit=OLDER))], members, subject="x"
    )
    assert (
        not stale.covered
        and "approved a commit whose policy.approvals is not the one changed to"
        in stale.not_counted[0]
    )
    two = judge_change(strict, [request(review(BOB), review(DAVE))], members, subject="x")
    assert two.covered
