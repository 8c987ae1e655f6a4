"""One account's apply on GitLab after a merge: what the default branch says, in order, from the
account's last successful apply; its outcome on the merge requests; the drift job's report.

The apply job of an account (environment `production-<name>`, so GitLab records it as a
deployment there) decides, with `record.standing`:

1. superseded: the account's files at the pipeline's commit are not those at the default
   branch's head (a retried old job, a late manual job, a pipeline out of order): nothing is
   applied, the merge that supersedes it is named, and the job exits `SUPERSEDED_EXIT`, which
   the pipeline allows to fail, so its deployment is not a success;
2. nothing to do: its last successful apply (deployment) holds the same files;
3. else the merges since that apply are pending, and the plan reviewed on the merge request of
   the newest of them applies as saved (planned for it, at its merged head, from these files,
   still fresh), or a new plan only when `plan-compare` finds the same changes; with no plan
   reviewed nothing is applied, and the job fails unless there is nothing to apply.

Each job keeps its outcome in `outcomes/<name>.json` (its artifact); the `outcome` job, which
holds no account's variable, joins them into ONE note per merge request, updated in place.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from reconciler.accounts.file import (
    AccountEntry,
    AccountsFile,
    find_accounts_file,
    load_accounts_file,
)
from reconciler.errors import ReconcilerError
from reconciler.gitops.deployments import DEFAULT_ENVIRONMENT
from reconciler.gitops.gitlab import GitLab
from reconciler.gitops.gitlab_jobs import reviewed_plans, upsert_note
from reconciler.gitops.gitlab_record import SUPERSEDED_EXIT, GitLabRecord
from reconciler.gitops.history import HistoryError, account_scope, head_of
from reconciler.gitops.landing import Run, run_reconciler
from reconciler.gitops.outcome import (
    APPLIED,
    FAILED,
    NOTHING,
    OUTCOME,
    REFUSED,
    SUPERSEDED,
    Landing,
    outcome_body,
)
from reconciler.gitops.record import Standing, standing
from reconciler.gitops.statuses import saved_counts
from reconciler.render.marker import Marker

T = TypeVar("T")
P = ParamSpec("P")


def in_project(
    accounts_file: Path | None,
    act: Callable[Concatenate[GitLab, AccountsFile, P], T],
    *args: P.args,
    **kwargs: P.kwargs,
) -> T:
    """`act` with the project's API (GitLab CI's variables) and the accounts file (the given
    one, else reconciler.yaml here or above): what each `reconciler gitlab` job starts with."""
    accounts = load_accounts_file(find_accounts_file(accounts_file))
    with GitLab.from_environment() as client:
        return act(client, accounts, *args, **kwargs)


@dataclass(frozen=True, slots=True)
class ApplyJob:
    """The job: the commit applied, the default branch, this job's page, a work folder, the
    outcomes' folder (the job's artifact) and the record's environment."""

    sha: str
    default_branch: str
    job_url: str
    work: Path
    outcomes: Path = Path("outcomes")
    environment: str = DEFAULT_ENVIRONMENT


def apply_account(
    client: GitLab, accounts: AccountsFile, name: str, job: ApplyJob, run: Run | None = None
) -> int:
    """Apply the account as the default branch says; its outcome kept; the exit status."""
    entry = accounts.named(name)
    if entry is None:
        raise ReconcilerError(f"no account named {name} in {accounts.path}")
    record, scope = GitLabRecord(client, job.environment), account_scope(accounts, entry)
    try:
        where = standing(record, scope, job.sha, head_of(scope, job.default_branch))
    except HistoryError as error:  # its record cannot be read: it fails, and is told
        landing = Landing(name, FAILED, f"where it stands is unknown: {error.one_line()}")
        return _keep(job, landing, record.requests_of([job.sha]), 1)
    requests = list(where.requests)  # applied: the merges since undid each other's changes
    if where.superseded_by is not None:
        landing, status = Landing(name, SUPERSEDED, where.superseded(job.sha)), SUPERSEDED_EXIT
        requests = record.requests_of([job.sha])  # its own merge request is told
    elif where.applied:
        since = (where.since or "")[:12]
        landing, status = Landing(name, NOTHING, f"nothing to do: applied at {since}"), 0
    else:
        landing, status = _land(client, where, job, run or run_reconciler)
    return _keep(job, landing, requests, status)


def _keep(job: ApplyJob, landing: Landing, requests: list[int], status: int) -> int:
    """Say the account's outcome and keep it for the outcome notes; the job's exit status."""
    name = landing.account
    print(f"{name}: {landing.summary}", flush=True)
    job.outcomes.mkdir(parents=True, exist_ok=True)
    kept = {"account": name, "kind": landing.kind, "description": landing.description,
            "job_url": job.job_url, "sha": job.sha, "merge_requests": requests}  # fmt: skip
    (job.outcomes / f"{name}.json").write_text(json.dumps(kept, indent=2), encoding="utf-8")
    return status


def _land(client: GitLab, where: Standing, job: ApplyJob, run: Run) -> tuple[Landing, int]:
    name, pending = where.account, where.pending()
    reviewed = (
        reviewed_plans(client, where.merges[-1], job.work / "reviewed-artifact")
        if where.merges
        else None
    )
    plan = reviewed.folder / "plans" / f"{name}.json" if reviewed is not None else None
    if reviewed is None or plan is None or not plan.is_file():
        status = run(["plan", "--account", name, "--detailed-exitcode"], None)
        if status == 0:
            return Landing(name, NOTHING, f"nothing to do ({pending})"), 0
        print(f"{name}: no plan reviewed on a merge request: nothing applied", flush=True)
        why = "there are changes to apply" if status == 2 else "planning it failed (above)"
        said = (
            f"no plan reviewed on a merge request for {job.sha[:12]} (a direct push, an account "
            f"the merge request did not plan, or the plan artifact expired), and {why}: nothing "
            f"was applied ({pending}). Open a merge request so the plan is reviewed."
        )
        return Landing(name, REFUSED if status == 2 else FAILED, said), 1
    mine, new = job.work / "reviewed" / name, job.work / "new" / name
    mine.mkdir(parents=True, exist_ok=True)
    shutil.copy(plan, mine / f"{name}.json")
    expect = ["--expect-pull-request", str(reviewed.iid), "--expect-head-sha", reviewed.head_sha]
    if run(["apply", str(mine), "--account", name, *expect], None) == 0:
        return Landing(name, APPLIED, f"the reviewed plan was applied: {saved_counts(plan)}"), 0
    print(f"{name}: the reviewed plan was not applied as saved; planning again", flush=True)
    status = run(["plan", "--account", name, "--out", str(new)], None)
    if status == 0:
        status = run(["plan-compare", str(mine / f"{name}.json"), str(new / f"{name}.json")], None)
    if status == 0:
        status = run(["apply", str(new), "--account", name], None)
        if status == 0:
            said = "a new plan, equal to the reviewed one, was applied: "
            said += saved_counts(new / f"{name}.json")
            return Landing(name, APPLIED, said), 0
    elif status == 2:
        said = f"the plan at merge differs from the reviewed plan: nothing was applied ({pending})"
        return Landing(name, REFUSED, said), 2
    said = f"not applied, or applied in part: see the job's log ({pending})"
    return Landing(name, FAILED, said), status


@dataclass(frozen=True, slots=True)
class OutcomeJob:
    """The outcome job: the commit applied, the pipeline's page, the apply jobs' outcomes and
    the record's environment."""

    sha: str
    pipeline_url: str
    outcomes: Path = Path("outcomes")
    environment: str = DEFAULT_ENVIRONMENT


def post_outcome_notes(client: GitLab, accounts: AccountsFile, job: OutcomeJob) -> str:
    """Keep ONE outcome note on each merge request an account of this pipeline applied (or
    tried to): a row per account; an apply job that kept no outcome did not finish. What was
    done, a line per merge request."""
    record = GitLabRecord(client, job.environment)
    rows: dict[int, list[tuple[Landing, str | None]]] = {}
    for entry in accounts.accounts:
        kept = _read_outcome(job.outcomes / f"{entry.name}.json")
        if kept is None:
            kept = _unfinished(record, accounts, entry, job.sha)
            if kept is None:
                continue
        for iid in kept[2]:
            rows.setdefault(iid, []).append(kept[:2])
    marker, done = Marker(OUTCOME, "accounts"), []
    for iid, mine in sorted(rows.items()):
        notes = client.get(f"/merge_requests/{iid}/notes", {"per_page": "100"})
        existing = next((n["body"] for n in notes if marker.matches(n.get("body"))), None)
        before = marker.strip(existing) if existing is not None else None
        body = marker.stamp(outcome_body(mine, job.sha, job.pipeline_url, before))
        done.append(f"!{iid}: {upsert_note(client, iid, body, marker)} the outcome note")
    return "\n".join(done) or "no merge request to tell"


def _unfinished(
    record: GitLabRecord, accounts: AccountsFile, entry: AccountEntry, sha: str
) -> tuple[Landing, str | None, list[int]] | None:
    """The outcome of an account whose apply job kept none (None: it is applied at `sha`)."""
    said = "did not finish: cancelled, or failed before it said"
    try:
        where = standing(record, account_scope(accounts, entry), sha, sha)
    except HistoryError as error:  # told to the request merged as `sha`
        said += f"; where it stands is unknown: {error.one_line()}"
        return Landing(entry.name, FAILED, said), None, record.requests_of([sha])
    if where.applied:
        return None
    return Landing(entry.name, FAILED, f"{said} ({where.pending()})"), None, list(where.requests)


def _read_outcome(path: Path) -> tuple[Landing, str | None, list[int]] | None:
    if not path.is_file():
        return None
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        landing = Landing(str(kept["account"]), str(kept["kind"]), str(kept["description"]))
        requests = [int(iid) for iid in kept["merge_requests"]]
        url = kept.get("job_url")
    except (ValueError, KeyError, TypeError) as error:
        raise ReconcilerError(f"{path}: not an apply job's outcome ({error})") from None
    if landing.kind not in (APPLIED, NOTHING, SUPERSEDED, REFUSED, FAILED):
        raise ReconcilerError(f"{path}: unknown outcome {landing.kind!r}")
    return landing, str(url) if url else None, requests


def pending_report(
    client: GitLab,
    accounts: AccountsFile,
    name: str,
    sha: str,
    environment: str = DEFAULT_ENVIRONMENT,
) -> str:
    """The drift job's line: whether the account's files at `sha` are applied."""
    entry = accounts.named(name)
    if entry is None:
        raise ReconcilerError(f"no account named {name} in {accounts.path}")
    try:
        where = standing(
            GitLabRecord(client, environment), account_scope(accounts, entry), sha, sha
        )
    except HistoryError as error:
        return f"{name}: not applied at {sha[:12]}: where it stands is unknown: {error.one_line()}"
    if where.applied:
        return (
            f"{name}: applied at {sha[:12]} (its last successful apply: {(where.since or '')[:12]})"
        )
    return f"{name}: not applied at {sha[:12]}: {where.pending()}"
