"""Is the plan about to be applied the one that was reviewed?

Two saved plans are compared by their changes only: what each change does to which address,
with which values. Fingerprints of the live state and the time are left out, since a plan made
later against a busier account may still ask for exactly what the reviewer approved. Header
values from `${VAR}` are compared by their keyed HMACs: equal only when the value and the token
are both unchanged, which errs on the side of refusing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: What a change record holds that is not part of what it does.
_NOT_COMPARED = frozenset({"fingerprint"})

Record = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class PlanComparison:
    """The addresses only the reviewed plan changes, only the new one, and both but differently."""

    only_reviewed: tuple[str, ...]
    only_new: tuple[str, ...]
    different: tuple[str, ...]

    @property
    def equal(self) -> bool:
        return not (self.only_reviewed or self.only_new or self.different)

    def describe(self) -> list[tuple[str, str]]:
        """Each difference as (change, what happened to it), for a person."""
        return (
            [(change, "reviewed, but no longer planned") for change in self.only_reviewed]
            + [(change, "planned now, but never reviewed") for change in self.only_new]
            + [(change, "planned differently from the review") for change in self.different]
        )


def compare_plans(reviewed: Iterable[Record], new: Iterable[Record]) -> PlanComparison:
    """Compare two saved plans' change records (as `SavedPlan.records` holds them)."""
    before = _by_change(reviewed)
    after = _by_change(new)
    return PlanComparison(
        only_reviewed=tuple(sorted(_label(key) for key in before.keys() - after.keys())),
        only_new=tuple(sorted(_label(key) for key in after.keys() - before.keys())),
        different=tuple(
            sorted(_label(key) for key in before.keys() & after.keys() if before[key] != after[key])
        ),
    )


def _by_change(records: Iterable[Record]) -> dict[tuple[str, str], str]:
    """Each record keyed by (address, action), its content as canonical JSON."""
    found: dict[tuple[str, str], str] = {}
    for record in records:
        content = {name: value for name, value in record.items() if name not in _NOT_COMPARED}
        found[(str(record["address"]), str(record["action"]))] = json.dumps(
            content, sort_keys=True, separators=(",", ":")
        )
    return found


def _label(key: tuple[str, str]) -> str:
    address, action = key
    return f"{address} ({action.replace('_', ' ')})"
