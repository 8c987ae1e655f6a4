"""`policy.approvals` checked and built, for the desired state and the accounts file alike.

Every check is here, on the values as parsed: the schemas describe the block for editors, and
their own messages for it are left to `approvals_problems`, which knows the block's rules (a
count no `from` could ever reach, a rule given twice, a bot named as an approver).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from reconciler.desired.approvals import ApprovalPolicy, Approver, Rule, Team, approver_text
from reconciler.desired.payruns import AMOUNT_FORM, MAX_AMOUNT, parse_amount, written_value
from reconciler.desired.problems import PathProblem, YamlPath
from reconciler.money import two_places
from reconciler.words import noun, plural

#: A login as the forges allow them (letters, digits, `-`, `_`, `.`), at most 255.
_LOGIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,254}")
#: `org/slug` (a forge's group may be nested: `group/sub/team`).
_TEAM = re.compile(r"([A-Za-z0-9_][A-Za-z0-9._-]{0,254})/([A-Za-z0-9_][A-Za-z0-9._/-]{0,254})")
RULE_KEYS = ("over", "count", "from")
#: More approvals than any team reviews with: a count above it is a typo.
MAX_COUNT = 100


def approvals_problems(value: object, at: YamlPath) -> Iterator[PathProblem]:
    """Every problem of an `approvals` block written at `at` (`("policy", "approvals")`)."""
    if not isinstance(value, list) or not value:
        yield PathProblem(
            at,
            "approvals must list at least one rule ({over, count, from}); leave it out for no "
            "approvals policy",
        )
        return
    first_over: dict[Decimal, int] = {}
    for index, rule in enumerate(value):
        here: YamlPath = (*at, index)
        if not isinstance(rule, dict):
            yield PathProblem(here, "an approvals rule must be a mapping of over, count and from")
            continue
        yield from _rule_problems(rule, here)
        over = _over(rule.get("over"))
        if over is not None:
            first = first_over.setdefault(over, index)
            if first != index:
                message = (
                    f"rule {index + 1} is over {two_places(over)}, as rule {first + 1} is: "
                    "each rule needs its own amount"
                )
                yield PathProblem((*here, "over"), message)


def _rule_problems(rule: dict[Any, Any], here: YamlPath) -> Iterator[PathProblem]:
    for key in rule:
        if key not in RULE_KEYS:
            message = (
                f"unknown key {key!r} in an approvals rule; known keys: {', '.join(RULE_KEYS)}"
            )
            yield PathProblem((*here, str(key)), message, at_key=True)
    missing = [key for key in RULE_KEYS if key not in rule]
    if missing:
        names = ", ".join(repr(key) for key in missing)
        key = noun(len(missing), "key")
        yield PathProblem(here, f"missing required {key} {names}")
    if "over" in rule and _over(rule["over"]) is None:
        yield PathProblem(
            (*here, "over"),
            f"over must be {AMOUNT_FORM}, 0 or more (0.00: every payrun); got "
            f"{written_value(rule['over'])}",
        )
    count = rule.get("count")
    if "count" in rule and (not isinstance(count, int) or isinstance(count, bool) or count < 1):
        yield PathProblem(
            (*here, "count"), f"count must be a whole number, 1 or more; got {written_value(count)}"
        )
        count = None
    elif isinstance(count, int) and count > MAX_COUNT:
        yield PathProblem((*here, "count"), f"count must be at most {MAX_COUNT}; got {count}")
        count = None
    if "from" not in rule:
        return
    approvers = list(_from_problems(rule["from"], (*here, "from")))
    problems = [item for item in approvers if isinstance(item, PathProblem)]
    yield from problems
    found = [item for item in approvers if not isinstance(item, PathProblem)]
    if problems or not isinstance(count, int):
        return
    if not any(isinstance(item, Team) for item in found) and count > len(found):
        yield PathProblem(
            (*here, "count"),
            f"count {count} is more than the {plural(len(found), 'login')} in "
            "from: no payrun could ever be approved (add approvers or a team)",
        )


def _from_problems(value: object, at: YamlPath) -> Iterator[PathProblem | Approver]:
    """Each approver of `from`, or the problem with it."""
    if not isinstance(value, list) or not value:
        yield PathProblem(at, "from must list at least one login or {team: org/slug}")
        return
    seen: dict[Approver, int] = {}
    for index, item in enumerate(value):
        here: YamlPath = (*at, index)
        if isinstance(item, str) and item.lower().endswith("[bot]"):
            yield PathProblem(here, f"{item} is a bot, and a bot's approval never counts")
            continue
        approver = _approver(item)
        if approver is None:
            yield PathProblem(
                here,
                "each item of from must be a login (alice) or {team: org/slug}; got "
                f"{written_value(item)}",
            )
            continue
        if approver in seen:
            yield PathProblem(here, f"{approver_text(approver)} is listed twice in from")
            continue
        seen[approver] = index
        yield approver


def _approver(item: object) -> Approver | None:
    """A login or a Team; None: neither."""
    if isinstance(item, str):
        return item if _LOGIN.fullmatch(item) else None
    if isinstance(item, dict) and set(item) == {"team"} and isinstance(item["team"], str):
        found = _TEAM.fullmatch(item["team"])
        return Team(found[1], found[2]) if found else None
    return None


def _over(value: object) -> Decimal | None:
    """`over` as an amount (0 allowed), or None when it is not one."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)  # an integer is exact (the accounts file reads no number texts)
    amount = parse_amount(value)
    return amount if amount is not None and amount <= MAX_AMOUNT else None


def build_approvals(value: object) -> ApprovalPolicy | None:
    """The policy of a block `approvals_problems` found nothing wrong with (None: not given)."""
    if not isinstance(value, list):
        return None
    rules = []
    for rule in value:
        approvers = tuple(a for a in map(_approver, rule["from"]) if a is not None)
        over = _over(rule["over"])
        assert over is not None  # checked by approvals_problems
        rules.append(Rule(over, int(rule["count"]), approvers))
    return ApprovalPolicy(tuple(rules))
