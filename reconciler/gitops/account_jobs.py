"""The accounts workflows' per-account loops, out of their bash: each account's drift check
(its report, adoption pull request, job summary and drift issue) and each account's plan
(validate, plan, job summary), one account after the other in a job, and the status the job
exits with.

They are functions of what each command exited with, so a job's behaviour is a table of cases
the unit tests walk through; the workflows only call them. The commands are the reconciler's
own, each in a child process (`landing.run_reconciler`): this module decides, they act. One
account failing never stops the next one of a chunked job.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from reconciler.accounts.selection import matrix
from reconciler.annotations import workflow_command
from reconciler.gitops.drift import DRIFTED, IN_SYNC
from reconciler.gitops.landing import Run, run_reconciler

#: The drift issue's title; {name} is the account's.
DRIFT_TITLE = "reconciler: the account {name} has drifted from the desired state"
#: The job's exit status when an account drifted and the job is asked to fail on drift.
FAILED_ON_DRIFT = 2


@dataclass(frozen=True, slots=True)
class DriftJob:
    """What the drift job was given: a work folder, whether drift fails it, and its drift mode
    (`strict`: `drift --strict`, unmanaged workers and conflicts count as drift; else they are
    reported without opening the issue for them), as the single action's `strict` input."""

    work: Path
    fail_on_drift: bool = False
    title: str = DRIFT_TITLE
    strict: bool = True


def drift_accounts(names: list[str], job: DriftJob, run: Run | None = None) -> int:
    """Check each account for drift and keep its issue and adoption pull request; the job's
    exit status: 1 when a check failed, 2 on drift with `fail_on_drift`, else 0."""
    run = run or run_reconciler
    job.work.mkdir(parents=True, exist_ok=True)
    failed, drifted = [], []
    for name in names:
        status = _drift_one(name, job, run)
        if status == DRIFTED:
            drifted.append(name)
        elif status != IN_SYNC:
            failed.append(name)
    if failed:
        print(f"::error::Not checked: {' '.join(failed)}", flush=True)
        return 1
    return FAILED_ON_DRIFT if drifted and job.fail_on_drift else 0


def _drift_one(name: str, job: DriftJob, run: Run) -> int:
    """`drift`, then what it found proposed, summarised and kept in the issue; the status to
    count the account by (1 when the check or keeping its issue failed)."""
    report = job.work / f"drift-{name}.md"
    adoption = job.work / f"adopt-{name}.json"
    adoption.unlink(missing_ok=True)
    mode = ["--strict"] if job.strict else []
    status = run(["drift", "--account", name, *mode, "--format", "markdown"], report)
    # What changed live, proposed as a pull request (docs/adopt.md); the dry run exits 2 when
    # there is something to adopt. A failed one leaves no file: the pull request is left as is.
    adopt = ["adopt", "--account", name, "--dry-run", "--format", "json"]
    if status == DRIFTED and run(adopt, adoption) not in (0, 2):
        adoption.unlink(missing_ok=True)
    keep = ["--drift-exit-status", str(status), "--report-file", str(report), "--key", name]
    if run(["github", "adopt-pr", "--adoption-file", str(adoption), *keep], None) != 0:
        print(f"::warning::{name}: the adoption pull request was left as it was", flush=True)
    summed = run(["github", "step-summary", "--body-file", str(report)], None) == 0
    title = ["--title", job.title.format(name=name)]
    kept = run(["github", "drift-issue", *keep, *title], None) == 0 and summed
    if status not in (IN_SYNC, DRIFTED):
        print(report.read_text(encoding="utf-8") if report.is_file() else "", flush=True)
        print(
            f"::error::{name}: reconciler drift failed (exit {status}); its drift issue was left "
            "as it was.",
            flush=True,
        )
        return status
    if not kept:
        print(f"::error::{name}: its job summary or drift issue could not be kept", flush=True)
        return 1
    return status


@dataclass(frozen=True, slots=True)
class PlanJob:
    """What the plan job was given: the accounts file beside the pull request's files, the
    pull request and commit planned, the folder of the plans, and this job's part's name."""

    accounts_file: Path
    pull_request: int
    head_sha: str
    out: Path
    part: str
    refused: Mapping[str, str] = field(default_factory=dict)  # account: why it is not planned
    github: bool = True  # GitHub's annotations and job summary; else the plan in the log


def plan_accounts(names: list[str], job: PlanJob, run: Run | None = None) -> int:
    """Validate and plan the accounts (signed plans in `out/plans`, the whole Markdown in
    `out/full/<part>.md`, added to the job summary), with the approvals the pull request has
    now (`--approvals-from`: what each payrun needs and has); 1 when one was invalid, refused
    or not planned: the others are planned all the same."""
    run = run or run_reconciler
    plans, full = job.out / "plans", job.out / "full" / f"{job.part}.md"
    plans.mkdir(parents=True, exist_ok=True)
    full.parent.mkdir(parents=True, exist_ok=True)
    for name in names:
        if name in job.refused:
            said = workflow_command("error", f"{name}: not planned: {job.refused[name]}")
            print(said, flush=True)
    planned = [name for name in names if name not in job.refused]
    if not planned:
        full.write_text("", encoding="utf-8")
        return 1
    selected = [word for name in planned for word in ("--account", name)]
    where = ["--accounts-file", str(job.accounts_file), *selected]
    status = run(["validate", *(["--format", "github"] if job.github else []), *where], None)
    planned_status = run(
        ["plan", *where, "--out", str(plans), "--pull-request", str(job.pull_request),
         "--head-sha", job.head_sha, "--approvals-from", str(job.pull_request),
         "--format", "markdown"],
        full,
    )  # fmt: skip
    summary = run(["github", "step-summary", "--body-file", str(full)], None) if job.github else 0
    if planned_status != 0 or not job.github:  # why, in the log too (the summary is elsewhere)
        print(full.read_text(encoding="utf-8") if full.is_file() else "", flush=True)
    failed = status != 0 or planned_status != 0 or summary != 0 or len(planned) < len(names)
    return 1 if failed else 0


def matrix_lines(names: list[str], chunk: int | None) -> list[str]:
    """The `matrix=` and `names=` lines of GITHUB_OUTPUT for the accounts' jobs: one account a
    job (`matrix.account`), or with `chunk`, at most `chunk` a job (`matrix.accounts`)."""
    found = json.dumps(matrix(names, chunk), separators=(",", ":"))
    return [f"matrix={found}", f"names={' '.join(names)}"]
