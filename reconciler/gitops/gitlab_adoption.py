"""The adoption merge request on GitLab: the GitHub pull request's decisions and body
(`gitops.adoption`), carried out with GitLab's calls.

One merge request per account from the branch `reconciler/adopt-<account>`: its commit is made
with the commits API on top of the pipeline's commit (`force`: the branch is the bot's own,
rebuilt on every run), opened the first time, its description updated while the drift changes,
closed (with a note, its branch deleted) once there is nothing left to adopt.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

from reconciler.adopt.model import Adoption, FileChange
from reconciler.gitops.adoption import (
    CLOSING_NOTE,
    AdoptionPrResult,
    OpenPull,
    branch_for,
    next_step,
    title_for,
)
from reconciler.gitops.drift import DriftAction
from reconciler.gitops.gitlab import GitLab
from reconciler.render.marker import Marker


def find_adoption_mr(gitlab: GitLab, marker: Marker, branch: str) -> OpenPull | None:
    """The opened merge request from `branch` of the project itself whose description starts
    with the marker. GitLab lists a fork's merge requests into the project by the name of their
    source branch too: one from a fork (anyone can open it, with any description) is never
    the bot's, so it is never updated, linked or closed as the adoption."""
    found = gitlab.get("/merge_requests", {"state": "opened", "source_branch": branch})
    for request in found:
        own = request.get("source_project_id") == request.get("target_project_id")
        mine = own and request.get("source_branch") == branch
        if mine and marker.matches(request.get("description")):
            return OpenPull(request["iid"], request["description"], request["web_url"])
    return None


def sync_adoption_mr(
    gitlab: GitLab,
    drift_exit_status: int,
    adoption: Adoption | None,
    files: Mapping[str, FileChange],
    marker: Marker,
    *,
    account: str | None,
    base_sha: str | None,
    target_branch: str,
) -> AdoptionPrResult:
    """Make the adoption merge request carry `adoption` (`files`: repository path -> change)."""
    branch = branch_for(account)
    existing = find_adoption_mr(gitlab, marker, branch)
    action, body = next_step(drift_exit_status, adoption, existing, marker, base_sha)
    if action in (DriftAction.OPEN, DriftAction.UPDATE):
        actions = [
            {
                "action": "create" if change.before is None else "update",
                "file_path": path,
                "content": change.after,
            }
            for path, change in sorted(files.items())
        ]
        commit = {"branch": branch, "start_sha": base_sha, "force": True, "actions": actions}
        gitlab.post("/repository/commits", {**commit, "commit_message": title_for(account)})
    if action is DriftAction.OPEN:
        created = gitlab.post(
            "/merge_requests",
            {
                "source_branch": branch,
                "target_branch": target_branch,
                "title": title_for(account),
                "description": body,
                "remove_source_branch": True,
            },
        )
        return AdoptionPrResult(action, created["iid"], created["web_url"])
    if existing is None:
        return AdoptionPrResult(action, None, None)
    if action is DriftAction.UPDATE:
        gitlab.put(f"/merge_requests/{existing.number}", {"description": body})
    elif action is DriftAction.CLOSE:
        gitlab.post(f"/merge_requests/{existing.number}/notes", {"body": CLOSING_NOTE})
        gitlab.put(f"/merge_requests/{existing.number}", {"state_event": "close"})
        gitlab.delete(f"/repository/branches/{quote(branch, safe='')}")
    return AdoptionPrResult(action, existing.number, existing.url)
