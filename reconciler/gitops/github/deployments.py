"""Each account's last successful apply, kept as a GitHub deployment every later run reads.

A run that applies an account creates a deployment (task `deploy:reconciler`) in the account's
record environment (`production-<name>` by default) at the commit it applies, with the pull
request and the plan's digest in its payload, and ends it with a status: `success` when the
account now holds that commit's files (applied, or nothing to do), `inactive` when a newer merge
superseded it, `failure` when it was refused or failed. The last successful apply is the newest
such deployment with a `success` status: the runs of one account go one at a time (their
concurrency group) and none applies an older state, so the newest success is the latest.

The task keeps GitHub Actions' own deployments (one per job that names an environment, marked
`success` whenever the job passes, even when it applied nothing) out of the record; and only
what a workflow's GITHUB_TOKEN made counts (`github-actions[bot]`, as the apply job's): a
deployment or status a person or another app made with the API, which could say an apply
happened that did not and so skip a merge, is not read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reconciler.gitops.github.client import GitHub

# The states a run ends an account's deployment with (the outcome's).
from reconciler.gitops.outcome import FAILURE as FAILURE
from reconciler.gitops.outcome import IN_PROGRESS, SUCCESS
from reconciler.gitops.outcome import INACTIVE as INACTIVE
from reconciler.gitops.statuses import DESCRIPTION_LIMIT

#: The deployments this tool creates; GitHub Actions' own are task `deploy`.
TASK = "deploy:reconciler"


@dataclass(frozen=True, slots=True)
class Record:
    """One apply of an account as its deployment says: the commit, the pull request, the
    plan's digest, the latest state and what it said."""

    deployment_id: int
    sha: str
    pull_request: int | None
    plan_digest: str | None
    state: str | None
    description: str
    log_url: str | None


def deployments(github: GitHub, environment: str, sha: str | None = None) -> list[Any]:
    """The tool's deployments of `environment` (at `sha` only, if given), newest first."""
    query = {"environment": environment, "task": TASK}
    if sha is not None:
        query["sha"] = sha
    found = github.paginate(github.repo_path("deployments"), query)
    return [deployment for deployment in found if _ours(deployment, github.author)]


def statuses(github: GitHub, deployment_id: int) -> list[Any]:
    """A deployment's statuses, newest first (those a workflow made)."""
    path = github.repo_path(f"deployments/{int(deployment_id)}/statuses")
    return [status for status in github.paginate(path) if _ours(status, github.author)]


def _ours(made: Mapping[str, Any], author: str) -> bool:
    """Made with the job's token (a workflow's GITHUB_TOKEN, `github-actions[bot]`, unless
    RECONCILER_GITHUB_AUTHOR names another), as the apply job makes its records."""
    creator = made.get("creator")
    return isinstance(creator, Mapping) and creator.get("login") == author


def record_of(github: GitHub, deployment: Mapping[str, Any]) -> Record:
    """The deployment with its latest status."""
    found = statuses(github, int(deployment["id"]))
    latest = found[0] if found else {}
    return _record(deployment, latest)


def last_applied(github: GitHub, environment: str) -> Record | None:
    """The newest deployment of `environment` that ended in `success`, or None: never applied
    by this tool (every merge is then pending)."""
    for deployment in deployments(github, environment):
        for status in statuses(github, int(deployment["id"])):
            if status.get("state") == SUCCESS:
                return _record(deployment, status)
    return None


def start(
    github: GitHub,
    environment: str,
    sha: str,
    *,
    pull_request: int | None,
    plan_digest: str | None,
    log_url: str,
    description: str,
) -> int:
    """Create the deployment of an apply at `sha`, in progress; its id."""
    created = github.post(
        github.repo_path("deployments"),
        {
            "ref": sha,
            "task": TASK,
            "environment": environment,
            "auto_merge": False,
            "required_contexts": [],  # the plan's status is checked by branch protection
            "payload": {"pull_request": pull_request, "plan_digest": plan_digest},
            "description": _cut(description),
            "production_environment": True,
        },
    )
    deployment_id = int(created["id"])
    finish(github, deployment_id, IN_PROGRESS, description, log_url=log_url)
    return deployment_id


def finish(
    github: GitHub, deployment_id: int, state: str, description: str, *, log_url: str
) -> None:
    """Add the status that says how the apply ended."""
    github.post(
        github.repo_path(f"deployments/{int(deployment_id)}/statuses"),
        {
            "state": state,
            "description": _cut(description),
            "log_url": log_url,
            "auto_inactive": False,  # an earlier success stays the record it was
        },
    )


def _cut(text: str) -> str:
    if len(text) <= DESCRIPTION_LIMIT:
        return text
    return text[: DESCRIPTION_LIMIT - 1] + "…"


def _record(deployment: Mapping[str, Any], status: Mapping[str, Any]) -> Record:
    payload = deployment.get("payload")
    payload = payload if isinstance(payload, dict) else {}
    pull = payload.get("pull_request")
    digest = payload.get("plan_digest")
    return Record(
        deployment_id=int(deployment["id"]),
        sha=str(deployment["sha"]),
        pull_request=pull if isinstance(pull, int) and not isinstance(pull, bool) else None,
        plan_digest=digest if isinstance(digest, str) else None,
        state=status.get("state"),
        description=str(status.get("description") or ""),
        log_url=status.get("log_url"),
    )
