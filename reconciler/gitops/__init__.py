"""The reconciler in CI: pull-request comments, the drift issue, and reviewed-plan checks.

`marker`, `drift` and `compare` are pure; `github` is the only module that speaks HTTP (to the
GitHub REST API), and `comments`/`issues`/`runs` join the two.
"""

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
]
