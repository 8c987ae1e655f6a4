"""What the files ever listed: the externalIds of every version of them in git.

An open agreement in scope that no version of the files listed was made in the service (HR
invited someone in its screens): prune leaves it (`reconciler.plan.diff`). The history read is
the default branch's where a remote names one (`origin/HEAD`), else the current branch's, and
it is one `git log -p` over the files' paths: bounded by the files' own changes, whatever else
the repository holds. Outside a git repository, or in a shallow clone, it cannot tell.
"""

from __future__ import annotations

import re
from pathlib import Path

from reconciler.desired.model import ListedBefore
from reconciler.git import GitFailed, run_git

#: An `externalId:` key with its value, block or flow style, quoted or not, on a diff line.
_EXTERNAL_ID = re.compile(r"""externalId\s*:\s*(?:"([^"]*)"|'([^']*)'|([^\s,}#'"]+))""")


def files_listed(path: Path) -> ListedBefore:
    """The externalIds every version of the files at `path` (a file or a directory) listed."""
    target = path.resolve()
    folder = target if target.is_dir() else target.parent
    try:
        if run_git(folder, "rev-parse", "--is-shallow-repository").strip() == "true":
            return ListedBefore(None, "the checkout is a shallow clone (fetch-depth: 0 fetches it)")
        try:
            ref = run_git(folder, "rev-parse", "--abbrev-ref", "origin/HEAD").strip()
        except GitFailed:
            ref = "HEAD"
        text = run_git(
            folder, "log", "-p", "--no-color", "--no-ext-diff", "--format=", ref, "--", str(target)
        )
    except GitFailed as failed:
        if not failed.ran:
            return ListedBefore(None, f"git did not run ({failed.reason})")
        return ListedBefore(None, f"git could not read the files' history: {failed.reason}")
    # Every externalId a version listed was added by some commit (the first one's lines are
    # all added): the added lines are enough.
    ids = {
        next(group for group in found.groups() if group is not None)
        for line in text.splitlines()
        if line.startswith("+") and "externalId" in line and not line.startswith("+++")
        for found in _EXTERNAL_ID.finditer(line)
    }
    return ListedBefore(frozenset(ids))
