"""The inactivation limit and the all-owned guard: the plan is shown, apply needs --force."""

from __future__ import annotations

import pytest

from reconciler.errors import ReconcilerError
from reconciler.plan import PlanOptions, UnsafePlan, diff
from tests.plan.factories import agreement, desired_state, live_state, want


def _account(owned: int, kept: int, limit: str | None = None, **options: frozenset[str]):
    """`owned` owned open agreements of which the file keeps the first `kept`."""
    ids = [f"ENG-{n:03d}" for n in range(1, owned + 1)]
    desired = desired_state(*(want(i) for i in ids[:kept]), limit=limit)
    live = live_state(*(agreement(n, i) for n, i in enumerate(ids, start=1)))
    return diff(desired, live, PlanOptions(**options))


SAFETY_CASES = [
    # (owned, kept, limit, safe, problem)
    (10, 8, None, True, None),  # 2 of 10 is within 25% (2.5)
    (10, 7, None, False, "exceed policy.maxInactivations 25%"),  # 3 > 2.5
    (9, 6, None, True, None),  # fewer than 10 owned: the share is not checked
    (40, 30, None, True, None),  # exactly 25%
    (40, 29, None, False, "11 inactivations exceed"),
    (20, 14, "5", False, "exceed policy.maxInactivations 5"),  # a count
    (20, 15, "5", True, None),
    (5, 2, "2", False, "3 inactivations exceed policy.maxInactivations 2"),  # a count: always
    (5, 3, "2", True, None),
    (20, 10, "50%", True, None),
    (1, 0, None, False, "every owned worker"),  # the all-owned guard, at any size
    (3, 0, None, False, "every owned worker"),
    (12, 0, "100%", False, "every owned worker"),
    (0, 0, None, True, None),
    # Counted words agree with their count: one inactivation, one owned open agreement.
    (3, 2, "0", False, "1 inactivation exceeds policy.maxInactivations 0 (0 of 3 owned open"),
    (
        1,
        0,
        "0",
        False,
        "1 inactivation exceeds policy.maxInactivations 0 (0 of 1 owned open agreement)",
    ),
]


@pytest.mark.parametrize(("owned", "kept", "limit", "safe", "problem"), SAFETY_CASES)
def test_safety(owned: int, kept: int, limit: str | None, safe: bool, problem: str | None) -> None:
    plan = _account(owned, kept, limit)
    assert plan.safety.safe is safe
    assert plan.safety.owned_open == owned
    assert plan.safety.inactivations == owned - kept
    if problem:
        assert any(problem in text for text in plan.safety.problems)
        with pytest.raises(UnsafePlan, match="unsafe") as raised:
            plan.raise_if_unsafe()
        assert isinstance(raised.value, ReconcilerError)
        assert "--force" in str(raised.value)
        plan.raise_if_unsafe(force=True)
    else:
        plan.raise_if_unsafe()
    # The plan is shown whatever the verdict: every inactivation is still in it.
    assert plan.summary.inactivate == owned - kept


def test_targeting_does_not_shrink_the_owned_count() -> None:
    plan = _account(10, 9, targets=frozenset({"ENG-010"}))
    assert plan.safety.owned_open == 10
    assert plan.safety.safe


def test_replacements_are_not_counted_as_pruning() -> None:
    ids = [f"ENG-{n:03d}" for n in range(1, 11)]
    desired = desired_state(*(want(i) for i in ids))
    live = live_state(*(agreement(n, i) for n, i in enumerate(ids, start=1)))
    plan = diff(desired, live, PlanOptions(replaces=frozenset(ids[:5])))
    assert plan.summary.replace == 5
    assert plan.safety.safe
