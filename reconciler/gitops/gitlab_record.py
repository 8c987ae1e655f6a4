"""Each account's last successful apply on GitLab: the newest successful deployment of its
environment `production-<name>` (the Deployments API), and the merge requests merges came from.

GitLab makes the deployment itself: the `apply` job names the environment, so the job is a
deployment at the pipeline's commit whose status follows the job's. The job exits 0 only when
the account now holds that commit's files (applied, or nothing to do); a superseded apply exits
`SUPERSEDED_EXIT`, which the pipeline allows to fail (`allow_failure: exit_codes`), so its
deployment is `failed`, never a success at a commit it did not apply. People see the record on
the environment's page; every later pipeline reads it here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reconciler.gitops.deployments import environment_of
from reconciler.gitops.gitlab import GitLab
from reconciler.gitops.record import LastApply

#: The apply job's exit status when a newer merge superseded it: allowed to fail, so its
#: deployment is not a success (examples/gitlab/, `allow_failure: exit_codes`).
SUPERSEDED_EXIT = 3


class GitLabRecord:
    """The `ApplyRecord` of a GitLab project: its deployments and merge requests."""

    sign = "!"

    def __init__(self, client: GitLab, environment: str) -> None:
        self.client = client
        self.environment = environment  # `production-{account}`

    def last_applied(self, account: str) -> LastApply | None:
        environment = environment_of(self.environment, account)
        query = {
            "environment": environment,
            "status": "success",
            "order_by": "id",
            "sort": "desc",
            "per_page": "1",
        }
        found = self.client.get("/deployments", query)
        return LastApply(str(found[0]["sha"]), f"a deployment of {environment}") if found else None

    def requests_of(self, merges: Sequence[str]) -> list[int]:
        iids: list[int] = []
        for merge in merges:
            iid = merged_request(self.client, merge)
            if iid is not None and iid not in iids:
                iids.append(iid)
        return iids


def merged_request(client: GitLab, sha: str) -> int | None:
    """The merge request merged as `sha` (None: a direct push)."""
    found: list[Any] = client.get(f"/repository/commits/{sha}/merge_requests")
    merged = [request for request in found if request.get("state") == "merged"]
    exact = [
        request
        for request in merged
        if sha in (request.get("merge_commit_sha"), request.get("squash_commit_sha"))
    ]
    chosen = (exact or merged)[:1]
    return int(chosen[0]["iid"]) if chosen else None
