"""What GitLab says of a merge request's approvals, as the dual-control core reads them
(`reconciler.plan.approvals`), as far as its API shows them.

GitLab's REST API (v4): `GET /projects/:id/merge_requests/:iid` (`author`, `merge_user`,
`sha`: its head), `.../merge_requests/:iid/approvals` (`approved_by[].user`) and the project's
approval settings, `GET /projects/:id/approvals`. What GitLab does not show, the reconciler asks
of GitLab's own settings instead:

- which commit an approval was given to: GitLab names none. With "Reset approvals on push"
  (`reset_approvals_on_push`) every push removes the approvals, so an approval still there was
  given to the head; each is taken as given to it (the core then compares the money there).
- whose account a commit is: `.../merge_requests/:iid/commits` names an author's and a
  committer's name and email, never an account. With "Prevent approvals by users who add
  commits" (`merge_requests_disable_committers_approval`) GitLab itself refuses such an
  approval; no commit is passed to the core (whose rule would otherwise refuse every approval
  of a commit it cannot name).
- the author: "Prevent approval by author" (`merge_requests_author_approval` false).

A project without all three gets a `refusal` naming the setting: none of its approvals count.
A login of `from` is looked up among the project's users (`GET /projects/:id/users`); a
`{team: ...}` item is a GitHub team, which GitLab has not: it counts nobody.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from reconciler.gitops.gitlab.client import GitLab, GitLabError
from reconciler.plan.approvals import APPROVED, Approver, Person, RequestFacts, Review

#: GitLab's project and group access tokens' bot users (`project_12_bot_0a1b...`).
_BOT = re.compile(r"^(project|group)_\d+_bot(_[0-9a-f]+)?$")
#: (setting, its value needed, what GitLab's settings page calls it).
_SETTINGS = (
    ("reset_approvals_on_push", True, 'turn on "Reset approvals on push" (an approval would '
     "survive a push that changes the money)"),
    ("merge_requests_author_approval", False, 'turn on "Prevent approval by author"'),
    ("merge_requests_disable_committers_approval", True,
     'turn on "Prevent approvals by users who add commits" (GitLab names no account of a '
     "commit, so the reconciler cannot tell who committed)"),
)  # fmt: skip


def person(user: Any) -> Person | None:
    """A GitLab user object as a `Person`; None when GitLab names none."""
    if not isinstance(user, Mapping) or not isinstance(user.get("username"), str):
        return None
    found = user.get("id")
    ident = found if isinstance(found, int) and not isinstance(found, bool) else None
    login = user["username"]
    return Person(ident, login, bot=bool(user.get("bot")) or _BOT.match(login) is not None)


def settings_refusal(settings: Any) -> str | None:
    """Why the project's approval settings let no approval count (None: they do)."""
    if not isinstance(settings, Mapping):
        return "GitLab did not show the project's merge request approval settings"
    wrong = [said for name, needed, said in _SETTINGS if settings.get(name) is not needed]
    if not wrong:
        return None
    return "the project's merge request approval settings: " + "; ".join(wrong)


def request_facts(gitlab: GitLab, iid: int) -> RequestFacts:
    """Merge request `iid` as GitLab says it now; a read GitLab refuses raises."""
    request = gitlab.get(f"/merge_requests/{int(iid)}")
    approvals = gitlab.get(f"/merge_requests/{int(iid)}/approvals")
    refusal = settings_refusal(gitlab.get("/approvals"))
    if not isinstance(request, Mapping) or not isinstance(approvals, Mapping):
        raise GitLabError(f"GitLab answered merge request !{iid} with something not an object")
    head = str(request.get("sha") or "")
    given = [entry for entry in approvals.get("approved_by") or [] if isinstance(entry, Mapping)]
    reviews = tuple(
        Review(
            reviewer=person(entry.get("user")) or Person(None, "(a deleted account)"),
            state=APPROVED,
            commit=head or None,
            submitted_at=str(entry.get("approved_at") or ""),
        )
        for entry in given
    )
    merged_by = person(request.get("merge_user")) or person(request.get("merged_by"))
    author = person(request.get("author"))
    if author is None:
        refusal = "GitLab names no account as its author"
    return RequestFacts(
        number=int(iid),
        author=author or Person(None, "(unknown)"),
        merged_by=merged_by,
        head=head,
        reviews=reviews,
        commits=(),
        refusal=refusal,
    )


def members(gitlab: GitLab, approver: Approver) -> frozenset[int] | None:
    """A login's id among the project's users; None: no such user, or a team (GitLab has
    none): it counts nobody."""
    if not isinstance(approver, str):
        return None
    found = gitlab.get("/users", {"search": approver, "per_page": "100"})
    ids = {
        user["id"]
        for user in found if isinstance(found, list)
        if isinstance(user, Mapping) and str(user.get("username", "")).lower() == approver.lower()
        and isinstance(user.get("id"), int)
    }  # fmt: skip
    return frozenset(ids) or None


def keep_files(gitlab: GitLab, branch: str, files: Mapping[str, str], message: str) -> str:
    """One commit of `files` on `branch` with the commits API (the branch made from the
    default branch if it is not there): each file created, or updated where it is. GitLab
    applies the commit on the branch's head as it is then, so a branch moved meanwhile is no
    conflict; a file made meanwhile is, and the commit is made again. Its SHA."""
    for _ in range(3):
        exists = gitlab.download(f"/repository/branches/{quote(branch, safe='')}") is not None
        start: dict[str, str] = {}
        if not exists:
            start = {"start_branch": str(gitlab.get("")["default_branch"])}
        actions = [
            {"action": "update" if exists and _has(gitlab, branch, path) else "create",
             "file_path": path, "content": text}
            for path, text in sorted(files.items())
        ]  # fmt: skip
        try:
            made = gitlab.post("/repository/commits", {"branch": branch, **start,
                                                       "commit_message": message,
                                                       "actions": actions})  # fmt: skip
        except GitLabError as error:
            if ": 400 " in error.message:  # a file (or the branch) made meanwhile
                continue
            raise
        return str(made.get("id") or "")
    raise GitLabError(f"the branch {branch} kept changing while its records were written")


def _has(gitlab: GitLab, branch: str, path: str) -> bool:
    where = f"/repository/files/{quote(path, safe='')}?ref={quote(branch, safe='')}"
    return gitlab.download(where) is not None
