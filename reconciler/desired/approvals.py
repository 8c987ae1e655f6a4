"""`policy.approvals`: who must approve a payrun before the reconciler pays it (issue 46).

Written in one place: the desired state's `policy` (a single PATH) or an account's entry of
`reconciler.yaml` (both set is an error, said by the accounts layer). Each rule names an amount
(`over`, a plain decimal: a payrun total over it needs the rule), a `count` of approvals and
`from`, the logins and `{team: org/slug}` items whose members may approve:

```yaml
policy:
  approvals:
    - {over: "0.00", count: 1, from: [alice, bob, dave]}
    - {over: "10000.00", count: 2, from: [alice, bob, dave, {team: acme/finance}]}
```

These are the policy's types; `reconciler.desired.approvals_rules` checks and builds them, and
`reconciler.plan.approvals` judges the approvals a payrun has against them.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from reconciler.money import two_places


@dataclass(frozen=True, slots=True)
class Team:
    """A `{team: org/slug}` item of `from`: every member of that team may approve."""

    org: str
    slug: str

    def __str__(self) -> str:
        return f"team {self.org}/{self.slug}"


Approver = str | Team  # a login, or a team


def approver_text(approver: Approver) -> str:
    """`alice`, or `team acme/finance`."""
    return str(approver)


@dataclass(frozen=True, slots=True)
class Rule:
    """A payrun total over `over` needs `count` approvals from `approvers`."""

    over: Decimal
    count: int
    approvers: tuple[Approver, ...]

    def needs(self) -> str:
        """`needs 2 of alice, bob, dave`."""
        return f"needs {self.count} of {', '.join(map(approver_text, self.approvers))}"

    def as_dict(self) -> dict[str, object]:
        return {
            "over": two_places(self.over),
            "count": self.count,
            "from": [
                a if isinstance(a, str) else {"team": f"{a.org}/{a.slug}"} for a in self.approvers
            ],
        }


@dataclass(frozen=True, slots=True)
class ApprovalPolicy:
    """The `approvals` rules of a policy, in the order written."""

    rules: tuple[Rule, ...]

    def rule_for(self, total: Decimal) -> Rule | None:
        """The rule with the highest `over` strictly below `total`; None: none applies."""
        below = [rule for rule in self.rules if rule.over < total]
        return max(below, key=lambda rule: rule.over) if below else None

    def strictest(self) -> Rule:
        """The rule asking the most approvals (then the one over the highest amount): what a
        change of the policy itself needs."""
        return max(self.rules, key=lambda rule: (rule.count, rule.over))

    def as_list(self) -> list[dict[str, object]]:
        return [rule.as_dict() for rule in self.rules]

    def described(self) -> str:
        """One line: `over 0.00: needs 1 of alice, bob; over 10000.00: needs 2 of ...`."""
        return "; ".join(f"over {two_places(r.over)}: {r.needs()}" for r in self.rules)
