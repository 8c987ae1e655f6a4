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


def newest_artifact(
    artifacts: Iterable[Mapping[str, Any]], name: str, head_sha: str
) -> Mapping[str, Any] | None:
    """The newest unexpired artifact called `name` uploaded by a run of `head_sha`."""
    candidates = [
        artifact
        for artifact in artifacts
        if artifact.get("name") == name
        and not artifact.get("expired")
        and (artifact.get("workflow_run") or {}).get("head_sha") == head_sha
    ]
    return max(candidates, key=lambda artifact: artifact["created_at"], default=None)


def find_reviewed_plan(github: GitHub, sha: str, artifact_name: str) -> ReviewedPlan | None:
    """The plan artifact of the pull request merged as `sha`, if it is there to be found."""
    pull = merged_pull_request(github.paginate(github.repo_path(f"commits/{sha}/pulls")), sha)
    if pull is None:
        return None
    head_sha = pull["head"]["sha"]
    artifacts = github.paginate(github.repo_path("actions/artifacts"), {"name": artifact_name})
    artifact = newest_artifact(artifacts, artifact_name, head_sha)
    if artifact is None:
        return None
    return ReviewedPlan(
        pull_request=pull["number"],
        head_sha=head_sha,
        run_id=artifact["workflow_run"]["id"],
        artifact_id=artifact["id"],
        artifact_name=artifact_name,
    )
