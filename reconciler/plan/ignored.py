"""Drift an active ignore rule hides, taken out of what a plan reports as drift.

A plan of 100,000 workers decides drift in line (`diff._Decider`); the rules are applied once
it has, and only when the files write any, so a state without rules pays nothing.
"""

from __future__ import annotations

from typing import Protocol

from reconciler.desired.ignore import IgnoreRules, email_address
from reconciler.desired.model import DesiredWorker
from reconciler.plan.changes import Drift, FieldChange, Unmanaged, worker_address
from reconciler.plan.model import Ignored
from reconciler.service.models import Worker


class _Decided(Protocol):
    drift: list[Drift]
    kept: list[tuple[Worker, DesiredWorker, tuple[FieldChange, ...]]]


def apply_rules(rules: IgnoreRules, decided: _Decided) -> tuple[Ignored, ...]:
    """Take the fields active rules hide out of `decided`'s drift (a worker left with none is
    no longer drifted) and kept pairs; return them, in the plan's order."""
    ignored: list[Ignored] = []
    hidden: dict[int, tuple[FieldChange, ...]] = {}  # agreement id -> fields still shown
    drift: list[Drift] = []
    for found in decided.drift:
        address = worker_address(found.worker.external_id)
        shown: list[FieldChange] = []
        for change in found.fields:
            rule = rules.rule_for(f"{address}.{change.name}")
            if rule is None:
                shown.append(change)
            else:
                ignored.append(Ignored(f"{address}.{change.name}", rule))
        if len(shown) != len(found.fields):
            hidden[found.agreement.agreement_id] = tuple(shown)
        if shown:
            drift.append(Drift(found.agreement, found.worker, tuple(shown)))
    if hidden:
        decided.drift[:] = drift
        decided.kept[:] = [
            (agreement, want, hidden.get(agreement.agreement_id, fields))
            for agreement, want, fields in decided.kept
        ]
    return tuple(ignored)


def ignore_unmanaged(
    rules: IgnoreRules, unmanaged: list[Unmanaged]
) -> tuple[list[Unmanaged], tuple[Ignored, ...]]:
    """Split the unmanaged workers into those still unmanaged and those an active rule names
    (another team's `worker["AGY-*"]`, or `worker[email="..."]` for one with no externalId):
    those are counted as ignored, and never fail `drift --strict`."""
    kept: list[Unmanaged] = []
    ignored: list[Ignored] = []
    for item in unmanaged:
        agreement = item.agreement
        if agreement.external_id is not None:
            address = worker_address(agreement.external_id)
        else:
            address = email_address(agreement.email)
        rule = rules.rule_for(address)
        if rule is None:
            kept.append(item)
        else:
            ignored.append(Ignored(address, rule))
    return kept, tuple(ignored)
