"""GitLab as the CI flow's forge (`forge.Forge`): its REST paths and its words, nothing of the
flow's decisions.

GitLab makes the record of an apply itself: the `apply` job names the environment
`production-<name>`, so the job is a deployment at the pipeline's commit whose status follows
the job's. The job exits 0 only when the account now holds that commit's files (applied, or
nothing to do); a superseded apply exits `landing.SUPERSEDED_EXIT`, which the pipeline allows to
fail (`allow_failure: exit_codes`), so its deployment is `failed`, never a success at a commit
it did not apply. Each apply job keeps its outcome in `outcomes/<name>.json` (its artifact),
which the `outcome` job, holding no account's variable, reads back (`kept_landings`). A note is
a merge request's note; the plans reviewed on a merge request are the artifact of the `comment`
job of its head pipeline (or of a child pipeline of it).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from reconciler.accounts.history import HistoryError, Scope, head_of
from reconciler.accounts.saved_view import read_document
from reconciler.accounts.targets import Target, Targets
from reconciler.apply.forge_lock import Claim
from reconciler.errors import ReconcilerError
from reconciler.gitops.forge import (
    ApplyJob,
    LastApply,
    Note,
    OpenRequest,
    Reviewed,
    Words,
)
from reconciler.gitops.gitlab import reviews
from reconciler.gitops.gitlab.client import GitLab
from reconciler.gitops.outcome import FAILED, KINDS, Landing
from reconciler.gitops.record import Standing, standing
from reconciler.plan.approvals import Approver, RequestFacts
from reconciler.render.marker import Marker

if TYPE_CHECKING:  # the adoption's modules only when a forge commits one
    from reconciler.adopt.commit import BranchFile

WORDS = Words(
    request="merge request",
    sign="!",
    log="the job's log",
    full_history="GIT_DEPTH: 0",
    note_limit=1_000_000,  # GitLab's longest note
    replanning="{name}: the reviewed plan was not applied as saved; planning again",
    unreviewed="{name}: no plan reviewed on a merge request: nothing applied",
)
#: The job of the merge request's pipeline whose artifact holds the plans reviewed.
COMMENT_JOB = "comment"
#: The apply jobs' outcomes (their artifact), `<name>.json` each.
OUTCOMES = Path("outcomes")
#: The environments the account locks' claims are deployments of (`reconciler-lock/<key>`).
LOCK_ENVIRONMENT = "reconciler-lock"
#: A claim holds this long from when it was made (GitLab cannot renew it): longer than an apply.
LOCK_LEASE_S = 3600.0
#: A kept outcome: the account's, its job's page, and the merge requests to tell.
Kept = tuple[Landing, str | None, list[int]]


class GitLabForge(GitLab):
    """One project of GitLab, as the flow's forge."""

    words = WORDS
    outcomes = OUTCOMES

    # --- the default branch and the record of the last apply ------------------------------

    def default_head(self, branch: str, scope: Scope) -> str:
        """As the job fetched it (`before_script` fetches the default branch itself)."""
        return head_of(scope, branch)

    def last_applied(self, environment: str) -> LastApply | None:
        query = {"environment": environment, "status": "success", "order_by": "id",
                 "sort": "desc", "per_page": "1"}  # fmt: skip
        found = self.get("/deployments", query)
        return LastApply(str(found[0]["sha"]), f"a deployment of {environment}") if found else None

    def requests_of(self, merges: Iterable[str]) -> list[int]:
        iids: list[int] = []
        for merge in merges:
            iid = self.merged_request(merge)
            if iid is not None and iid not in iids:
                iids.append(iid)
        return iids

    def merged_request(self, sha: str) -> int | None:
        """The merge request merged as `sha` (None: a direct push)."""
        found: list[Any] = self.get(f"/repository/commits/{sha}/merge_requests")
        merged = [request for request in found if request.get("state") == "merged"]
        exact = [
            request
            for request in merged
            if sha in (request.get("merge_commit_sha"), request.get("squash_commit_sha"))
        ]
        chosen = (exact or merged)[:1]
        return int(chosen[0]["iid"]) if chosen else None

    def record_start(self, environment: str, job: ApplyJob, request: int | None,
                     digest: str | None, description: str) -> None:  # fmt: skip
        return None  # the job is the deployment

    def record_end(self, started: int | None, job: ApplyJob, landing: Landing,
                   requests: Sequence[int]) -> None:  # fmt: skip
        """Keep the outcome for the outcome notes (the job's artifact)."""
        self.outcomes.mkdir(parents=True, exist_ok=True)
        kept = {"account": landing.account, "kind": landing.kind,
                "description": landing.description, "job_url": job.log_url, "sha": job.sha,
                "merge_requests": list(requests)}  # fmt: skip
        path = self.outcomes / f"{landing.account}.json"
        path.write_text(json.dumps(kept, indent=2), encoding="utf-8")

    def kept_landings(
        self, accounts: Targets, sha: str
    ) -> dict[int, list[tuple[Landing, str | None]]]:
        """Each merge request's rows: the outcomes the apply jobs kept; an apply job that kept
        none did not finish (unless its account is applied at `sha`)."""
        rows: dict[int, list[tuple[Landing, str | None]]] = {}
        for target in accounts.targets:
            kept = _read_outcome(self.outcomes / f"{target.name}.json")
            if kept is None:
                kept = self._unfinished(target, sha)
                if kept is None:
                    continue
            for iid in kept[2]:
                rows.setdefault(iid, []).append(kept[:2])
        return rows

    def _unfinished(self, target: Target, sha: str) -> Kept | None:
        said = "did not finish: cancelled, or failed before it said"
        try:
            where: Standing = standing(self, target.environment, target.scope, sha, sha)
        except HistoryError as error:  # told to the request merged as `sha`
            said += f"; where it stands is unknown: {error.one_line()}"
            return Landing(target.name, FAILED, said), None, self.requests_of([sha])
        if where.applied:
            return None
        landing = Landing(target.name, FAILED, f"{said} ({where.pending()})")
        return landing, None, list(where.requests)

    def reviewed_plan(self, merge: str, into: Path) -> Reviewed:
        """The plans reviewed on the merge request merged as `merge`: the artifact of the
        `comment` job of its head pipeline's child pipeline (or of the head pipeline itself),
        unpacked into `into` (no merge request, job or artifact: none)."""
        into.mkdir(parents=True, exist_ok=True)
        iid = self.merged_request(merge)
        if iid is None:
            return Reviewed(None, None, None)
        request: dict[str, Any] = self.get(f"/merge_requests/{iid}")
        pipeline = (request.get("head_pipeline") or {}).get("id")
        job = self._comment_job(int(pipeline)) if pipeline else None
        if job is not None:
            archive = self.download(f"/jobs/{job}/artifacts")
            if archive is not None:
                with zipfile.ZipFile(io.BytesIO(archive)) as kept:
                    kept.extractall(into)  # names leading out of `into` are cut to stay in it
        return Reviewed(into / "plans", iid, str(request.get("sha") or ""))

    def _comment_job(self, pipeline: int) -> int | None:
        """The `comment` job's id in the pipeline, or in the child pipelines its trigger jobs
        ran."""
        found = self._job_named(pipeline, COMMENT_JOB)
        if found is not None:
            return found
        for bridge in self.get(f"/pipelines/{pipeline}/bridges", {"per_page": "100"}):
            child = (bridge.get("downstream_pipeline") or {}).get("id")
            found = self._job_named(int(child), COMMENT_JOB) if child else None
            if found is not None:
                return found
        return None

    def _job_named(self, pipeline: int, name: str) -> int | None:
        jobs = self.get(f"/pipelines/{pipeline}/jobs", {"per_page": "100"})
        return next((int(job["id"]) for job in jobs if job.get("name") == name), None)

    # --- approvals (`approvals.Reviews`) and the records branch ---------------------------

    def request_facts(self, number: int) -> RequestFacts:
        return reviews.request_facts(self, number)

    def members(self, approver: Approver) -> frozenset[int] | None:
        return reviews.members(self, approver)

    def keep_files(self, branch: str, files: Mapping[str, str], message: str) -> str:
        return reviews.keep_files(self, branch, files, message)

    # --- the log --------------------------------------------------------------------------

    def annotate(self, level: str, message: str) -> str:
        return message  # a job's log has no annotations

    def section(self, name: str, start: bool) -> None:
        return None  # each account has a job of its own

    # --- notes on a merge request ---------------------------------------------------------

    def notes(self, request: int, author: str | None) -> list[Note]:
        """The merge request's notes, newest first (as GitLab sorts them)."""
        notes = self.get(f"/merge_requests/{request}/notes", {"per_page": "100"})
        return [_note(note) for note in notes]

    def post_note(self, request: int, body: str) -> Note:
        return _note(self.post(f"/merge_requests/{request}/notes", {"body": body}))

    def edit_note(self, request: int, note: Note, body: str) -> Note:
        path = f"/merge_requests/{request}/notes/{note.id}"
        return _note(self.put(path, {"body": body}))

    # --- the adoption merge request -------------------------------------------------------

    def find_request(self, branch: str, marker: Marker) -> OpenRequest | None:
        """GitLab lists a fork's merge requests into the project by the name of their source
        branch too: one from a fork (anyone can open it, with any description) is never the
        bot's, so it is never updated, linked or closed as the adoption."""
        found = self.get("/merge_requests", {"state": "opened", "source_branch": branch})
        for request in found:
            own = request.get("source_project_id") == request.get("target_project_id")
            mine = own and request.get("source_branch") == branch
            if mine and marker.matches(request.get("description")):
                return OpenRequest(request["iid"], request["description"], request["web_url"])
        return None

    def push_branch(self, branch: str, base_sha: str, files: Mapping[str, BranchFile],
                    message: str) -> str:  # fmt: skip
        """The commits API's actions: `create` or `update` each file, then `chmod` each
        executable one (GitLab sets the execute flag only with that action)."""
        actions: list[dict[str, Any]] = [
            {"action": "create" if file.created else "update", "file_path": path,
             "content": file.text}
            for path, file in sorted(files.items())
        ]  # fmt: skip
        actions += [
            {"action": "chmod", "file_path": path, "execute_filemode": True}
            for path, file in sorted(files.items())
            if file.executable
        ]
        commit = {"branch": branch, "start_sha": base_sha, "force": True, "actions": actions}
        return str(self.post("/repository/commits", {**commit, "commit_message": message})["id"])

    def open_request(self, branch: str, target: str | None, title: str, body: str) -> OpenRequest:
        opened = {"source_branch": branch, "target_branch": target, "title": title,
                  "description": body, "remove_source_branch": True}  # fmt: skip
        created = self.post("/merge_requests", opened)
        return OpenRequest(created["iid"], body, created["web_url"])

    def update_request(self, number: int, body: str) -> None:
        self.put(f"/merge_requests/{number}", {"description": body})

    def close_request(self, number: int, branch: str, note: str) -> None:
        self.post(f"/merge_requests/{number}/notes", {"body": note})
        self.put(f"/merge_requests/{number}", {"state_event": "close"})
        self.delete(f"/repository/branches/{quote(branch, safe='')}")

    # --- the account lock's claims (forge_lock.LockRecords) -------------------------------
    # A claim is a running deployment of the environment `reconciler-lock/<key>`, made at
    # the default branch's head; a release cancels it. GitLab cannot renew a deployment that
    # runs (running -> running is no transition) and records no payload: its lease is longer
    # than an apply, and who holds it is the deployment's user.

    @property
    def lock_place(self) -> str:
        return f"GitLab's deployments of {LOCK_ENVIRONMENT}/... in project {self.project}"

    def claim_lock(self, key: str, who: str) -> int:
        branch = str(self.get("")["default_branch"])
        head = self.get(f"/repository/branches/{quote(branch, safe='')}")["commit"]["id"]
        made = {"environment": f"{LOCK_ENVIRONMENT}/{key}", "sha": head, "ref": branch,
                "tag": False, "status": "running"}  # fmt: skip
        return int(self.post("/deployments", made)["id"])

    def lock_claims(self, key: str) -> list[Claim]:
        query = {"environment": f"{LOCK_ENVIRONMENT}/{key}", "status": "running",
                 "order_by": "id", "sort": "asc", "per_page": "100"}  # fmt: skip
        return [_claim(made) for made in self.get("/deployments", query)]

    def release_lock(self, key: str, claim: int, why: str) -> None:
        self.put(f"/deployments/{int(claim)}", {"status": "canceled"})

    # --- the adoption branch's head ----------------------------------------------------------

    def branch_head(self, branch: str) -> str | None:
        found = self.download(f"/repository/branches/{quote(branch, safe='')}")  # 404: None
        answer = json.loads(found) if found is not None else None
        sha = (answer.get("commit") or {}).get("id") if isinstance(answer, dict) else None
        return str(sha) if sha else None


def _claim(made: Mapping[str, Any]) -> Claim:
    """A running deployment of a lock environment, as a claim (GitLab's times)."""
    try:
        since = datetime.fromisoformat(str(made["created_at"]))
        who = f"@{(made.get('user') or {}).get('username', 'someone')} (deployment {made['id']}"
        job = (made.get("deployable") or {}).get("web_url")
        claim = Claim(int(made["id"]), who + (f", the job {job})" if job else ")"), since,
                      since, LOCK_LEASE_S)  # fmt: skip
    except (KeyError, ValueError, TypeError, AttributeError) as error:
        raise ReconcilerError(f"GitLab said a lock claim as no deployment ({error})") from None
    if since.tzinfo is None:
        raise ReconcilerError(f"GitLab said a lock claim's time without a zone: {since}")
    return claim


def _note(note: Mapping[str, Any]) -> Note:
    return Note(int(note["id"]), str(note.get("body") or ""), str(note.get("web_url") or ""))


def _read_outcome(path: Path) -> Kept | None:
    if not path.exists():
        return None
    kept = read_document(path)  # a FIFO there is refused, not read as "did not finish"
    try:
        landing = Landing(str(kept["account"]), str(kept["kind"]), str(kept["description"]))
        requests = [int(iid) for iid in kept["merge_requests"]]
        url = kept.get("job_url")
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ReconcilerError(f"{path}: not an apply job's outcome ({error})") from None
    if landing.kind not in KINDS:
        raise ReconcilerError(f"{path}: unknown outcome {landing.kind!r}")
    return landing, str(url) if url else None, requests
