"""After a merge: which pull request it came from, and the run that saved that PR's plan.

The plan artifact is found by name (`reconciler-plan[-KEY]-<head sha>`), but anyone who can
push a branch can upload an artifact of any name from their branch's own workflow run, holding
any validly signed plan (of another, unapproved pull request, say). So an artifact counts only
when the run that uploaded it is a run of the plan workflow, started by `workflow_dispatch` on
the default branch, of this repository, at a commit the default branch holds: the workflow and
action that the repository reviewed, which check the pull request's head before planning.
Before planning, `check_pull_head` refuses a head commit that is not the pull request's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from reconciler.errors import ReconcilerError
from reconciler.gitops.github.client import GitHub, GitHubError

#: The plan workflow's file, as examples/github/ names it.
DEFAULT_WORKFLOW = "reconciler-plan.yml"
#: `compare/<default>...<commit>` says this when the default branch holds the commit.
_ON_BRANCH = frozenset({"identical", "behind"})


class NotTheHead(ReconcilerError):
    """The commit to plan is not the pull request's head (or the pull request is not open)."""


@dataclass(frozen=True, slots=True)
class ReviewedPlan:
    """Where the plan reviewed on a pull request is kept: the run and its artifact."""

    pull_request: int
    head_sha: str
    run_id: int
    artifact_id: int
    artifact_name: str


def merged_pull_request(pulls: Iterable[Mapping[str, Any]], sha: str) -> Mapping[str, Any] | None:
    """The merged pull request whose merge made `sha` (or, failing that, any merged one)."""
    merged = [pull for pull in pulls if pull.get("merged_at")]
    for pull in merged:
        if pull.get("merge_commit_sha") == sha:
            return pull
    return merged[0] if merged else None


def artifact_name(name: str, head_sha: str) -> str:
    """The plan artifact of the pull request's head `head_sha`: the plan job runs on the
    default branch (its run's own head is not the pull request's), so the name says which."""
    return f"{name}-{head_sha}"


def plan_artifacts(
    artifacts: Iterable[Mapping[str, Any]], name: str, head_sha: str
) -> list[Mapping[str, Any]]:
    """The unexpired plan artifacts `name` of the pull request head `head_sha`, newest first."""
    wanted = artifact_name(name, head_sha)
    found = [a for a in artifacts if a.get("name") == wanted and not a.get("expired")]
    return sorted(found, key=lambda artifact: str(artifact["created_at"]), reverse=True)


def newest_artifact(
    artifacts: Iterable[Mapping[str, Any]], name: str, head_sha: str
) -> Mapping[str, Any] | None:
    """The newest unexpired plan artifact `name` of the pull request head `head_sha`."""
    return next(iter(plan_artifacts(artifacts, name, head_sha)), None)


def is_plan_run(
    run: Mapping[str, Any], *, workflow: str, default_branch: str, repository_id: int
) -> bool:
    """Whether `run` is the plan workflow dispatched on the default branch of this repository
    (the commit it ran at is checked apart: `compare`)."""
    path = str(run.get("path") or "").split("@", 1)[0]
    head_repository = run.get("head_repository") or {}
    repository = run.get("repository") or {}
    return (
        path == f".github/workflows/{workflow}"
        and run.get("event") == "workflow_dispatch"
        and run.get("head_branch") == default_branch
        and head_repository.get("id") == repository_id
        and repository.get("id") == repository_id
    )


def find_reviewed_plan(
    github: GitHub, sha: str, name: str, workflow: str = DEFAULT_WORKFLOW
) -> ReviewedPlan | None:
    """The plan artifact of the pull request merged as `sha`, if the plan workflow saved one."""
    pull = merged_pull_request(github.paginate(github.repo_path(f"commits/{sha}/pulls")), sha)
    if pull is None:
        return None
    return plan_of_head(github, int(pull["number"]), str(pull["head"]["sha"]), name, workflow)


def plan_of_head(
    github: GitHub, number: int, head_sha: str, name: str, workflow: str = DEFAULT_WORKFLOW
) -> ReviewedPlan | None:
    """The plan artifact `name` the plan workflow saved for pull request `number` at its head
    `head_sha` (a merged one's, or an open one's on a review), if one of its runs saved it."""
    wanted = artifact_name(name, head_sha)
    repository = github.get(f"/repos/{github.repository}")
    default_branch, repository_id = repository["default_branch"], repository["id"]
    artifacts = github.paginate(github.repo_path("actions/artifacts"), {"name": wanted})
    for artifact in plan_artifacts(artifacts, name, head_sha):
        run = artifact.get("workflow_run") or {}
        if run.get("head_branch") != default_branch:  # a branch's run: not even looked at
            continue
        if _is_reviewed_run(github, run["id"], workflow, default_branch, repository_id):
            return ReviewedPlan(
                pull_request=number,
                head_sha=head_sha,
                run_id=run["id"],
                artifact_id=artifact["id"],
                artifact_name=wanted,
            )
    return None


def _is_reviewed_run(
    github: GitHub, run_id: int, workflow: str, default_branch: str, repository_id: int
) -> bool:
    run = _found(github, f"actions/runs/{int(run_id)}")  # None: deleted since
    if run is None or not is_plan_run(
        run, workflow=workflow, default_branch=default_branch, repository_id=repository_id
    ):
        return False
    # A tag named like the default branch runs with that head_branch too, at its own commit.
    basehead = f"{quote(default_branch, safe='/')}...{quote(str(run['head_sha']), safe='')}"
    compared = _found(github, f"compare/{basehead}")  # None: a commit the repository lacks
    return compared is not None and compared.get("status") in _ON_BRANCH


def _found(github: GitHub, path: str) -> Any:
    """The object at the repository's `path`, or None where GitHub answers 404."""
    try:
        return github.get(github.repo_path(path))
    except GitHubError as error:
        if error.status == 404:
            return None
        raise


def check_pull_head(pull: Mapping[str, Any], number: int, head_sha: str) -> None:
    """Refuse to plan `head_sha` for pull request `number` unless it is its open head."""
    head = str((pull.get("head") or {}).get("sha") or "")
    if pull.get("state") != "open":
        raise NotTheHead(
            f"pull request #{number} is {pull.get('state')!s:.20}, not open: nothing was planned"
        )
    if head.lower() != head_sha.lower():
        raise NotTheHead(
            f"{head_sha} is not the head of pull request #{number} (its head is {head:.64}): "
            "nothing was planned",
            hint="a newer push replaced that commit (its own plan run follows), or the request "
            "named another commit; plan the pull request's head",
        )
