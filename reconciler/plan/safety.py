"""The two guards an apply must pass without `--force`: the inactivation limit and all-owned."""

from __future__ import annotations

import math

from reconciler.desired.model import InactivationLimit
from reconciler.plan.model import Safety
from reconciler.words import counted, plural

#: Below this many owned open agreements a share limit is not checked: at 4 owned workers,
#: 25% would refuse a single removal. A count (`maxInactivations: 2`) is always checked.
MIN_OWNED_FOR_SHARE = 10


def assess(owned_open: int, inactivations: int, limit: InactivationLimit) -> Safety:
    """Judge a plan that would inactivate `inactivations` of `owned_open` owned agreements."""
    problems: list[str] = []
    allowed = limit.allowed(owned_open)
    checked = not limit.is_share or owned_open >= MIN_OWNED_FOR_SHARE
    if checked and inactivations > allowed:
        shown = math.floor(allowed) if limit.is_share else allowed
        problems.append(
            f"{plural(inactivations, 'inactivation')} exceed{'s' if inactivations == 1 else ''} "
            f"policy.maxInactivations {limit} "
            f"({shown} of {plural(owned_open, 'owned open agreement')})"
        )
    if inactivations and inactivations >= owned_open:
        problems.append(f"the plan would inactivate every owned worker ({counted(owned_open)})")
    return Safety(
        owned_open=owned_open,
        inactivations=inactivations,
        limit=limit,
        problems=tuple(problems),
    )
