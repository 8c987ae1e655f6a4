"""The plan comment's body: marked, the same bytes for the same plan, and never too long."""

from __future__ import annotations

from reconciler.plan import PlanOptions, diff
from reconciler.render.comment_body import GITHUB_BODY_LIMIT, plan_comment
from reconciler.render.marker import PLAN, Marker
from tests.plan.factories import desired_state, live_state, quickstart, want


def test_a_huge_plan_still_fits_in_one_comment() -> None:
    desired = desired_state(*(want(f"ENG-{n:05d}") for n in range(5000)))
    body = plan_comment(diff(desired, live_state(), PlanOptions()), Marker(PLAN, "eu"))

    assert len(body) <= GITHUB_BODY_LIMIT
    assert body.startswith('<!-- reconciler:plan key="eu" -->\n### reconciler plan\n')
    assert "Not shown here" in body and "| 5,000 |" in body


def test_the_same_plan_gives_the_same_bytes() -> None:
    desired, live = quickstart()
    first = plan_comment(diff(desired, live, PlanOptions()), Marker(PLAN))
    again = plan_comment(diff(desired, live, PlanOptions()), Marker(PLAN))
    assert first == again and first.count("<!-- reconciler:plan -->") == 1
