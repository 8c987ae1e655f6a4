"""GitHub's people in the shapes its REST API answers them: a user, a review of a pull
request, a commit of one (the fake GitHub's `reviews`, `pull_commits` and `users`)."""

from __future__ import annotations

from typing import Any


def user(login: str, user_id: int, *, bot: bool = False) -> dict[str, Any]:
    """A user as GitHub's "simple user" answers it (in a pull request, a review, a commit)."""
    return {
        "login": login,
        "id": user_id,
        "node_id": f"U_{user_id}",
        "type": "Bot" if bot else "User",
        "site_admin": False,
        "html_url": f"https://github.com/{login}",
    }


def review(
    reviewer: dict[str, Any] | None, state: str, commit: str, at: str, review_id: int = 0
) -> dict[str, Any]:
    """A review as "List reviews for a pull request" answers it (`user` null: a deleted
    account)."""
    return {
        "id": review_id or abs(hash((state, commit, at))) % 10**8,
        "user": reviewer,
        "body": "",
        "state": state,
        "commit_id": commit,
        "submitted_at": at,
        "author_association": "MEMBER",
    }


def pull_commit(
    sha: str, author: dict[str, Any] | None, committer: dict[str, Any] | None
) -> dict[str, Any]:
    """A commit as "List commits on a pull request" answers it: `author` and `committer` are
    GitHub accounts (null when GitHub matches the commit's email to none)."""
    return {
        "sha": sha,
        "commit": {
            "message": "change",
            "author": {"name": "A", "email": "a@example.com"},
            "committer": {"name": "A", "email": "a@example.com"},
        },
        "author": author,
        "committer": committer,
        "parents": [],
    }
