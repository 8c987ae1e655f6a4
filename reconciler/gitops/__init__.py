"""The reconciler in CI: pull-request comments, the drift issue, and reviewed-plan checks.

Pure: `drift` (open/update/close decisions) and `compare` (is a new plan the reviewed one?);
the bodies they post (the hidden marker, the plan comment, GitHub's limits) are rendering, in
`reconciler.render.marker` and `reconciler.render.comment_body`.
`github` is the only module that speaks HTTP (GitHub's REST API); `comments`, `issues` and
`runs` join the two.
"""

from reconciler.gitops.compare import PlanComparison, compare_plans
from reconciler.gitops.drift import DriftAction, DriftIssue, decide_drift_issue
from reconciler.render.comment_body import plan_comment
from reconciler.render.marker import Marker

__all__ = [
    "DriftAction",
    "DriftIssue",
    "Marker",
    "PlanComparison",
    "compare_plans",
    "decide_drift_issue",
    "plan_comment",
]
