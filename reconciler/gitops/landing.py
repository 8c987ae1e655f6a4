"""One account's apply after a merge: what main says, in order, from its last successful apply.

One implementation for both shapes of repository: an account of the accounts file
(`land_accounts`, the accounts apply workflow) and the single account of the composite action's
apply mode (`land_path`: its `path`, named by its key). The decisions, in order, for each:

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
from urllib.parse import quote

from reconciler.accounts.file import AccountsFile
from reconciler.annotations import workflow_command
from reconciler.gitops import deployments
from reconciler.gitops.comments import upsert_comment
from reconciler.gitops.github import GitHub, GitHubError
from reconciler.gitops.history import HistoryError, Scope, account_scope, has_commit, path_scope
from reconciler.gitops.outcome import APPLIED, FAILED, NOTHING, REFUSED, SUPERSEDED, Landing
from reconciler.gitops.record import GitHubRecord, standing
from reconciler.gitops.statuses import saved_counts
from reconciler.render.marker import APPLY, Marker

#: The single account's name without a key (as the adoption branch's `reconciler/adopt-default`).
DEFAULT_NAME = "default"
#: Runs `reconciler ARGS` (stdout to the file, if given); its exit status.
Run = Callable[[list[str], Path | None], int]


@dataclass(frozen=True, slots=True)
class Target:
    """What a run lands: the account's scope, the environment its record is kept in, and how the
    reconciler's commands name it: `--account NAME` in the accounts file, or the single
    account's `desired` file or folder (whose refusal comment has the action's `key`)."""

    scope: Scope
    environment: str
    desired: Path | None = None
    comment_key: str | None = None

    @property
    def name(self) -> str:
        return self.scope.name

    def plan_in(self, folder: Path) -> Path:
        """The account's saved plan in a folder of plans: `<name>.json`, or the action's
        `plan.json`."""
        return folder / ("plan.json" if self.desired is not None else f"{self.name}.json")

    def source(self, folder: Path) -> list[str]:
        """The plans to apply or comment: the folder with `--account NAME`, or the plan file."""
        if self.desired is None:
            return [str(folder), "--account", self.name]
        return [str(self.plan_in(folder))]

    def desired_state(self) -> list[str]:
        """What to plan: `--account NAME`, or the desired-state file or folder."""
        return ["--account", self.name] if self.desired is None else [str(self.desired)]

    def expect_files(self) -> list[str]:
        """The reviewed plan's files check of the single account (an account's plan in a
        folder is checked against its own files by `apply DIR`)."""
        return [] if self.desired is None else ["--expect-files", str(self.desired)]


@dataclass(frozen=True, slots=True)
class Reviewed:
    """The reviewed plans downloaded for this job, and whose they are."""

    folder: Path | None  # `<name>.json` per account (`plan.json`: the action's); None: none
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
    landings = []
    for name in names:
        entry = accounts.named(name)
        if entry is None:
            landings.append(Landing(name, FAILED, f"no account named {name} in {accounts.path}"))
            continue
        environment = deployments.environment_of(where.environment, name)
        target = Target(account_scope(accounts, entry), environment, comment_key=name)
        landings.append(land(github, target, reviewed, where, run))
    return landings


def land_path(
    github: GitHub,
    desired: Path,
    key: str | None,
    reviewed: Reviewed,
    where: Where,
    run: Run | None = None,
) -> Landing:
    """Apply the composite action's single account (its `path`, named by its key, `default`
    without one) as main says; its record is a deployment in `where.environment`."""
    target = Target(path_scope(key or DEFAULT_NAME, desired), where.environment, desired, key)
    return land(github, target, reviewed, where, run)


def land(
    github: GitHub, target: Target, reviewed: Reviewed, where: Where, run: Run | None = None
) -> Landing:
    """Apply one account as main says; its outcome, recorded as its deployment."""
    print(f"::group::{target.name}", flush=True)
    landing = _land(github, target, reviewed, where, run or run_reconciler)
    said = workflow_command(landing.annotation, f"{target.name}: {landing.description}")
    print(said, flush=True)
    print("::endgroup::", flush=True)
    return landing


def _land(github: GitHub, target: Target, reviewed: Reviewed, where: Where, run: Run) -> Landing:
    scope, environment = target.scope, target.environment
    head = default_head(github, where.default_branch)
    if head != where.sha and not has_commit(scope, head):
        landing = Landing(
            scope.name,
            SUPERSEDED,
            f"superseded by {head[:12]}, the default branch's head, which this run's checkout "
            "does not hold (pushed since it was fetched): nothing was applied; the apply of "
            "the newer merge applies it",
        )
        _record(github, environment, where, landing, None)
        return landing
    try:
        at = standing(GitHubRecord(github, environment), scope, where.sha, head)
    except HistoryError as error:  # its record cannot be read: this account fails, alone
        landing = Landing(scope.name, FAILED, f"where it stands is unknown: {error.one_line()}")
        _record(github, environment, where, landing, None)
        return landing
    if at.superseded_by is not None:
        landing = Landing(scope.name, SUPERSEDED, at.superseded(where.sha))
        _record(github, environment, where, landing, None)
        return landing
    if at.applied:
        landing = Landing(scope.name, NOTHING, f"nothing to do: applied at {str(at.since)[:12]}")
        _record(github, environment, where, landing, None)
        return landing
    pending = at.pending()
    plan = target.plan_in(reviewed.folder) if reviewed.folder is not None else None
    if plan is None or not plan.is_file():
        landing = _unreviewed(target, where, pending, run)
        _record(github, environment, where, landing, None)
        return landing
    return _reviewed(github, target, plan, reviewed, where, pending, run)


def default_head(github: GitHub, branch: str) -> str:
    """The commit the default branch is at now, as GitHub says. Never the checkout's
    `origin/<branch>`: when the branch has moved since the push (a re-run, a late approval, a
    run queued out of order, the very runs this is asked for), actions/checkout fetches
    `+<the run's commit>:refs/remotes/origin/<branch>`, so there it is the run's own commit."""
    found = github.get(github.repo_path(f"git/ref/heads/{quote(branch, safe='/')}"))
    sha = found.get("object", {}).get("sha") if isinstance(found, dict) else None
    if not isinstance(sha, str) or not sha:
        raise GitHubError(f"GitHub did not say which commit the branch {branch} is at")
    return sha


def _unreviewed(target: Target, where: Where, pending: str, run: Run) -> Landing:
    name = target.name
    status = run(["plan", *target.desired_state(), "--detailed-exitcode"], None)
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
    target: Target,
    plan: Path,
    reviewed: Reviewed,
    where: Where,
    pending: str,
    run: Run,
) -> Landing:
    name = target.name
    work = where.work / name
    saved, new = work / "reviewed", work / "new"
    saved.mkdir(parents=True, exist_ok=True)
    new.mkdir(parents=True, exist_ok=True)
    shutil.copy(plan, target.plan_in(saved))
    expect = ["--expect-pull-request", str(reviewed.pull_request or 0)]
    expect += ["--expect-head-sha", str(reviewed.head_sha or ""), *target.expect_files()]
    started = _start(github, target.environment, where, reviewed.pull_request, plan)
    if run(["apply", *target.source(saved), *expect], None) == 0:
        said = f"the reviewed plan was applied: {saved_counts(plan)}"
        return _finish(github, started, where, Landing(name, APPLIED, said, "reviewed"))
    print(
        f"::warning::{name}: the reviewed plan was not applied as saved (stale, expired, "
        "planned for other files, another pull request or commit, or failed); planning again.",
        flush=True,
    )
    compare = work / "compare.md"
    out = str(target.plan_in(new) if target.desired is not None else new)
    status = run(["plan", *target.desired_state(), "--out", out], None)
    if status == 0:
        status = run(
            ["plan-compare", str(target.plan_in(saved)), str(target.plan_in(new)),
             "--format", "markdown"],
            compare,
        )  # fmt: skip
    if status == 0 and run(["apply", *target.source(new)], None) == 0:
        counted = saved_counts(target.plan_in(new))
        applied = f"a new plan, equal to the reviewed one, was applied: {counted}"
        landing = Landing(name, APPLIED, applied, "replanned")
        return _finish(github, started, where, landing)
    if status == 2 and reviewed.pull_request is not None:
        body = _refusal(target, compare, new, run)
        upsert_comment(github, reviewed.pull_request, body, Marker(APPLY, target.comment_key))
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


def _refusal(target: Target, compare: Path, new: Path, run: Run) -> str:
    """The refusal comment: the differences, then the plan at merge (folded) when it renders."""
    body = compare.read_text(encoding="utf-8")
    rendered = compare.with_name("new-plan.md")
    if run(["comment", *target.source(new)], rendered) != 0:
        return body
    lines = rendered.read_text(encoding="utf-8").splitlines()
    plan = "\n".join(lines[1:] if lines and lines[0].startswith("<!--") else lines)
    folded = f"<details><summary>The plan at merge</summary>\n\n{plan}\n\n</details>"
    return f"{body.rstrip()}\n\n{folded}\n"


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
