"""What `reconciler github pending` tells the workflows (GITHUB_OUTPUT lines): the accounts'
matrix, each job with the reviewed plan it downloads, or the composite action's one account's
plan; and the drift check's report of them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from reconciler.accounts.targets import Targets
from reconciler.gitops.github.forge import GitHubForge
from reconciler.gitops.github.runs import ReviewedPlan, find_reviewed_plan
from reconciler.gitops.pending import Pending, pending_fleet, report
from reconciler.words import counted, plural

_PLAN_FIELDS = ("run-id", "artifact-name", "pull-request", "head-sha")


def with_reviewed_plans(
    github: GitHubForge, pending: Iterable[Pending[Any]], artifact: str, workflow: str
) -> list[Pending[ReviewedPlan]]:
    """Each pending account with the plan reviewed on the pull request of its newest merge."""
    return [
        item.found(find_reviewed_plan(github, item.merges[-1], artifact, workflow))
        if item.merges
        else item.found(None)
        for item in pending
    ]


def matrix(
    pending: Iterable[Pending[ReviewedPlan]], chunk: int | None
) -> dict[str, list[dict[str, str]]]:
    """A GitHub Actions matrix of the pending accounts with the reviewed plan each is to apply:
    `{"account": "eu", "run-id": ..., "artifact-name": ..., "pull-request": ..., "head-sha":
    ...}`; with `chunk`, `{"accounts": "eu us", ...}`, at most `chunk` accounts a job, those of
    one job sharing one reviewed plan artifact (the job downloads one)."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for item in pending:
        groups.setdefault(plan_fields(item.reviewed), []).append(item.account)
    include = []
    for fields, names in groups.items():
        plan = dict(zip(_PLAN_FIELDS, fields, strict=True))
        if chunk is None:
            include += [{"account": name, **plan} for name in names]
            continue
        for at in range(0, len(names), chunk):
            include.append({"accounts": " ".join(names[at : at + chunk]), **plan})
    return {"include": include}


def plan_fields(reviewed: ReviewedPlan | None) -> tuple[str, ...]:
    """`run-id`, `artifact-name`, `pull-request`, `head-sha` of the plan (empty: none)."""
    if reviewed is None:
        return ("", "", "", "")
    return (
        str(reviewed.run_id),
        reviewed.artifact_name,
        str(reviewed.pull_request),
        reviewed.head_sha,
    )


def plan_lines(reviewed: ReviewedPlan | None) -> list[str]:
    """The GITHUB_OUTPUT lines of the plan to download (each empty when none)."""
    fields = zip(_PLAN_FIELDS, plan_fields(reviewed), strict=True)
    return [f"{name}={value}" for name, value in fields]


def accounts_lines(
    forge: GitHubForge,
    accounts: Targets,
    sha: str,
    *,
    artifact: str,
    workflow: str,
    chunk: int | None,
) -> tuple[list[str], list[str]]:
    """The accounts workflow's lines, `matrix=`, `names=` and `pulls=` (the pull requests each
    account's outcome comment goes on), and the notices of the pending ones."""
    found = with_reviewed_plans(forge, pending_fleet(forge, accounts, sha), artifact, workflow)
    pulls = {item.account: list(item.pulls) for item in found}
    return [
        f"matrix={json.dumps(matrix(found, chunk), separators=(',', ':'))}",
        f"names={' '.join(item.account for item in found)}",
        f"pulls={json.dumps(pulls, separators=(',', ':'))}",
    ], [item.annotation(forge, sha, "notice") for item in found]


def action_lines(
    forge: GitHubForge, accounts: Targets, sha: str, *, artifact: str, workflow: str, drift: bool
) -> list[str]:
    """The composite action's lines for its one account: the reviewed plan to download
    (`run-id=`, `artifact-name=`, `pull-request=`, `head-sha=`, empty when none) and `pulls=`,
    the pull requests its outcome comment goes on (those pending, and the one merged as `sha`:
    a re-run or a late run superseded says so there); or the drift check's report."""
    if drift:
        return report(forge, accounts, sha)
    (target,) = accounts.targets
    found = with_reviewed_plans(forge, pending_fleet(forge, accounts, sha), artifact, workflow)
    pulls = list(found[0].pulls) if found else []
    pulls += [number for number in forge.requests_of([sha]) if number not in pulls]
    lines = plan_lines(found[0].reviewed if found else None)
    return [*lines, f"pulls={json.dumps({target.name: pulls}, separators=(',', ':'))}"]


def summary_lines(forge: GitHubForge, accounts: Targets, sha: str) -> list[str]:
    """The accounts drift check's report: a warning per account not applied, and a count."""
    found = pending_fleet(forge, accounts, sha)
    every = plural(len(accounts.targets), "account")
    lines = [item.annotation(forge, sha, "warning") for item in found]
    return [*lines, f"{counted(len(found))} of {every} not applied at {sha[:12]}"]
