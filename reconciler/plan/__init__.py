"""The plan: compare the desired state with the live account, and judge whether it is safe.

`diff(desired, live, options) -> Plan` is pure; the refresh (`reconciler.plan.refresh`) is the
only part that reads the service, and saved plans (`reconciler.plan.saved`) the only part that
touches files.
"""

from reconciler.plan.changes import (
    Change,
    Conflict,
    Drift,
    FieldChange,
    Inactivate,
    Invite,
    PastAgreement,
    Replace,
    Unmanaged,
    WebhookCreate,
    WebhookUpdate,
)
from reconciler.plan.diff import diff
from reconciler.plan.model import LiveState, Plan, PlanOptions, Safety, Summary, UnsafePlan

__all__ = [
    "Change",
    "Conflict",
    "Drift",
    "FieldChange",
    "Inactivate",
    "Invite",
    "LiveState",
    "PastAgreement",
    "Plan",
    "PlanOptions",
    "Replace",
    "Safety",
    "Summary",
    "Unmanaged",
    "UnsafePlan",
    "WebhookCreate",
    "WebhookUpdate",
    "diff",
]
