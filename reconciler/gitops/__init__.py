"""The reconciler in CI: pull-request comments, the drift issue, and reviewed-plan checks.

Pure: `marker` (the hidden first line that finds a body again), `body` (the plan comment),
`drift` (open/update/close decisions) and `compare` (is a new plan the reviewed one?).
`github` is the only module that speaks HTTP (GitHub's REST API); `comments`, `issues` and
`runs` join the two.
"""

from reconciler.gitops.body import plan_comment
from reconciler.gitops.compare import PlanComparison, compare_plans
from reconciler.gitops.drift import DriftAction, DriftIssue, decide_drift_issue
from reconciler.gitops.marker import Marker

__all__ = [
    "DriftAction",
    "DriftIssue",
    "Marker",
    "PlanComparison",
    "compare_plans",
    "decide_drift_issue",
    "plan_comment",
]
