"""The GitLab pipeline's own jobs, out of its bash: its child pipeline, written from the default
branch's reconciler.yaml (so adding an account edits reconciler.yaml only), the accounts file a
merge request is planned with, and one account's plan.

The child's jobs are those of `templates/gitlab-accounts.yml`, shipped with the reconciler (so a
merge request cannot change them, as the parent pipeline's own file); only its `parallel:
matrix` is written here, one entry per account. Each account's variables are scoped to its
environments (`reconciler-<name>`, `production-<name>`) in GitLab, so no job lists them.

Every job's `before_script` writes the default branch's `reconciler.yaml` over the merge
request's, so an account the merge request adds would have no job and no plan: the merge would
then find nothing reviewed for it. Its own file is read from git at the commit planned, the
accounts it adds are put after the default branch's (refused, alone, when one names a variable
of the default branch's accounts), and the result is written beside, as
`.reconciler-merge-request.yaml`, so its `path`s are read from the same folder. Nothing else of
the merge request's file is used (`reconciler.accounts.pull_request`, as on every forge).
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

from reconciler.accounts.file import DEFAULT_FILE, AccountsFile, load_accounts_file
from reconciler.accounts.pull_request import accounts_at
from reconciler.accounts.selection import changed_accounts
from reconciler.errors import ReconcilerError
from reconciler.gitops.account_jobs import PlanJob, plan_accounts
from reconciler.gitops.landing import Run
from reconciler.words import plural

#: The most jobs GitLab makes of one `parallel: matrix`.
MATRIX_LIMIT = 200
_PLACEHOLDER = "      - ACCOUNT: [] # reconciler.yaml's accounts\n"
#: The merged file, beside the default branch's.
MERGED = ".reconciler-merge-request.yaml"


def template() -> str:
    """The child pipeline's jobs, with an empty matrix."""
    return files("reconciler.gitops").joinpath("templates/gitlab-accounts.yml").read_text("utf-8")


def child_pipeline(names: list[str]) -> str:
    """The child pipeline of these accounts: one job per account and purpose."""
    if not names:
        raise ReconcilerError("reconciler.yaml has no account: there is no pipeline to run")
    if len(names) > MATRIX_LIMIT:
        raise ReconcilerError(
            f"reconciler.yaml has {plural(len(names), 'account')}: GitLab runs at most "
            f"{MATRIX_LIMIT} jobs "
            "of one matrix",
            hint="split the accounts over several projects (docs/accounts-ci.md, GitLab CI)",
        )
    text = template()
    listed = ", ".join(json.dumps(name) for name in names)  # a YAML flow sequence of strings
    return text.replace(_PLACEHOLDER, f"      - ACCOUNT: [{listed}] # reconciler.yaml's accounts\n")


def write_child_pipeline(accounts_file: Path, out: Path, head_sha: str | None = None) -> str:
    """Write the child pipeline of the accounts file's accounts to `out` (with `head_sha`, a
    merge request's: and the accounts it adds, `accounts_to_plan`); what to print."""
    _, names, said = accounts_to_plan(accounts_file, head_sha)
    out.write_text(child_pipeline(names), encoding="utf-8")
    listed = f"{out}: {plural(len(names), 'account')}: {' '.join(names)}"
    return f"{listed}\n{said}" if said else listed


def accounts_to_plan(default: Path, head_sha: str | None) -> tuple[Path, list[str], str]:
    """The accounts file a merge request's jobs read, its accounts (the new ones included, the
    refused last: each fails alone, saying why), and what to say of the merge request's own
    file (`head_sha` None: not a merge request, the default branch's file as it is)."""
    if head_sha is None:
        return default, load_accounts_file(default).names, ""
    written = accounts_at(default, head_sha, MERGED)
    names = [*load_accounts_file(written.path).names, *written.refused]
    said = ""
    if written.problem is not None:
        said = (
            f"the merge request's {DEFAULT_FILE} cannot be read, so no account it adds is "
            f"planned: {written.problem}"
        )
    elif written.new or written.refused:
        said = f"added by the merge request: {' '.join([*written.new, *written.refused])}"
    return written.path, names, said


def plan_merge_request_account(
    default: Path, name: str, since: str, iid: int, head_sha: str, run: Run | None = None
) -> int:
    """Plan the account in the merge request's plans/, with the default branch's accounts
    file (`default`) and the accounts the merge request adds (`accounts_at`)."""
    written = accounts_at(default, head_sha, MERGED)
    job = PlanJob(written.path, iid, head_sha, Path.cwd(), name, written.refused, github=False)
    if name in written.new:  # the default branch has no entry to compare it with
        return plan_accounts([name], job, run)
    return plan_account(load_accounts_file(default), name, since, job, run)


def plan_account(
    accounts: AccountsFile, name: str, since: str, job: PlanJob, run: Run | None = None
) -> int:
    """Plan the account if the merge request changes it (since `since`), else end at once; an
    account the merge request adds that is refused fails, saying why."""
    if name not in job.refused and name not in changed_accounts(accounts, since):
        print(f"{name}: not changed by this merge request", flush=True)
        return 0
    return plan_accounts([name], job, run)
