"""Which accounts a run applies: each from its last successful apply to the commit run at.

Not the push's `before`: GitHub keeps one pending run per concurrency group and cancels the
older one, and a failed or cancelled apply leaves its merge behind; so an account is pending
while its files at the commit differ from its files at its last successful apply (its
deployment, `reconciler.gitops.deployments`), or it has never been applied. For each, the
merges pending (oldest first), their pull requests, and the plan reviewed on the pull request of
the newest of them: that plan was made from the files the run applies, if any plan was.
The same for an account of the accounts file (`pending_accounts`) and for the composite
action's single account (`pending_scope`, with `history.path_scope`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from reconciler.accounts.file import AccountsFile
from reconciler.annotations import workflow_command
from reconciler.gitops.deployments import environment_of
from reconciler.gitops.github import GitHub
from reconciler.gitops.history import HistoryError, Scope, account_scope
from reconciler.gitops.record import GitHubRecord, pulls_of, standing
from reconciler.gitops.runs import ReviewedPlan, find_reviewed_plan

_PLAN_FIELDS = ("run-id", "artifact-name", "pull-request", "head-sha")


@dataclass(frozen=True, slots=True)
class Pending:
    """An account whose files at the commit are not applied: since which apply, which merges."""

    account: str
    since: str | None  # the last successful apply's commit; None: never applied
    merges: tuple[str, ...]
    pulls: tuple[int, ...]
    reviewed: ReviewedPlan | None
    unknown: str | None = None  # why its record could not be read: its apply fails, alone

    def describe(self) -> str:
        """'pending since 9fceb02d0ae5, #31, #32' (or 'never applied, ...'), or why where it
        stands is unknown."""
        if self.unknown is not None:
            return f"where it stands is unknown: {self.unknown}"
        since = f"pending since {self.since[:12]}" if self.since else "never applied"
        pulls = ", ".join(f"#{number}" for number in self.pulls)
        return f"{since}, {pulls}" if pulls else since

    def annotation(self, sha: str, level: str) -> str:
        """The drift check's or the pending job's line: `level` ('warning', 'notice') unless
        where it stands is unknown, which is an error."""
        said = f"not applied at {sha[:12]}: " if level == "warning" else ""
        message = f"{self.account}: {said}{self.describe()}"
        return workflow_command("error" if self.unknown else level, message)


def pending_accounts(
    github: GitHub,
    accounts: AccountsFile,
    sha: str,
    *,
    environment: str,
    artifact: str,
    workflow: str,
) -> list[Pending]:
    """The accounts not applied at `sha`, in the file's order."""
    found = []
    for entry in accounts.accounts:
        scope = account_scope(accounts, entry)
        where = environment_of(environment, entry.name)
        item = pending_scope(github, scope, sha, environment=where, artifact=artifact,
                             workflow=workflow)  # fmt: skip
        if item is not None:
            found.append(item)
    return found


def pending_scope(
    github: GitHub, scope: Scope, sha: str, *, environment: str, artifact: str, workflow: str
) -> Pending | None:
    """The account's merges not applied at `sha`, recorded in `environment` (None: none). A
    record that cannot be read (its commit gone) makes the account pending, as unknown, with the
    pull request merged as `sha`: its apply then fails saying why, and the others' go on."""
    try:
        at = standing(GitHubRecord(github, environment), scope, sha, sha)
    except HistoryError as error:
        return Pending(scope.name, None, (), tuple(pulls_of(github, [sha])), None, error.one_line())
    if at.applied:
        return None
    merges = at.merges
    reviewed = find_reviewed_plan(github, merges[-1], artifact, workflow) if merges else None
    return Pending(scope.name, at.since, merges, at.requests, reviewed)


def matrix(pending: Iterable[Pending], chunk: int | None) -> dict[str, list[dict[str, str]]]:
    """A GitHub Actions matrix of the pending accounts with the reviewed plan each is to apply:
    `{"account": "eu", "run-id": ..., "artifact-name": ..., "pull-request": ..., "head-sha":
    ...}`; with `chunk`, `{"accounts": "eu us", ...}`, at most `chunk` accounts a job, those of
    one job sharing one reviewed plan artifact (the job downloads one)."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for item in pending:
        groups.setdefault(_plan_fields(item.reviewed), []).append(item.account)
    include = []
    for fields, names in groups.items():
        plan = dict(zip(_PLAN_FIELDS, fields, strict=True))
        if chunk is None:
            include += [{"account": name, **plan} for name in names]
            continue
        for at in range(0, len(names), chunk):
            include.append({"accounts": " ".join(names[at : at + chunk]), **plan})
    return {"include": include}


def _plan_fields(reviewed: ReviewedPlan | None) -> tuple[str, ...]:
    if reviewed is None:
        return ("", "", "", "")
    return (
        str(reviewed.run_id),
        reviewed.artifact_name,
        str(reviewed.pull_request),
        reviewed.head_sha,
    )


def pending_path(
    github: GitHub,
    scope: Scope,
    sha: str,
    *,
    environment: str,
    artifact: str,
    workflow: str,
    report: bool,
) -> list[str]:
    """The single account's lines: for its apply, GITHUB_OUTPUT lines, the reviewed plan to
    download (`run-id=`, `artifact-name=`, `pull-request=`, `head-sha=`, empty when none) and
    `pulls=`, the pull requests its outcome comment goes on (those pending, and the one merged
    as `sha`: a re-run or a late run superseded says so there); or the drift check's report."""
    item = pending_scope(
        github, scope, sha, environment=environment, artifact=artifact, workflow=workflow
    )
    if report:
        if item is None:
            return [f"{scope.name}: applied at {sha[:12]}"]
        return [item.annotation(sha, "warning")]
    fields = _plan_fields(item.reviewed if item is not None else None)
    lines = [f"{name}={value}" for name, value in zip(_PLAN_FIELDS, fields, strict=True)]
    pulls = list(item.pulls) if item is not None else []
    pulls += [number for number in pulls_of(github, [sha]) if number not in pulls]
    return [*lines, f"pulls={json.dumps({scope.name: pulls}, separators=(',', ':'))}"]


def pulls_by_account(pending: Iterable[Pending]) -> dict[str, list[int]]:
    """Each pending account's pull requests, for the outcome comment."""
    return {item.account: list(item.pulls) for item in pending}
