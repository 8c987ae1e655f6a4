"""GitHub as the CI flow's forge (`forge.Forge`, `issues.Issues`, `statuses.Statuses`): its REST
paths and its words, nothing of the flow's decisions.

The record of an account's last apply is a deployment of the tool's (`deployments`); a note is
an issue comment on the pull request; the adoption pull request's commit is made with the Git
database API (a tree of the changed files on top of the commit the job checked out); the
default branch's head is asked of the API, never the checkout's `origin/<branch>`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from reconciler.accounts.history import Scope
from reconciler.accounts.targets import environment_of
from reconciler.annotations import workflow_command
from reconciler.apply.forge_lock import Claim
from reconciler.gitops.drift import DriftIssue
from reconciler.gitops.forge import ApplyJob, LastApply, Note, OpenRequest, Words
from reconciler.gitops.github import deployments, lock_records, reviews
from reconciler.gitops.github.client import ACTIONS_BOT, GitHub, GitHubError
from reconciler.gitops.github.runs import merged_pull_request
from reconciler.gitops.outcome import FAILED, IN_PROGRESS, KINDS, Landing
from reconciler.plan.approvals import Approver, RequestFacts
from reconciler.render.comment_body import GITHUB_BODY_LIMIT
from reconciler.render.marker import Marker

if TYPE_CHECKING:  # the adoption's modules only when a forge commits one
    from reconciler.adopt.commit import BranchFile

WORDS = Words(
    request="pull request",
    sign="#",
    log="the run's log",
    full_history="fetch-depth: 0",
    note_limit=GITHUB_BODY_LIMIT,
    replanning="::warning::{name}: the reviewed plan was not applied as saved (stale, expired, "
    "planned for other files, another pull request or commit, or failed); planning again.",
)


class GitHubForge(GitHub):
    """One repository of GitHub, as the flow's forge."""

    words = WORDS

    # --- the default branch and the record of the last apply ------------------------------

    def default_head(self, branch: str, scope: Scope) -> str:
        """The commit the default branch is at now, as GitHub says. Never the checkout's
        `origin/<branch>`: when the branch has moved since the push (a re-run, a late approval,
        a run queued out of order, the very runs this is asked for), actions/checkout fetches
        `+<the run's commit>:refs/remotes/origin/<branch>`, so there it is the run's own."""
        found = self.get(self.repo_path(f"git/ref/heads/{quote(branch, safe='/')}"))
        sha = found.get("object", {}).get("sha") if isinstance(found, dict) else None
        if not isinstance(sha, str) or not sha:
            raise GitHubError(f"GitHub did not say which commit the branch {branch} is at")
        return sha

    def last_applied(self, environment: str) -> LastApply | None:
        found = deployments.last_applied(self, environment)
        if found is None:
            return None
        return LastApply(found.sha, f"deployment {found.deployment_id} in {environment}")

    def requests_of(self, merges: Iterable[str]) -> list[int]:
        """The pull requests merged as `merges`, in order, each once (a direct push has none)."""
        numbers: list[int] = []
        for merge in merges:
            pulls = self.paginate(self.repo_path(f"commits/{merge}/pulls"))
            pull = merged_pull_request(pulls, merge)
            if pull is not None and int(pull["number"]) not in numbers:
                numbers.append(int(pull["number"]))
        return numbers

    def record_start(self, environment: str, job: ApplyJob, request: int | None,
                     digest: str | None, description: str) -> int:  # fmt: skip
        return deployments.start(self, environment, job.sha, pull_request=request,
                                 plan_digest=digest, log_url=job.log_url,
                                 description=description)  # fmt: skip

    def record_end(self, started: int | None, job: ApplyJob, landing: Landing,
                   requests: Sequence[int]) -> None:  # fmt: skip
        assert started is not None  # record_start made it
        deployments.finish(self, started, landing.state, landing.summary, log_url=job.log_url)

    def landings(self, names: Iterable[str], sha: str, environment: str) -> list[
        tuple[Landing, str | None]
    ]:  # fmt: skip
        """Each account's outcome at `sha` as its newest deployment there says, with the run's
        link; an account with no deployment there did not run (cancelled, or failed to
        start)."""
        found = []
        for name in names:
            there = deployments.deployments(self, environment_of(environment, name), sha)
            record = deployments.record_of(self, there[0]) if there else None
            if record is None or record.state in (None, IN_PROGRESS):
                said = "did not finish: cancelled, or failed before recording (see the run)"
                found.append((Landing(name, FAILED, said), record.log_url if record else None))
                continue
            kind = next((k for k in KINDS if record.description.startswith(k)), FAILED)
            found.append((Landing(name, kind, record.description), record.log_url))
        return found

    # --- the log --------------------------------------------------------------------------

    def annotate(self, level: str, message: str) -> str:
        return workflow_command(level, message)

    def section(self, name: str, start: bool) -> None:
        print(f"::group::{name}" if start else "::endgroup::", flush=True)

    # --- notes: a pull request's comments -------------------------------------------------

    def notes(self, request: int, author: str | None) -> Iterator[Note]:
        """The comments `author` wrote (None: a workflow's GITHUB_TOKEN), oldest first, page
        after page as they are read: one someone else wrote with our marker pasted in is not
        ours to edit."""
        comments = self.paginate(self.repo_path(f"issues/{request}/comments"))
        return (_note(c) for c in comments if _written_by(c, author or ACTIONS_BOT))

    def post_note(self, request: int, body: str) -> Note:
        return _note(self.post(self.repo_path(f"issues/{request}/comments"), {"body": body}))

    def edit_note(self, request: int, note: Note, body: str) -> Note:
        return _note(self.patch(self.repo_path(f"issues/comments/{note.id}"), {"body": body}))

    # --- the adoption pull request ---------------------------------------------------------

    def find_request(self, branch: str, marker: Marker) -> OpenRequest | None:
        owner = self.repository.split("/")[0]
        query = {"state": "open", "head": f"{owner}:{branch}"}
        for pull in self.paginate(self.repo_path("pulls"), query):
            if pull.get("head", {}).get("ref") == branch and marker.matches(pull.get("body")):
                return OpenRequest(pull["number"], pull["body"], pull["html_url"])
        return None

    def push_branch(self, branch: str, base_sha: str, files: Mapping[str, BranchFile],
                    message: str) -> str:  # fmt: skip
        base_tree = self.get(self.repo_path(f"git/commits/{base_sha}"))["tree"]["sha"]
        entries = [
            {"path": path, "mode": "100755" if file.executable else "100644", "type": "blob",
             "content": file.text}
            for path, file in sorted(files.items())
        ]  # fmt: skip
        tree = self.post(self.repo_path("git/trees"), {"base_tree": base_tree, "tree": entries})
        commit = self.post(
            self.repo_path("git/commits"),
            {"message": message, "tree": tree["sha"], "parents": [base_sha]},
        )
        try:
            self.get(self.repo_path(f"git/ref/heads/{branch}"))
        except GitHubError as error:
            if error.status != 404:
                raise
            ref = {"ref": f"refs/heads/{branch}", "sha": commit["sha"]}
            self.post(self.repo_path("git/refs"), ref)
            return str(commit["sha"])
        moved = {"sha": commit["sha"], "force": True}
        self.patch(self.repo_path(f"git/refs/heads/{branch}"), moved)
        return str(commit["sha"])

    def open_request(self, branch: str, target: str | None, title: str, body: str) -> OpenRequest:
        base = target or self.get(f"/repos/{self.repository}")["default_branch"]
        opened = {"title": title, "head": branch, "base": base, "body": body}
        created = self.post(self.repo_path("pulls"), opened)
        return OpenRequest(created["number"], body, created["html_url"])

    def update_request(self, number: int, body: str) -> None:
        self.patch(self.repo_path(f"pulls/{number}"), {"body": body})

    def close_request(self, number: int, branch: str, note: str) -> None:
        self.post(self.repo_path(f"issues/{number}/comments"), {"body": note})
        self.patch(self.repo_path(f"pulls/{number}"), {"state": "closed"})
        self.delete(self.repo_path(f"git/refs/heads/{branch}"))

    # --- approvals (`approvals.Reviews`) and the records branch ---------------------------

    def request_facts(self, number: int) -> RequestFacts:
        return reviews.request_facts(self, number)

    def members(self, approver: Approver) -> frozenset[int] | None:
        return reviews.members(self, approver)

    def keep_files(self, branch: str, files: Mapping[str, str], message: str) -> str:
        return reviews.keep_files(self, branch, files, message)

    # --- issues and commit statuses -------------------------------------------------------

    def find_issue(self, marker: Marker, label: str) -> tuple[DriftIssue, str] | None:
        issues = self.paginate(
            self.repo_path("issues"),
            {"state": "open", "labels": label, "sort": "created", "direction": "asc"},
        )
        for issue in issues:
            if "pull_request" in issue:  # the issues list includes pull requests
                continue
            if marker.matches(issue.get("body")):
                return DriftIssue(issue["number"], issue["body"]), issue["html_url"]
        return None

    def open_issue(self, title: str, body: str, label: str) -> tuple[int, str]:
        opened = {"title": title, "body": body, "labels": [label]}
        created = self.post(self.repo_path("issues"), opened)
        return created["number"], created["html_url"]

    def update_issue(self, number: int, body: str) -> None:
        self.patch(self.repo_path(f"issues/{number}"), {"body": body})

    def close_issue(self, number: int, note: str) -> None:
        self.post(self.repo_path(f"issues/{number}/comments"), {"body": note})
        self.patch(self.repo_path(f"issues/{number}"), {"state": "closed",
                                                        "state_reason": "completed"})  # fmt: skip

    def set_status(self, sha: str, state: str, context: str, description: str,
                   target_url: str) -> None:  # fmt: skip
        body = {"state": state, "context": context, "description": description}
        if target_url:
            body["target_url"] = target_url
        self.post(self.repo_path(f"statuses/{sha}"), body)

    # --- the account lock's claims (forge_lock.LockRecords, RenewedLocks) -----------------

    renew_every_s = lock_records.RENEW_EVERY_S

    @property
    def lock_place(self) -> str:
        return f"GitHub's deployments of {lock_records.ENVIRONMENT} in {self.repository}"

    def claim_lock(self, key: str, who: str) -> int:
        return lock_records.claim(self, key, who, lock_records.LEASE_S)

    def lock_claims(self, key: str) -> list[Claim]:
        return lock_records.claims(self, key, lock_records.LEASE_S)

    def renew_lock(self, key: str, claim: int) -> None:
        lock_records.renew(self, claim)

    def release_lock(self, key: str, claim: int, why: str) -> None:
        lock_records.release(self, claim, why)

    # --- the adoption branch's head ----------------------------------------------------------

    def branch_head(self, branch: str) -> str | None:
        try:
            found = self.get(self.repo_path(f"git/ref/heads/{quote(branch, safe='/')}"))
        except GitHubError as error:
            if error.status == 404:
                return None
            raise
        sha = found.get("object", {}).get("sha") if isinstance(found, dict) else None
        return sha if isinstance(sha, str) and sha else None


def find_marked(
    comments: Iterable[Mapping[str, Any]], marker: Marker, author: str | None
) -> Mapping[str, Any] | None:
    """The oldest comment that starts with the marker and was written by `author` (any if None)."""
    for comment in comments:
        if marker.matches(comment.get("body")) and (author is None or _written_by(comment, author)):
            return comment
    return None


def _written_by(comment: Mapping[str, Any], author: str) -> bool:
    return (comment.get("user") or {}).get("login") == author


def _note(comment: Mapping[str, Any]) -> Note:
    return Note(int(comment["id"]), str(comment.get("body") or ""), str(comment["html_url"]))
