"""Which accounts a run applies: each from its last successful apply to the commit run at.

Not the push's `before`: GitHub keeps one pending run per concurrency group and cancels the
older one, and a failed or cancelled apply leaves its merge behind; so an account is pending
while its files at the commit differ from its files at its last successful apply (its
deployment, `reconciler.gitops.deployments`), or it has never been applied. For each, the
merges pending (oldest first), their pull requests, and the plan reviewed on the pull request of
the newest of them: that plan was made from the files the run applies, if any plan was.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from reconciler.accounts.file import AccountEntry, AccountsFile
from reconciler.gitops.deployments import environment_of, last_applied
from reconciler.gitops.github import GitHub
from reconciler.gitops.history import changed_between, merges_between
from reconciler.gitops.runs import ReviewedPlan, find_reviewed_plan, merged_pull_request

_PLAN_FIELDS = ("run-id", "artifact-name", "pull-request", "head-sha")


@dataclass(frozen=True, slots=True)
class Pending:
    """An account whose files at the commit are not applied: since which apply, which merges."""

    account: str
    since: str | None  # the last successful apply's commit; None: never applied
    merges: tuple[str, ...]
    pulls: tuple[int, ...]
    reviewed: ReviewedPlan | None

    def describe(self) -> str:
        """'pending since 9fceb02d0ae5, #31, #32' (or 'never applied, ...')."""
        since = f"pending since {self.since[:12]}" if self.since else "never applied"
        pulls = ", ".join(f"#{number}" for number in self.pulls)
        return f"{since}, {pulls}" if pulls else since


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
        record = last_applied(github, environment_of(environment, entry.name))
        since = record.sha if record is not None else None
        if since is not None and not changed_between(accounts, entry, since, sha):
            continue
        found.append(_pending(github, accounts, entry, since, sha, artifact, workflow))
    return found


def _pending(
    github: GitHub,
    accounts: AccountsFile,
    entry: AccountEntry,
    since: str | None,
    sha: str,
    artifact: str,
    workflow: str,
) -> Pending:
    merges = merges_between(accounts, entry, since, sha)
    pulls = pulls_of(github, merges)
    reviewed = find_reviewed_plan(github, merges[-1], artifact, workflow) if merges else None
    return Pending(entry.name, since, tuple(merges), tuple(pulls), reviewed)


def pulls_of(github: GitHub, merges: Iterable[str]) -> list[int]:
    """The pull requests merged as `merges`, in order, each once (a direct push has none)."""
    numbers: list[int] = []
    for merge in merges:
        pulls = github.paginate(github.repo_path(f"commits/{merge}/pulls"))
        pull = merged_pull_request(pulls, merge)
        if pull is not None and int(pull["number"]) not in numbers:
            numbers.append(int(pull["number"]))
    return numbers


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
        plan = dict(
            zip(("run-id", "artifact-name", "pull-request", "head-sha"), fields, strict=True)
        )
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


def pulls_by_account(pending: Iterable[Pending]) -> dict[str, list[int]]:
    """Each pending account's pull requests, for the outcome comment."""
    return {item.account: list(item.pulls) for item in pending}
