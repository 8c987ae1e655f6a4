"""The GitLab recipe's jobs, out of its bash: one account's plan on a merge request, the one
note of every account's plan, and one account's apply at the merge.

The same decisions as the GitHub workflows', with GitLab's API: an account the merge request
(or the push) does not change ends at once; the note is found by its marker on its first line
and updated in place; at the merge the plans reviewed are the artifact of the `comment` job of
the merged merge request's head pipeline, applied as saved only for that merge request and its
head, else planned again and applied only when `plan-compare` finds the same changes. The
commands are the reconciler's own, in a child process each (`landing.run_reconciler`).
"""

from __future__ import annotations

import io
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconciler.accounts.file import AccountsFile
from reconciler.accounts.selection import changed_accounts
from reconciler.errors import ReconcilerError
from reconciler.gitops.account_jobs import PlanJob, plan_accounts
from reconciler.gitops.gitlab import GitLab
from reconciler.gitops.landing import Run, run_reconciler
from reconciler.render.marker import PLAN, Marker

#: The note's marker: one note for every account's plan.
NOTE = Marker(PLAN, "accounts")
NOTHING_CHANGED = "No account in reconciler.yaml is changed by this merge request: nothing to plan."
#: The job of the merge request's pipeline whose artifact holds the plans reviewed.
COMMENT_JOB = "comment"


def plan_account(
    accounts: AccountsFile, name: str, since: str, job: PlanJob, run: Run | None = None
) -> int:
    """Plan the account if the merge request changes it (since `since`), else end at once."""
    if name not in changed_accounts(accounts, since):
        print(f"{name}: not changed by this merge request", flush=True)
        return 0
    return plan_accounts([name], job, run)


def post_plan_note(client: GitLab, iid: int, plans: Path, run: Run | None = None) -> str:
    """Post or update the one note of every account's plan; 'created' or 'updated'."""
    run = run or run_reconciler
    body_file = plans.parent / "comment.md"
    if any(plans.glob("*.json")):
        if run(["comment", str(plans), "--key", "accounts"], body_file) != 0:
            raise ReconcilerError("reconciler comment failed (above): the note was left as it was")
        body = body_file.read_text(encoding="utf-8")
    else:
        body = NOTE.stamp(NOTHING_CHANGED + "\n")
    notes = client.get(f"/merge_requests/{iid}/notes", {"per_page": "100"})
    mine = [note["id"] for note in notes if NOTE.matches(note.get("body"))]
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
    """The plans reviewed on the merge request merged as `sha`: the artifact of its head
    pipeline's `comment` job, unpacked into `into` (no merge request, job or artifact: none)."""
    into.mkdir(parents=True, exist_ok=True)
    merged = client.get(f"/repository/commits/{sha}/merge_requests")
    iid = next((m["iid"] for m in merged if m.get("state") == "merged"), None)
    if iid is None:
        return Reviewed(None, "", into)
    request: dict[str, Any] = client.get(f"/merge_requests/{iid}")
    pipeline = (request.get("head_pipeline") or {}).get("id")
    head = str(request.get("sha") or "")
    jobs = client.get(f"/pipelines/{pipeline}/jobs", {"per_page": "100"}) if pipeline else []
    job = next((j["id"] for j in jobs if j.get("name") == COMMENT_JOB), None)
    if job is not None:
        archive = client.download(f"/jobs/{job}/artifacts")
        if archive is not None:
            with zipfile.ZipFile(io.BytesIO(archive)) as kept:
                kept.extractall(into)  # names leading out of `into` are cut to stay in it
    return Reviewed(iid, head, into)


def apply_account(
    client: GitLab,
    accounts: AccountsFile,
    name: str,
    pushed: tuple[str, str],
    work: Path,
    run: Run | None = None,
) -> int:
    """Apply the account as reviewed on the merge request merged by the push (`pushed`: its
    before and after commits), if the push changed it; its exit status."""
    run = run or run_reconciler
    before, sha = pushed
    if name not in changed_accounts(accounts, before):
        print(f"{name}: not changed by this push", flush=True)
        return 0
    reviewed = reviewed_plans(client, sha, work / "reviewed-artifact")
    plan = reviewed.folder / "plans" / f"{name}.json"
    if not plan.is_file():
        # Nothing reviewed for it: apply nothing, and fail unless there is nothing to apply.
        if run(["plan", "--account", name, "--detailed-exitcode"], None) == 0:
            return 0
        print(f"{name}: no plan reviewed on a merge request: nothing applied", flush=True)
        return 1
    mine, new = work / "reviewed" / name, work / "new" / name
    mine.mkdir(parents=True, exist_ok=True)
    shutil.copy(plan, mine / f"{name}.json")
    expect = ["--expect-pull-request", str(reviewed.iid), "--expect-head-sha", reviewed.head_sha]
    if run(["apply", str(mine), "--account", name, *expect], None) == 0:
        return 0
    print(f"{name}: the reviewed plan was not applied as saved; planning again", flush=True)
    for step in (
        ["plan", "--account", name, "--out", str(new)],
        ["plan-compare", str(mine / f"{name}.json"), str(new / f"{name}.json")],
        ["apply", str(new), "--account", name],
    ):
        status = run(step, None)
        if status != 0:
            return status
    return 0
