"""The agreements grouped and compared while they are read change no decision of the diff.

Every row of the decision table is planned twice: from the agreements alone (the diff groups
and compares them itself), and from an index filled as a refresh fills it, with the file
becoming known before the first agreement, between any two, or after the last. The plans must
be equal, warnings and order included.
"""

from __future__ import annotations

import dataclasses

import pytest

from reconciler.plan import PlanOptions, diff
from reconciler.plan.agreements import AgreementIndex
from reconciler.plan.model import LiveState
from tests.plan.factories import agreement, desired_state, live_state, want
from tests.plan.test_plan_diff import CASES, Case


def _indexed(live: LiveState, expect_at: int, desired: object) -> LiveState:
    """`live` as the refresh hands it over: its index filled one agreement at a time, the file
    made known (`expect`) once `expect_at` of them were added."""
    index = AgreementIndex()
    for number, worker in enumerate(live.workers):
        if number == expect_at:
            index.expect(desired)  # type: ignore[arg-type]
        index.add(worker)
    if expect_at >= len(live.workers):
        index.expect(desired)  # type: ignore[arg-type]
    return dataclasses.replace(live, workers=index.freeze(), index=index)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_the_plan_is_the_same_whenever_the_file_became_known(case: Case) -> None:
    desired = desired_state(*case.file, prefix=case.prefix, prune=case.prune)
    live = live_state(*case.live)
    plain = diff(desired, live, case.options)
    for expect_at in range(len(live.workers) + 1):
        indexed = _indexed(live, expect_at, desired)
        assert indexed.index is not None and indexed.index.indexes(indexed.workers)
        assert diff(desired, indexed, case.options) == plain, expect_at


def test_a_comparison_made_for_another_file_is_not_used() -> None:
    """The index compared the agreement with one file; the diff is asked about another."""
    live = live_state(agreement(1, "ENG-001"))
    before = desired_state(want("ENG-001"))  # in step: nothing drifted
    after = desired_state(want("ENG-001", job_title="Professor"))
    indexed = _indexed(live, 0, before)
    plan = diff(after, indexed, PlanOptions())
    assert [(d.address, [f.name for f in d.fields]) for d in plan.drift] == [
        ('worker["ENG-001"]', ["jobTitle"])
    ]


def test_an_index_of_other_agreements_is_not_used() -> None:
    """A state whose agreements were replaced after the refresh (as a test or a resumed plan
    may do) is grouped again: its index no longer describes it."""
    desired = desired_state(want("ENG-001"), want("ENG-002"))
    indexed = _indexed(live_state(agreement(1, "ENG-001")), 0, desired)
    replaced = dataclasses.replace(indexed, workers=(agreement(2, "ENG-002"),))
    plan = diff(desired, replaced, PlanOptions())
    assert [change.address for change in plan.changes] == ['worker["ENG-001"]']
