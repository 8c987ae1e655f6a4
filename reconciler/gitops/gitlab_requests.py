"""The accounts file a GitLab merge request is planned with: the default branch's entries, and the
entries of the accounts the merge request adds (as `pull_accounts` does on GitHub).

Every job's `before_script` writes the default branch's `reconciler.yaml` over the merge
request's, so an account the merge request adds would have no job and no plan: the merge would
then find nothing reviewed for it. Its own file is read from git at the commit planned, the
accounts it adds are put after the default branch's (refused, alone, when one names a variable
of the default branch's accounts), and the result is written beside, as
`.reconciler-merge-request.yaml`, so its `path`s are read from the same folder. Nothing else of
the merge request's file is used.
"""

from __future__ import annotations

import dataclasses
import subprocess
import tempfile
from pathlib import Path

from reconciler.accounts.file import DEFAULT_FILE, load_accounts_file
from reconciler.gitops.pull_accounts import PullAccounts, pull_request_accounts

#: The merged file, beside the default branch's.
MERGED = ".reconciler-merge-request.yaml"


def merge_request_accounts(default: Path, head_sha: str) -> PullAccounts:
    """Write the merged file beside `default` (the default branch's reconciler.yaml, in the
    merge request's checkout) from the merge request's own at `head_sha`; what it holds."""
    theirs = _show(default.parent, head_sha, default.name)
    with tempfile.TemporaryDirectory() as folder:
        if theirs is not None:
            (Path(folder) / DEFAULT_FILE).write_bytes(theirs)
        written = pull_request_accounts(default, Path(folder))
        merged = default.parent / MERGED
        merged.unlink(missing_ok=True)  # a link of theirs is never written through
        merged.write_bytes(written.path.read_bytes())
    return dataclasses.replace(written, path=merged)


def accounts_to_plan(default: Path, head_sha: str | None) -> tuple[Path, list[str], str]:
    """The accounts file a merge request's jobs read, its accounts (the new ones included, the
    refused last: each fails alone, saying why), and what to say of the merge request's own
    file (`head_sha` None: not a merge request, the default branch's file as it is)."""
    if head_sha is None:
        return default, load_accounts_file(default).names, ""
    written = merge_request_accounts(default, head_sha)
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


def _show(folder: Path, sha: str, name: str) -> bytes | None:
    """The file `name` of the repository's root at `sha`, as committed (None: there is none)."""
    done = subprocess.run(
        ["git", "-C", str(folder), "show", f"{sha}:./{name}"], capture_output=True, check=False
    )
    return done.stdout if done.returncode == 0 else None
