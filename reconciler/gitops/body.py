"""The plan comment's body: the Markdown plan under its hidden marker, within GitHub's limit."""

from __future__ import annotations

from reconciler.gitops.marker import Marker
from reconciler.plan.model import Plan
from reconciler.render.markdown import MarkdownRenderer

#: GitHub refuses a comment or issue body longer than this many characters.
GITHUB_BODY_LIMIT = 65_536


def plan_comment(plan: Plan, marker: Marker, *, show_unmanaged: bool = False) -> str:
    """The same bytes for the same plan, so an unchanged plan leaves its comment alone."""
    return marker.stamp(MarkdownRenderer(show_unmanaged=show_unmanaged).render(plan))
