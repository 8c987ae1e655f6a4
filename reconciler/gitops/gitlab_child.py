"""The GitLab pipeline's account list, out of the pipeline: its child pipeline, written from the
default branch's reconciler.yaml, so adding an account edits reconciler.yaml only.

The child's jobs are those of `templates/gitlab-accounts.yml`, shipped with the reconciler (so a
merge request cannot change them, as the parent pipeline's own file); only its `parallel:
matrix` is written here, one entry per account. Each account's variables are scoped to its
environments (`reconciler-<name>`, `production-<name>`) in GitLab, so no job lists them.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

from reconciler.errors import ReconcilerError
from reconciler.gitops.gitlab_requests import accounts_to_plan
from reconciler.words import plural

#: The most jobs GitLab makes of one `parallel: matrix`.
MATRIX_LIMIT = 200
_PLACEHOLDER = "      - ACCOUNT: [] # reconciler.yaml's accounts\n"


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
    merge request's: and the accounts it adds, `gitlab_requests`); what to print."""
    _, names, said = accounts_to_plan(accounts_file, head_sha)
    out.write_text(child_pipeline(names), encoding="utf-8")
    listed = f"{out}: {plural(len(names), 'account')}: {' '.join(names)}"
    return f"{listed}\n{said}" if said else listed
