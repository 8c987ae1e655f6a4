"""Ignore rules: drift a team chose to live with for a while, with an owner and an end.

`ignoreChanges` on a worker hides a field's drift for good, and nobody remembers why. An
`ignore:` entry names the drift by its address (`worker["ENG-002"].<field>`, a glob allowed:
`worker["ENG-*"].<field>`), says why, who answers for it and until when. Until that date the
drift it matches is shown as ignored (counted, never failing `drift`); from the day after, the
rule no longer hides anything, and `validate` and `drift` name it as expired. A rule that
hides too much for a review to let pass unremarked is a warning in `validate` and in the plan
(`risk_line`): one whose address matches every worker (`*`, `worker["*"]`, `worker[*].jobTitle`:
every externalId), or whose `until` is more than a year ahead (`LONGEST`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

#: The furthest `until` a rule may have without a warning.
LONGEST = timedelta(days=366)


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """One `ignore:` entry of the files."""

    address: str
    reason: str
    owner: str
    until: date

    def matches(self, address: str) -> bool:
        """Whether this rule's address (a glob: `*` and `?`) names `address`, or an address
        it lies under (`worker["ENG-002"]` names each of that worker's fields)."""
        return address_matches(self.address, address)

    def active(self, today: date) -> bool:
        return today <= self.until

    def risk_line(self, today: date) -> str | None:
        """Why this rule hides more than a review should let pass unremarked, or None."""
        reasons = []
        if self.every_worker():
            reasons.append("its address matches every worker, whatever the externalId")
        if self.until > today + LONGEST:
            reasons.append(
                f"its until, {self.until.isoformat()}, is more than a year ahead (at most "
                f"{(today + LONGEST).isoformat()} keeps it looked at)"
            )
        if not reasons:
            return None
        return (
            f"the ignore rule for {self.address} (owner {self.owner}) hides much: "
            + " and ".join(reasons)
            + f"; drift it hides is never reported ({self.reason})"
        )

    def every_worker(self) -> bool:
        """Whether the address matches a worker of any externalId (or any field of one that its
        address names): `*`, `worker["*"]`, `worker[*].jobTitle`."""
        field = self.address.rsplit(".", 1)[1] if "." in self.address else ""
        anyone = 'worker["\x00"]'  # an externalId no worker has: only a glob of all matches it
        samples = [anyone] + ([f"{anyone}.{field}"] if field and "]" not in field else [])
        return any(address_matches(self.address, sample) for sample in samples)

    def expired_line(self) -> str:
        """How `validate` and `drift` name an expired rule."""
        return (
            f"the ignore rule for {self.address} (owner {self.owner}) expired on "
            f"{self.until.isoformat()}: its drift is reported again; extend `until` or remove "
            f"the rule ({self.reason})"
        )


class IgnoreRules:
    """The rules of the files, and the day they are read against (default: today, UTC)."""

    def __init__(self, rules: tuple[IgnoreRule, ...], today: date | None = None) -> None:
        self.rules = rules
        self._day = today or datetime.now(UTC).date()

    def rule_for(self, address: str) -> IgnoreRule | None:
        """The active rule that hides `address`, or None."""
        for rule in self.rules:
            if rule.active(self._day) and rule.matches(address):
                return rule
        return None

    def expired(self) -> tuple[IgnoreRule, ...]:
        return tuple(rule for rule in self.rules if not rule.active(self._day))

    def risk_lines(self) -> tuple[str, ...]:
        """The active rules that hide too much (`IgnoreRule.risk_line`), as warnings say them."""
        found = (rule.risk_line(self._day) for rule in self.rules if rule.active(self._day))
        return tuple(line for line in found if line is not None)


def address_matches(glob: str, address: str) -> bool:
    """Whether `glob` (`*` any text, `?` one character; brackets and quotes are the address's
    own) names `address` or an address it lies under: `worker["X"]` names
    `worker["X"].<field>`, `webhook` names `webhook.url`."""
    wanted = [address]
    cut = address.find("].")
    if cut > 0:
        wanted.append(address[: cut + 1])
    elif "." in address and not address.startswith("worker["):
        wanted.append(address.split(".", 1)[0])
    pattern = _pattern(glob)
    return any(pattern.fullmatch(item) for item in wanted)


def _pattern(glob: str) -> re.Pattern[str]:
    return re.compile(re.escape(glob).replace(r"\*", ".*").replace(r"\?", "."))


def build_rules(files: Iterable[dict[str, Any]]) -> tuple[IgnoreRule, ...]:
    """The rules of every file, in file order (their values passed the checks)."""
    return tuple(
        IgnoreRule(item["address"], item["reason"], item["owner"], parse_day(item["until"]))
        for data in files
        for item in data.get("ignore", ())
    )


def parse_day(value: object) -> date:
    """`until`'s day (`validate` has checked that it is one: `rules.ignore_problems`)."""
    if isinstance(value, date):  # a YAML timestamp read as a date
        return value
    return date.fromisoformat(str(value))
