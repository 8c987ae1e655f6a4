"""The GitLab recipe's merge request jobs, out of its bash: one account's plan, the one note of
every account's plan, and where the merge finds the plans reviewed.

The same decisions as the GitHub workflows', with GitLab's API: an account the merge request
does not change ends at once; a note is found by its marker on its first line and updated in
place; the plans reviewed on a merge request are the artifact of the `comment` job of its head
pipeline (`gitlab_landing` applies them). The commands are the reconciler's own, in a child
process each (`landing.run_reconciler`).
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconciler.accounts.file import AccountsFile, find_accounts_file, load_accounts_file
from reconciler.accounts.selection import changed_accounts
from reconciler.errors import ReconcilerError
from reconciler.gitops.account_jobs import PlanJob, plan_accounts
from reconciler.gitops.gitlab import GitLab
from reconciler.gitops.gitlab_record import merged_request
from reconciler.gitops.gitlab_requests import accounts_to_plan, merge_request_accounts
from reconciler.gitops.landing import Run, run_reconciler
from reconciler.render.marker import PLAN, Marker

#: The note's marker: one note for every account's plan.
NOTE = Marker(PLAN, "accounts")
NOTHING_CHANGED = "No account in reconciler.yaml is changed by this merge request: nothing to plan."
#: The job of the merge request's pipeline whose artifact holds the plans reviewed.
COMMENT_JOB = "comment"


def plan_merge_request_account(
    default: Path, name: str, since: str, iid: int, head_sha: str, run: Run | None = None
) -> int:
    """Plan the account in the merge request's plans/, with the default branch's accounts
    file (`default`) and the accounts the merge request adds (`gitlab_requests`)."""
    written = merge_request_accounts(default, head_sha)
    job = PlanJob(written.path, iid, head_sha, Path.cwd(), name, written.refused, github=False)
    if name in written.new:  # the default branch has no entry to compare it with
        return plan_accounts([name], job, run)
    return plan_account(load_accounts_file(default), name, since, job, run)


def plan_account(
    accounts: AccountsFile, name: str, since: str, job: PlanJob, run: Run | None = None
) -> int:
    """Plan the account if the merge request changes it (since `since`), else end at once; an
    account the merge request adds that is refused fails, saying why."""
    if name not in job.refused and name not in changed_accounts(accounts, since):
        print(f"{name}: not changed by this merge request", flush=True)
        return 0
    return plan_accounts([name], job, run)


def post_plan_note(
    client: GitLab, iid: int, plans: Path, head_sha: str | None = None, run: Run | None = None
) -> str:
    """Post or update the one note of every account's plan, read with the accounts file they
    were planned with (with `head_sha`, the merge request's: and the accounts it adds);
    'created' or 'updated'."""
    run = run or run_reconciler
    body_file = plans.parent / "comment.md"
    accounts_file, _, _ = accounts_to_plan(find_accounts_file(None), head_sha)
    where = ["--accounts-file", str(accounts_file)]
    if any(plans.glob("*.json")):
        if run(["comment", str(plans), "--key", "accounts", *where], body_file) != 0:
            raise ReconcilerError("reconciler comment failed (above): the note was left as it was")
        body = body_file.read_text(encoding="utf-8")
    else:
        body = NOTE.stamp(NOTHING_CHANGED + "\n")
    return upsert_note(client, iid, body, NOTE)


def upsert_note(client: GitLab, iid: int, body: str, marker: Marker) -> str:
    """Update the merge request's note whose first line is `marker`, or post it; 'created' or
    'updated'. `body` starts with the marker."""
    notes = client.get(f"/merge_requests/{iid}/notes", {"per_page": "100"})
    mine = [note["id"] for note in notes if marker.matches(note.get("body"))]
    if mine:
        client.put(f"/merge_requests/{iid}/notes/{mine[0]}", {"body": body})
        return "updated"
    client.post(f"/merge_requests/{iid}/notes", {"body": body})
    return "created"


@dataclass(frozen=True, slots=True)
class Reviewed:
    """The merged merge request, its head, and the folder of its reviewed plans."""

    iid: int | None
    head_sha: str
    folder: Path


def reviewed_plans(client: GitLab, sha: str, into: Path) -> Reviewed:
    """The plans reviewed on the merge request merged as `sha`: the artifact of the `comment`
    job of its head pipeline's child pipeline (or of the head pipeline itself), unpacked into
    `into` (no merge request, job or artifact: none)."""
    into.mkdir(parents=True, exist_ok=True)
    iid = merged_request(client, sha)
    if iid is None:
        return Reviewed(None, "", into)
    request: dict[str, Any] = client.get(f"/merge_requests/{iid}")
    pipeline = (request.get("head_pipeline") or {}).get("id")
    head = str(request.get("sha") or "")
    job = _comment_job(client, int(pipeline)) if pipeline else None
    if job is not None:
        archive = client.download(f"/jobs/{job}/artifacts")
        if archive is not None:
            with zipfile.ZipFile(io.BytesIO(archive)) as kept:
                kept.extractall(into)  # names leading out of `into` are cut to stay in it
    return Reviewed(iid, head, into)


def _comment_job(client: GitLab, pipeline: int) -> int | None:
    """The `comment` job's id in the pipeline, or in the child pipelines its trigger jobs ran."""
    found = _job_named(client, pipeline, COMMENT_JOB)
    if found is not None:
        return found
    for bridge in client.get(f"/pipelines/{pipeline}/bridges", {"per_page": "100"}):
        child = (bridge.get("downstream_pipeline") or {}).get("id")
        found = _job_named(client, int(child), COMMENT_JOB) if child else None
        if found is not None:
            return found
    return None


def _job_named(client: GitLab, pipeline: int, name: str) -> int | None:
    """The id of the pipeline's job `name` (None: it has none)."""
    jobs = client.get(f"/pipelines/{pipeline}/jobs", {"per_page": "100"})
    return next((int(job["id"]) for job in jobs if job.get("name") == name), None)
