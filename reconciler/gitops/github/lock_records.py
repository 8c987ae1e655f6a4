"""The claims on accounts' locks (`forge_lock.LockRecords`) as GitHub deployments.

A claim is a deployment of the environment `reconciler-lock` whose task names the lock
(`lock:<key>`), made at the default branch, with who made it and its lease in its payload; it
is held while its newest status is `in_progress`, and each renewal is another such status (the
lease starts again at the status's time, GitHub's clock). A release sets it `inactive` and
deletes the deployment, so the list stays short. A claim counts whoever made it (a person's
token, a GitHub App's): a claim can only hold an apply back, never make one skip anything.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from reconciler.apply.forge_lock import Claim
from reconciler.gitops.github.client import GitHub, GitHubError
from reconciler.gitops.outcome import IN_PROGRESS
from reconciler.gitops.statuses import DESCRIPTION_LIMIT

#: The environment the claims are deployments of.
ENVIRONMENT = "reconciler-lock"
#: A claim holds this long after its last renewal; it is renewed four times as often.
LEASE_S = 120.0
RENEW_EVERY_S = 30.0


def task(key: str) -> str:
    return f"lock:{key}"


def claim(github: GitHub, key: str, who: str, lease_s: float) -> int:
    """Record the claim, in progress; its id."""
    branch = github.get(f"/repos/{github.repository}")["default_branch"]
    created = github.post(
        github.repo_path("deployments"),
        {
            "ref": branch,
            "task": task(key),
            "environment": ENVIRONMENT,
            "auto_merge": False,
            "required_contexts": [],
            "payload": {"who": who, "lease_s": lease_s},
            "description": who[:DESCRIPTION_LIMIT],
            "transient_environment": True,
            "production_environment": False,
        },
    )
    claim_id = int(created["id"])
    renew(github, claim_id)
    return claim_id


def renew(github: GitHub, claim_id: int) -> None:
    github.post(
        github.repo_path(f"deployments/{int(claim_id)}/statuses"),
        {"state": IN_PROGRESS, "description": "holds the account's lock, or waits for it",
         "auto_inactive": False},
    )  # fmt: skip


def claims(github: GitHub, key: str, lease_s: float) -> list[Claim]:
    """The claims whose newest status is in progress, oldest first."""
    query = {"environment": ENVIRONMENT, "task": task(key)}
    found = []
    for deployment in github.paginate(github.repo_path("deployments"), query):
        path = github.repo_path(f"deployments/{int(deployment['id'])}/statuses")
        newest = next(iter(github.paginate(path)), None)
        if newest is None or newest.get("state") != IN_PROGRESS:
            continue
        found.append(_claim(deployment, newest, lease_s))
    return sorted(found, key=lambda made: made.id)


def release(github: GitHub, claim_id: int, why: str) -> None:
    """Set it inactive (GitHub deletes only an inactive deployment), then delete it."""
    github.post(
        github.repo_path(f"deployments/{int(claim_id)}/statuses"),
        {"state": "inactive", "description": why[:DESCRIPTION_LIMIT], "auto_inactive": False},
    )
    try:
        github.delete(github.repo_path(f"deployments/{int(claim_id)}"))
    except GitHubError as error:  # inactive, it no longer counts: the list is only longer
        if error.status not in (403, 404, 422):
            raise


def _claim(deployment: dict[str, Any], status: dict[str, Any], lease_s: float) -> Claim:
    payload = deployment.get("payload")
    payload = payload if isinstance(payload, dict) else {}
    who = payload.get("who")
    lease = payload.get("lease_s")
    if not isinstance(who, str):
        creator = (deployment.get("creator") or {}).get("login")
        who = f"{creator or 'someone'} (deployment {deployment['id']})"
    if not isinstance(lease, int | float) or isinstance(lease, bool) or lease <= 0:
        lease = lease_s
    return Claim(
        id=int(deployment["id"]),
        who=who,
        since=_moment(deployment.get("created_at")),
        renewed=_moment(status.get("created_at")),
        lease_s=float(min(lease, 86_400)),
    )


def _moment(text: Any) -> datetime:
    try:
        moment = datetime.fromisoformat(str(text))
    except ValueError:
        raise GitHubError(f"GitHub said a lock claim's time as {str(text)[:40]!r}") from None
    if moment.tzinfo is None:
        raise GitHubError(f"GitHub said a lock claim's time without a zone: {str(text)[:40]!r}")
    return moment
