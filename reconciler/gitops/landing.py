"""One account's apply after a merge: what main says, in order, from its last successful apply.

The decisions the apply workflow's job makes, in order, for each account it was given:

1. superseded: the account's files at the commit run at are not its files at the default
   branch's head (a re-run, a late approval, a queued run out of order): nothing is applied, and
   the merge that supersedes it is named; the run of that merge applies the account;
2. already applied: its last successful apply (its deployment) holds the same files;
3. a reviewed plan applies as saved when it was planned for the pull request, at its merged
   head, from these files, and is still fresh; else a new plan applies only when it makes
   exactly the reviewed changes (`plan-compare`); else it is refused, on the pull request;
4. with no plan reviewed (a direct push, an account the pull request did not plan, an expired
   artifact), nothing is applied, and it fails unless there is nothing to apply.

Each outcome is recorded as the account's deployment at the commit (`deployments`), which the
next run reads as the last successful apply and the outcome comment shows. The commands run are
the reconciler's own (`apply`, `plan`, `plan-compare`), in a child process each: this module
decides, they act.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from reconciler.accounts.file import AccountEntry, AccountsFile
from reconciler.gitops import deployments
from reconciler.gitops.comments import upsert_comment
from reconciler.gitops.github import GitHub
from reconciler.gitops.history import head_of
from reconciler.gitops.outcome import APPLIED, FAILED, NOTHING, REFUSED, SUPERSEDED, Landing
from reconciler.gitops.record import GitHubRecord, standing
from reconciler.gitops.statuses import counts
from reconciler.render.marker import APPLY, Marker

#: Runs `reconciler ARGS` (stdout to the file, if given); its exit status.
Run = Callable[[list[str], Path | None], int]


@dataclass(frozen=True, slots=True)
class Reviewed:
    """The reviewed plans downloaded for this job, and whose they are."""

    folder: Path | None  # `<name>.json` per account; None: none was found
    pull_request: int | None
    head_sha: str | None


@dataclass(frozen=True, slots=True)
class Where:
    """The run: the commit it applies, the default branch, the record's environment name, the
    run's page, and a work folder."""

    sha: str
    default_branch: str
    environment: str
    log_url: str
    work: Path


def land_accounts(
    github: GitHub,
    accounts: AccountsFile,
    names: list[str],
    reviewed: Reviewed,
    where: Where,
    run: Run | None = None,
) -> list[Landing]:
    """Apply each account named as main says; its outcome, recorded as its deployment."""
    run = run or run_reconciler
    landings = []
    for name in names:
        entry = accounts.named(name)
        if entry is None:
            landings.append(Landing(name, FAILED, f"no account named {name} in {accounts.path}"))
            continue
        print(f"::group::{name}", flush=True)
        landing = _land(github, accounts, entry, reviewed, where, run)
        print(f"::{landing.annotation}::{name}: {landing.description}", flush=True)
        print("::endgroup::", flush=True)
        landings.append(landing)
    return landings


def _land(
    github: GitHub,
    accounts: AccountsFile,
    entry: AccountEntry,
    reviewed: Reviewed,
    where: Where,
    run: Run,
) -> Landing:
    environment = deployments.environment_of(where.environment, entry.name)
    head = head_of(accounts, where.default_branch)
    at = standing(GitHubRecord(github, where.environment), accounts, entry, where.sha, head)
    if at.superseded_by is not None:
        landing = Landing(entry.name, SUPERSEDED, at.superseded(where.sha))
        _record(github, environment, where, landing, None)
        return landing
    if at.applied:
        landing = Landing(entry.name, NOTHING, f"nothing to do: applied at {str(at.since)[:12]}")
        _record(github, environment, where, landing, None)
        return landing
    pending = at.pending()
    plan = reviewed.folder / f"{entry.name}.json" if reviewed.folder is not None else None
    if plan is None or not plan.is_file():
        landing = _unreviewed(entry.name, where, pending, run)
        _record(github, environment, where, landing, None)
        return landing
    return _reviewed(github, entry.name, plan, reviewed, where, environment, pending, run)


def _unreviewed(name: str, where: Where, pending: str, run: Run) -> Landing:
    status = run(["plan", "--account", name, "--detailed-exitcode"], None)
    if status == 0:
        return Landing(name, NOTHING, f"nothing to do ({pending})")
    why = "there are changes to apply" if status == 2 else "planning it failed (see the run's log)"
    return Landing(
        name,
        REFUSED if status == 2 else FAILED,
        f"no plan reviewed on a pull request for {where.sha[:12]} (a direct push, an account "
        f"the pull request did not plan, or the plan artifact expired), and {why}: nothing was "
        f"applied ({pending}). Open a pull request so the plan is reviewed.",
    )


def _reviewed(
    github: GitHub,
    name: str,
    plan: Path,
    reviewed: Reviewed,
    where: Where,
    environment: str,
    pending: str,
    run: Run,
) -> Landing:
    work = where.work / name
    saved, new = work / "reviewed", work / "new"
    saved.mkdir(parents=True, exist_ok=True)
    shutil.copy(plan, saved / f"{name}.json")
    expect = ["--expect-pull-request", str(reviewed.pull_request or 0)]
    expect += ["--expect-head-sha", str(reviewed.head_sha or "")]
    started = _start(github, environment, where, reviewed.pull_request, saved / f"{name}.json")
    if run(["apply", str(saved), "--account", name, *expect], None) == 0:
        landing = Landing(name, APPLIED, f"the reviewed plan was applied: {_counts(plan)}")
        return _finish(github, started, where, landing)
    print(
        f"::warning::{name}: the reviewed plan was not applied as saved (stale, expired, "
        "planned for other files, another pull request or commit, or failed); planning again.",
        flush=True,
    )
    compare = work / "compare.md"
    status = run(["plan", "--account", name, "--out", str(new)], None)
    if status == 0:
        status = run(
            ["plan-compare", str(saved / f"{name}.json"), str(new / f"{name}.json"),
             "--format", "markdown"],
            compare,
        )  # fmt: skip
    if status == 0 and run(["apply", str(new), "--account", name], None) == 0:
        applied = (
            f"a new plan, equal to the reviewed one, was applied: {_counts(new / f'{name}.json')}"
        )
        return _finish(github, started, where, Landing(name, APPLIED, applied))
    if status == 2 and reviewed.pull_request is not None:
        body = compare.read_text(encoding="utf-8")
        upsert_comment(github, reviewed.pull_request, body, Marker(APPLY, name))
        landing = Landing(
            name,
            REFUSED,
            f"the plan at merge differs from the reviewed plan: nothing was applied ({pending})",
        )
        return _finish(github, started, where, landing)
    return _finish(
        github,
        started,
        where,
        Landing(name, FAILED, f"not applied, or applied in part: see the run's log ({pending})"),
    )


def _counts(plan: Path) -> str:
    """'1 to invite, 1 payrun' from the saved plan applied (read for the outcome only)."""
    return counts(json.loads(plan.read_text(encoding="utf-8")))


def _start(
    github: GitHub, environment: str, where: Where, pull_request: int | None, plan: Path
) -> int:
    digest = json.loads(plan.read_text(encoding="utf-8")).get("mac")
    return deployments.start(
        github,
        environment,
        where.sha,
        pull_request=pull_request,
        plan_digest=digest if isinstance(digest, str) else None,
        log_url=where.log_url,
        description="applying",
    )


def _finish(github: GitHub, deployment_id: int, where: Where, landing: Landing) -> Landing:
    deployments.finish(github, deployment_id, landing.state, landing.summary, log_url=where.log_url)
    return landing


def _record(
    github: GitHub, environment: str, where: Where, landing: Landing, pull_request: int | None
) -> None:
    started = deployments.start(
        github,
        environment,
        where.sha,
        pull_request=pull_request,
        plan_digest=None,
        log_url=where.log_url,
        description=landing.summary,
    )
    _finish(github, started, where, landing)


def run_reconciler(args: list[str], stdout: Path | None) -> int:
    """`reconciler ARGS` in a child process, with this job's environment (an empty
    RECONCILER_PLAN_KEY left out: the account's own key variable is used then)."""
    environ: Mapping[str, str] = {
        key: value
        for key, value in os.environ.items()
        if not (key == "RECONCILER_PLAN_KEY" and not value)
    }
    command = [sys.executable, "-m", "reconciler", *args]
    if stdout is None:
        return subprocess.run(command, env=dict(environ), check=False).returncode
    with stdout.open("w", encoding="utf-8") as out:
        return subprocess.run(command, env=dict(environ), stdout=out, check=False).returncode
