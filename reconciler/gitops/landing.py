"""An account's apply after a merge: what the default branch says, in order, from its last
successful apply. Written once, for every forge (`forge.Forge`) and every shape of repository:
the accounts of an accounts file, or a single desired-state PATH (the composite action's
`path`, named by its key) as an accounts file of one entry (`accounts.targets`). The
decisions, in order, for each:

1. superseded: the account's files at the commit run at are not its files at the default
   branch's head (a re-run, a late approval, a queued run out of order): nothing is applied, and
   the merge that supersedes it is named; the run of that merge applies the account;
2. already applied: its last successful apply (its record) holds the same files;
3. a reviewed plan applies as saved when it was planned for the change request, at its merged
   head, from these files, and is still fresh; else a new plan applies only when it makes
   exactly the reviewed changes (`plan-compare`); else it is refused, on the change request;
4. with no plan reviewed (a direct push, an account the change request did not plan, an
   expired artifact), nothing is applied, and it fails unless there is nothing to apply.

An `apply` refused by the account's lock (another apply of the account holds it: a laptop's
with the forge's token, another job's) is said as such, naming the holder `apply` noted beside
the records (`apply.lock.REFUSAL_NOTE`): nothing is applied, nothing is planned again, and the
merge stays pending.

Each outcome is recorded on the forge (`Forge.record_end`), which the next run reads as the
last successful apply and the outcome note shows. The commands run are the reconciler's own
(`apply`, `plan`, `plan-compare`), in a child process each: this module decides, they act.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from reconciler.accounts.history import HistoryError, has_commit
from reconciler.accounts.saved_view import read_document, saved_counts
from reconciler.accounts.targets import Target, Targets
from reconciler.apply.lock import read_refusal
from reconciler.errors import EXIT_POLICY_CHANGE, ReconcilerError
from reconciler.gitops.forge import ApplyJob, Forge, Reviewed
from reconciler.gitops.notes import upsert_note
from reconciler.gitops.outcome import APPLIED, FAILED, NOTHING, REFUSED, SUPERSEDED, Landing
from reconciler.gitops.record import Standing, standing
from reconciler.render.marker import APPLY, Marker

#: A landing's exit status when a newer merge superseded it: a job may allow it to fail, so its
#: record (where the forge makes it of the job) is not a success.
SUPERSEDED_EXIT = 3
#: Runs `reconciler ARGS` (stdout to the file, if given); its exit status.
Run = Callable[[list[str], Path | None], int]
#: The plans reviewed for an account that is pending (the job's download, or the forge's).
FindReviewed = Callable[[Standing], Reviewed]


def land_fleet(
    forge: Forge,
    accounts: Targets,
    reviewed: FindReviewed,
    job: ApplyJob,
    run: Run | None = None,
) -> list[tuple[Landing, int]]:
    """Apply each account as the default branch says; each one's outcome, recorded, and the
    exit status it gives a job of its own. An account with no entry fails, alone."""
    landed = [(Landing(name, FAILED, why), 1) for name, why in accounts.missing.items()]
    return landed + [land(forge, target, reviewed, job, run) for target in accounts.targets]


def land(
    forge: Forge, target: Target, reviewed: FindReviewed, job: ApplyJob, run: Run | None = None
) -> tuple[Landing, int]:
    """Apply one account as the default branch says; its outcome, recorded, and its status."""
    forge.section(target.name, True)
    landing, status = _land(forge, target, reviewed, job, run or run_reconciler)
    print(forge.annotate(landing.annotation, f"{target.name}: {landing.description}"), flush=True)
    forge.section(target.name, False)
    return landing, status


def _land(
    forge: Forge, target: Target, reviewed: FindReviewed, job: ApplyJob, run: Run
) -> tuple[Landing, int]:
    scope, environment = target.scope, target.environment
    head = forge.default_head(job.default_branch, scope)
    if head != job.sha and not has_commit(scope, head):
        landing = Landing(
            scope.name,
            SUPERSEDED,
            f"superseded by {head[:12]}, the default branch's head, which this run's checkout "
            "does not hold (pushed since it was fetched): nothing was applied; the apply of "
            "the newer merge applies it",
        )
        return _record(forge, target, job, landing, forge.requests_of([job.sha])), SUPERSEDED_EXIT
    try:
        at = standing(forge, environment, scope, job.sha, head)
    except HistoryError as error:  # its record cannot be read: this account fails, alone
        landing = Landing(scope.name, FAILED, f"where it stands is unknown: {error.one_line()}")
        return _record(forge, target, job, landing, forge.requests_of([job.sha])), 1
    if at.superseded_by is not None:
        landing = Landing(scope.name, SUPERSEDED, at.superseded(job.sha))
        return _record(forge, target, job, landing, forge.requests_of([job.sha])), SUPERSEDED_EXIT
    if at.applied:  # the merges since undid each other's changes
        landing = Landing(scope.name, NOTHING, f"nothing to do: applied at {str(at.since)[:12]}")
        return _record(forge, target, job, landing, at.requests), 0
    found = reviewed(at)
    plan = target.plan_in(found.folder) if found.folder is not None else None
    if plan is None or not plan.is_file():
        landing, status = _unreviewed(forge, target, job, at, run)
        return _record(forge, target, job, landing, at.requests), status
    return _reviewed(forge, target, plan, found, job, at, run)


def _unreviewed(
    forge: Forge, target: Target, job: ApplyJob, at: Standing, run: Run
) -> tuple[Landing, int]:
    name, pending, words = target.name, at.pending(), forge.words
    status = run(["plan", *target.desired_state(), "--detailed-exitcode"], None)
    if status == 0:
        return Landing(name, NOTHING, f"nothing to do ({pending})"), 0
    if words.unreviewed:
        print(words.unreviewed.format(name=name), flush=True)
    why = "there are changes to apply" if status == 2 else f"planning it failed (see {words.log})"
    said = (
        f"no plan reviewed on a {words.request} for {job.sha[:12]} (a direct push, an account "
        f"the {words.request} did not plan, or the plan artifact expired), and {why}: nothing "
        f"was applied ({pending}). Open a {words.request} so the plan is reviewed."
    )
    return Landing(name, REFUSED if status == 2 else FAILED, said), 1


def _reviewed(
    forge: Forge,
    target: Target,
    plan: Path,
    reviewed: Reviewed,
    job: ApplyJob,
    at: Standing,
    run: Run,
) -> tuple[Landing, int]:
    name, pending, words = target.name, at.pending(), forge.words
    work = job.work / name
    saved, new = work / "reviewed", work / "new"
    saved.mkdir(parents=True, exist_ok=True)
    new.mkdir(parents=True, exist_ok=True)
    shutil.copy(plan, target.plan_in(saved))
    records = work / "records"
    approvals = _approval_options(job, at, reviewed, records)
    expect = ["--expect-pull-request", str(reviewed.pull_request or 0)]
    expect += ["--expect-head-sha", str(reviewed.head_sha or ""), *target.expect_files()]
    document = read_document(plan)
    digest = document.get("mac") if isinstance(document, dict) else None
    digest = digest if isinstance(digest, str) else None
    started = forge.record_start(target.environment, job, reviewed.pull_request, digest,
                                 "applying")  # fmt: skip

    def finish(landing: Landing, status: int) -> tuple[Landing, int]:
        forge.record_end(started, job, landing, at.requests)
        return landing, status

    def held_back(status: int) -> tuple[Landing, int] | None:
        """An apply that applied nothing and keeps the merge pending: a change of the
        approvals policy waiting for its approvals, or another apply holding the account."""
        if status == EXIT_POLICY_CHANGE:
            return finish(_policy_waits(name, records, pending), EXIT_POLICY_CHANGE)
        if (held := read_refusal(records)) is not None:
            return finish(_lock_refused(name, held, pending), 1)
        return None

    status = run(["apply", *target.source(saved), *expect, *approvals], None)
    if status == 0:
        said = f"the reviewed plan was applied: {saved_counts(plan)}"
        return finish(*_paid(forge, Landing(name, APPLIED, said, "reviewed"), job, records))
    if (ended := held_back(status)) is not None:
        return ended
    print(words.replanning.format(name=name), flush=True)
    compare = work / "compare.md"
    out = str(target.plan_in(new) if target.desired is not None else new)
    status = run(["plan", *target.desired_state(), "--out", out], None)
    if status == 0:
        status = run(
            ["plan-compare", str(target.plan_in(saved)), str(target.plan_in(new)),
             "--format", "markdown"],
            compare,
        )  # fmt: skip
    if status == 0:
        status = run(["apply", *target.source(new), *approvals], None)
        if status == 0:
            counted = saved_counts(target.plan_in(new))
            applied = f"a new plan, equal to the reviewed one, was applied: {counted}"
            return finish(*_paid(forge, Landing(name, APPLIED, applied, "replanned"), job, records))
        if (ended := held_back(status)) is not None:
            return ended
    elif status == 2 and reviewed.pull_request is not None:
        body = _refusal(target, compare, new, run)
        upsert_note(forge, reviewed.pull_request, body, Marker(APPLY, target.comment_key))
        said = f"the plan at merge differs from the reviewed plan: nothing was applied ({pending})"
        return finish(Landing(name, REFUSED, said), 2)
    said = f"not applied, or applied in part: see {words.log} ({pending})"
    return finish(*_paid(forge, Landing(name, FAILED, said), job, records, status))


def _approval_options(job: ApplyJob, at: Standing, reviewed: Reviewed, records: Path) -> list[str]:
    """What `apply` is told of the approvals: the change requests merged since the last apply
    (whose reviews it reads before any write), the commit whose policy is in force (`none`:
    never applied), this run's page and where to write the records."""
    requests = list(at.requests) or [n for n in (reviewed.pull_request,) if n is not None]
    options = ["--policy-at", at.since or "none", "--run-url", job.log_url]
    options += ["--records-out", str(records)]
    if requests:
        options += ["--approvals-from", ",".join(str(number) for number in requests)]
    return options


def _paid(
    forge: Forge, landing: Landing, job: ApplyJob, records: Path, status: int = 0
) -> tuple[Landing, int]:
    """After an apply that sent something: who approved each payrun, what the others wait
    for, and the records kept on the forge (not kept: said, and the job fails)."""
    from reconciler.accounts.records import read_approvals  # the apply's modules: only here

    try:
        told = read_approvals(records)
        said, why = told.parts(), told.why()
    except ReconcilerError as error:
        said, why = [f"its approvals cannot be told: {error.one_line()}"], []
    unkept = _keep_records(forge, records, landing.account, job.sha, job.log_url)
    if unkept is not None:
        print(forge.annotate("error", f"{landing.account}: {unkept}"), flush=True)
        said, status = [unkept, *said], status or 1
    # What waits and who approved first: a forge may cut an outcome (a GitHub status at 140).
    described = "; ".join([*said, landing.description, *why])
    return dataclasses.replace(landing, description=described), status


def _keep_records(forge: Forge, folder: Path, account: str, sha: str, log_url: str) -> str | None:
    """Keep the records `apply` wrote in `folder` on the records branch, through the forge
    (`Forge.keep_files`: a branch nobody's workflow runs from, whose history git keeps as long
    as the repository). None: kept (or none to keep); else why not, to say on the outcome (the
    money is paid all the same)."""
    from reconciler.accounts.records import RECORDS_BRANCH, record_files

    try:
        files = record_files(folder) if folder.is_dir() else {}
        if files:
            message = f"reconciler: the records of {account} applied at {sha[:12]}\n\n{log_url}\n"
            forge.keep_files(RECORDS_BRANCH, files, message)
    except ReconcilerError as error:
        return f"its records could not be kept on {RECORDS_BRANCH}: {error.one_line()}"
    return None


def _policy_waits(name: str, records: Path, pending: str) -> Landing:
    """`apply` exit 4: a change of the approvals policy without the approvals the policy in
    force asks for; nothing was applied, and it and every later merge stay pending."""
    from reconciler.accounts.records import read_approvals

    try:
        waits = read_approvals(records).policy
    except ReconcilerError:
        waits = None
    said = (
        f"the change of its approvals policy waits for the approvals the policy in force asks "
        f"for ({waits or 'see the log'}): nothing was applied ({pending}); it and every later "
        "merge stay pending until it has them"
    )
    return Landing(name, REFUSED, said)


def _lock_refused(name: str, held: str, pending: str) -> Landing:
    """`apply` refused by the account's lock (what it noted beside the records): another
    apply (a laptop's, another job's) holds the account; the merge stays pending."""
    held = held.removesuffix("; nothing was changed")
    said = (
        f"refused by the account's lock: {held}: nothing was applied ({pending}); the merge "
        "stays pending: run this job again once that apply ended"
    )
    return Landing(name, REFUSED, said)


def _refusal(target: Target, compare: Path, new: Path, run: Run) -> str:
    """The refusal note: the differences, then the plan at merge (folded) when it renders."""
    body = compare.read_text(encoding="utf-8")
    rendered = compare.with_name("new-plan.md")
    if run(["comment", *target.source(new)], rendered) != 0:
        return body
    lines = rendered.read_text(encoding="utf-8").splitlines()
    plan = "\n".join(lines[1:] if lines and lines[0].startswith("<!--") else lines)
    folded = f"<details><summary>The plan at merge</summary>\n\n{plan}\n\n</details>"
    return f"{body.rstrip()}\n\n{folded}\n"


def _record(
    forge: Forge, target: Target, job: ApplyJob, landing: Landing, requests: Sequence[int]
) -> Landing:
    """Record an outcome that applied nothing (started and ended at once)."""
    started = forge.record_start(target.environment, job, None, None, landing.summary)
    forge.record_end(started, job, landing, requests)
    return landing


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
