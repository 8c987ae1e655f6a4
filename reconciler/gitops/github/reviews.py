"""What GitHub says of a pull request's approvals, as the dual-control core reads them
(`reconciler.plan.approvals`): its author, merger and head, its reviews and its commits, and
who the logins and teams of a policy's `from` are, by user id.

Every read is GitHub's documented REST API: `GET /repos/{o}/{r}/pulls/{n}` (`user`,
`merged_by`, `head.sha`), `.../pulls/{n}/reviews` (`user`, `state`, `commit_id`,
`submitted_at`) and `.../pulls/{n}/commits` (`author` and `committer`: the GitHub accounts of
the commit's author and committer, null when GitHub matches none), paged; `GET /users/{login}`
and `GET /orgs/{org}/teams/{slug}/members` for `from`. A pull request's facts are never
guessed: a refusal of any of its reads (403, 404, 5xx) is the client's `GitHubError`, which
the core turns into a payrun refused with the reason. Only a team or login GitHub will not show
the token (403, 404) counts nobody (`None`), as the spec says: fail closed.

The records branch (`keep_files`) is written with the Git database API: blobs, a tree on the
branch's tree, a commit whose parent is the branch's head, and the ref moved to it without
force: a branch moved meanwhile (another account's job) refuses the move, and the commit is
made again on the new head.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from reconciler.gitops.github.client import GitHub, GitHubError
from reconciler.plan.approvals import (
    Approver,
    Commit,
    Person,
    RequestFacts,
    Review,
    Team,
)

#: GitHub lists at most this many commits of a pull request (`pulls/{n}/commits`).
COMMITS_LISTED = 250
#: How many times a commit of the records branch is made again when the branch moved.
_MOVES = 5
_UNREADABLE = frozenset({403, 404})


def person(user: Any) -> Person | None:
    """A GitHub user object as a `Person`; None when GitHub names no account (null)."""
    if not isinstance(user, Mapping) or not isinstance(user.get("login"), str):
        return None
    found = user.get("id")
    ident = found if isinstance(found, int) and not isinstance(found, bool) else None
    return Person(ident, user["login"], bot=user.get("type") == "Bot")


def request_facts(github: GitHub, number: int) -> RequestFacts:
    """Pull request `number` as GitHub says it now; a read GitHub refuses raises."""
    pull = github.get(github.repo_path(f"pulls/{int(number)}"))
    if not isinstance(pull, Mapping):
        raise GitHubError(f"GitHub answered pull request #{number} with something not an object")
    author = person(pull.get("user"))
    head = str((pull.get("head") or {}).get("sha") or "")
    reviews = tuple(
        Review(
            reviewer=person(review.get("user")) or Person(None, "(a deleted account)"),
            state=str(review.get("state") or ""),
            commit=review.get("commit_id") if isinstance(review.get("commit_id"), str) else None,
            submitted_at=str(review.get("submitted_at") or ""),
        )
        for review in github.paginate(github.repo_path(f"pulls/{int(number)}/reviews"))
        if isinstance(review, Mapping)
    )
    commits = tuple(
        Commit(
            str(commit.get("sha") or ""),
            person(commit.get("author")),
            person(commit.get("committer")),
        )
        for commit in github.paginate(github.repo_path(f"pulls/{int(number)}/commits"))
        if isinstance(commit, Mapping)
    )
    refusal = _too_many_commits(pull, len(commits))
    if author is None:
        refusal = "GitHub names no account as its author"
    return RequestFacts(
        number=int(number),
        author=author or Person(None, "(unknown)"),
        merged_by=person(pull.get("merged_by")),
        head=head,
        reviews=reviews,
        commits=commits,
        refusal=refusal,
    )


def _too_many_commits(pull: Mapping[str, Any], listed: int) -> str | None:
    """GitHub lists 250 commits of a pull request: who made the others is unknown."""
    count = pull.get("commits")
    if isinstance(count, int) and count > listed:
        return (
            f"it has {count} commits and GitHub lists {listed} (at most {COMMITS_LISTED}): who "
            "authored the others is unknown"
        )
    return None


def members(github: GitHub, approver: Approver) -> frozenset[int] | None:
    """The user ids `approver` stands for: a login's own id, a team's members' ids; None when
    GitHub will not show it to the token (403, 404): it then counts nobody."""
    try:
        if isinstance(approver, Team):
            path = f"/orgs/{quote(approver.org, safe='')}/teams/{quote(approver.slug, safe='')}"
            found = github.paginate(f"{path}/members")
            return frozenset(ident for user in found if (ident := _id(user)) is not None)
        user = github.get(f"/users/{quote(approver, safe='')}")
    except GitHubError as error:
        if error.status in _UNREADABLE:
            return None
        raise
    ident = _id(user)
    return frozenset({ident}) if ident is not None else None


def _id(user: Any) -> int | None:
    found = person(user)
    return found.id if found is not None else None


def keep_files(github: GitHub, branch: str, files: Mapping[str, str], message: str) -> str:
    """One commit of `files` (path: text) on `branch` (made, with no parent, if it is not
    there), never forced; made again on the new head when the branch moved meanwhile. The
    commit's SHA."""
    for _ in range(_MOVES):
        head = _head(github, branch)
        base = github.get(github.repo_path(f"git/commits/{head}"))["tree"]["sha"] if head else None
        entries = [
            {"path": path, "mode": "100644", "type": "blob", "sha": _blob(github, text)}
            for path, text in sorted(files.items())
        ]
        tree = {"tree": entries, **({"base_tree": base} if base else {})}
        made = github.post(github.repo_path("git/trees"), tree)
        commit = github.post(
            github.repo_path("git/commits"),
            {"message": message, "tree": made["sha"], "parents": [head] if head else []},
        )
        try:
            if head is None:
                ref = {"ref": f"refs/heads/{branch}", "sha": commit["sha"]}
                github.post(github.repo_path("git/refs"), ref)
            else:
                path = github.repo_path(f"git/refs/heads/{quote(branch, safe='/')}")
                github.patch(path, {"sha": commit["sha"], "force": False})
        except GitHubError as error:
            # Not a fast forward, or made meanwhile: the branch moved; else a refusal.
            if error.status == 422 and _head(github, branch) != head:
                continue
            raise
        return str(commit["sha"])
    raise GitHubError(
        f"the branch {branch} kept moving while its records were written ({_MOVES} tries)"
    )


def _head(github: GitHub, branch: str) -> str | None:
    try:
        found = github.get(github.repo_path(f"git/ref/heads/{quote(branch, safe='/')}"))
    except GitHubError as error:
        if error.status == 404:
            return None
        raise
    sha = (found.get("object") or {}).get("sha") if isinstance(found, Mapping) else None
    if not isinstance(sha, str) or not sha:
        raise GitHubError(f"GitHub did not say which commit the branch {branch} is at")
    return sha


def _blob(github: GitHub, text: str) -> str:
    made = github.post(github.repo_path("git/blobs"), {"content": text, "encoding": "utf-8"})
    return str(made["sha"])
