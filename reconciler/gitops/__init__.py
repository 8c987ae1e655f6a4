"""The reconciler in CI: one flow for every forge (`forge.Forge`), and an adapter per forge.

The flow is written once: the landing after a merge, what is pending, the outcome and plan
notes, the drift issue and the adoption change request. Pure: `drift` (open/update/close
decisions) and `record.standing`; whether a new plan is the reviewed one is the plan's own
(`reconciler.plan.review.compare_plans`), and the bodies the flow posts are rendering, in
`reconciler.render.marker` and `reconciler.render.comment_body`. Only the adapters (a package
per forge) speak HTTP; the commands choose one and hand it to the flow.
"""

from reconciler.gitops.drift import DriftAction, DriftIssue, decide_drift_issue
from reconciler.render.comment_body import plan_comment
from reconciler.render.marker import Marker

__all__ = ["DriftAction", "DriftIssue", "Marker", "decide_drift_issue", "plan_comment"]
