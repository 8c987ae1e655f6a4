"""After a merge: which pull request it came from, and the run that saved that PR's plan."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from reconciler.gitops.github import GitHub


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


def newest_artifact(
    artifacts: Iterable[Mapping[str, Any]], name: str, head_sha: str
) -> Mapping[str, Any] | None:
    """The newest unexpired plan artifact `name` of the pull request head `head_sha`.

    Anyone who can run a workflow can upload an artifact of that name: what makes it the
    reviewed plan is its signature, which `apply` checks with the plan key.
    """
    wanted = artifact_name(name, head_sha)
    candidates = [
        artifact
        for artifact in artifacts
        if artifact.get("name") == wanted and not artifact.get("expired")
    ]
    return max(candidates, key=lambda artifact: artifact["created_at"], default=None)


def find_reviewed_plan(github: GitHub, sha: str, name: str) -> ReviewedPlan | None:
    """The plan artifact of the pull request merged as `sha`, if it is there to be found."""
    pull = merged_pull_request(github.paginate(github.repo_path(f"commits/{sha}/pulls")), sha)
    if pull is None:
        return None
    head_sha = pull["head"]["sha"]
    wanted = artifact_name(name, head_sha)
    artifacts = github.paginate(github.repo_path("actions/artifacts"), {"name": wanted})
    artifact = newest_artifact(artifacts, name, head_sha)
    if artifact is None:
        return None
    return ReviewedPlan(
        pull_request=pull["number"],
        head_sha=head_sha,
        run_id=artifact["workflow_run"]["id"],
        artifact_id=artifact["id"],
        artifact_name=wanted,
    )
