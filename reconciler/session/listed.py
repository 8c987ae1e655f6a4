"""What the files ever listed: the externalIds of every version of them in git.

An open agreement in scope that no version of the files listed was made in the service (HR
invited someone in its screens): prune leaves it (`reconciler.plan.diff`). The history read is
the default branch's where a remote names one (`origin/HEAD`), else the current branch's, and
it is one `git log -p` over the files' paths: bounded by the files' own changes, whatever else
the repository holds. Outside a git repository, or in a shallow clone, it cannot tell.

Where a remote names the default branch, it also reads the `history.paylists` the files held at
the merge base of HEAD and that branch: a pull request's risk lines name only the known
paylists it adds (`reconciler.plan.money.known_lines`).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from reconciler.desired.model import ListedBefore
from reconciler.git import GitFailed, run_git

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
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
    try:  # the base alone: what it cannot tell leaves the files' history as read
        at_base = None if ref == "HEAD" else _known_at_base(folder, target, ref)
    except GitFailed:
        at_base = None
    return ListedBefore(frozenset(ids), known_at_base=at_base)


def _known_at_base(folder: Path, target: Path, default: str) -> frozenset[int] | None:
    """The `history.paylists` ids of the files at `target` at the merge base of HEAD and the
    `default` branch (a pull request's base, or HEAD itself on that branch): what a pull
    request's additions are told from. None when a file there cannot be read as YAML."""
    base = run_git(folder, "merge-base", "HEAD", default).strip()
    where = "." if target.is_dir() else f"./{target.name}"
    names = run_git(folder, "ls-tree", "-r", "-z", "--name-only", base, "--", where).split("\0")
    ids: set[int] = set()
    for name in names:
        if not name.endswith((".yaml", ".yml")):
            continue
        text = run_git(folder, "show", f"{base}:./{name}")
        if "history" not in text:
            continue  # most files (the workers, the payruns) hold none: not parsed
        try:
            data = yaml.load(text, Loader=_LOADER)
        except yaml.YAMLError:
            return None
        history = data.get("history") if isinstance(data, dict) else None
        known = history.get("paylists") if isinstance(history, dict) else None
        for item in known if isinstance(known, list) else ():
            if isinstance(item, dict) and isinstance(item.get("id"), int):
                ids.add(item["id"])
    return frozenset(ids)
