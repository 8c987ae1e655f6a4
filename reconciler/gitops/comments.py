"""One plan comment per pull request: found again by its marker, updated, never duplicated."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from reconciler.gitops.github import ACTIONS_BOT, GitHub
from reconciler.render.comment_body import fit_body
from reconciler.render.marker import Marker


@dataclass(frozen=True, slots=True)
class CommentResult:
    """What was done: `created`, `updated` or `unchanged`, and the comment's id and page."""

    action: str
    comment_id: int
    url: str


def find_marked(
    comments: Iterable[Mapping[str, Any]], marker: Marker, author: str | None
) -> Mapping[str, Any] | None:
    """The oldest comment that starts with the marker and was written by `author` (any if None)."""
    for comment in comments:
        if not marker.matches(comment.get("body")):
            continue
        if author is not None and (comment.get("user") or {}).get("login") != author:
            continue  # someone pasted our marker: not ours to edit
        return comment
    return None


def upsert_comment(
    github: GitHub, number: int, body: str, marker: Marker, *, author: str | None = ACTIONS_BOT
) -> CommentResult:
    """Create the marked comment on issue or pull request `number`, or update the one there."""
    body = fit_body(marker.stamp(body))
    comments = github.paginate(github.repo_path(f"issues/{number}/comments"))
    existing = find_marked(comments, marker, author)
    if existing is None:
        created = github.post(github.repo_path(f"issues/{number}/comments"), {"body": body})
        return CommentResult("created", created["id"], created["html_url"])
    if existing["body"] == body:
        return CommentResult("unchanged", existing["id"], existing["html_url"])
    updated = github.patch(github.repo_path(f"issues/comments/{existing['id']}"), {"body": body})
    return CommentResult("updated", updated["id"], updated["html_url"])
