"""The files at a commit, read from git: the money a payrun had there, and the policy in force.

Dual control compares money, not commits (`reconciler.plan.approvals`): an approval of a commit
counts for a payrun when the plan made from the files AT that commit, against the very live
account this apply read, pays the same for it (`money_of`). The files there are written out of
git (`git ls-tree` and `git show` of the desired state's path, nothing else of the repository)
into a temporary folder and loaded as any files are, with no variable read (money never comes
from one). The policy in force is the files' policy at the account's last successful apply,
read the same way.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from reconciler.desired import InvalidDesiredState, load_desired_state
from reconciler.desired.approvals import ApprovalPolicy
from reconciler.desired.model import DesiredState
from reconciler.errors import ReconcilerError
from reconciler.git import GitFailed, run_git
from reconciler.plan import PlanOptions, diff
from reconciler.plan.approvals import MoneyKey, MoneyUnreadable, money_of
from reconciler.plan.model import LiveState

#: The most files of a desired state read at one commit (a folder of thousands is a mistake).
_MOST_FILES = 2000


class FilesUnreadable(ReconcilerError):
    """The files could not be read from git at a commit (a commit this clone does not hold, a
    shallow clone, files invalid there)."""


def _top(path: Path) -> tuple[Path, Path]:
    """The repository's root, and `path` relative to it."""
    target = path.resolve()
    folder = target if target.is_dir() else target.parent
    try:
        top = Path(run_git(folder, "rev-parse", "--show-toplevel").strip())
    except GitFailed as failed:
        raise FilesUnreadable(f"{path} is not in a git repository ({failed.reason})") from None
    try:
        return top, target.relative_to(top.resolve())
    except ValueError:
        raise FilesUnreadable(f"{path} is outside its git repository {top}") from None


def files_at(path: Path, commit: str, into: Path) -> Path | None:
    """Write the files of the desired state at `path` (a file or a folder) as `commit` holds
    them under `into`, and return where to load them from; None: `commit` holds none there."""
    top, relative = _top(path)
    try:
        run_git(top, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
        listed = run_git(top, "ls-tree", "-r", "-z", "--name-only", commit, "--", str(relative))
    except GitFailed as failed:
        raise FilesUnreadable(
            f"commit {commit[:12]} is not in this clone ({failed.reason}): fetch it "
            "(fetch-depth: 0, and the pull request's head)"
        ) from None
    names = [name for name in listed.split("\0") if name]
    if not names:
        return None
    if len(names) > _MOST_FILES:
        raise FilesUnreadable(f"{relative} holds {len(names):,} files at {commit[:12]}")
    for name in names:
        try:
            text = run_git(top, "show", f"{commit}:{name}")
        except GitFailed as failed:
            raise FilesUnreadable(f"{name} at {commit[:12]}: {failed.reason}") from None
        file = into / name
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(text.encode("utf-8", "surrogateescape"))
    return into / relative


def desired_at(path: Path, commit: str, environ: Mapping[str, str]) -> DesiredState | None:
    """The desired state at `path` as `commit` holds it (None: no files there), its variables
    named only (`read_variables=False`: money never comes from one)."""
    with tempfile.TemporaryDirectory(prefix="reconciler-at-") as folder:
        where = files_at(path, commit, Path(folder))
        if where is None:
            return None
        try:
            return load_desired_state(where, environ, read_variables=False)
        except InvalidDesiredState as error:
            first = error.problems[0] if error.problems else "invalid"
            raise FilesUnreadable(
                f"the files at {commit[:12]} are invalid ({first}, ...)".replace(folder + "/", "")
            ) from None
        except ReconcilerError as error:
            raise FilesUnreadable(f"the files at {commit[:12]}: {error.message}") from None


def money_reader(
    path: Path | None, live: LiveState, options: PlanOptions, environ: Mapping[str, str]
) -> Callable[[str], Mapping[str, MoneyKey]]:
    """`money_at(commit)` for `judge`: each payrun's money in the plan of the files at `path`
    as `commit` holds them, against `live` (the same account this apply read); the payruns of
    a commit without the files are none. A failure is `MoneyUnreadable`, saying why."""

    def money_at(commit: str) -> Mapping[str, MoneyKey]:
        if path is None:
            raise MoneyUnreadable("the plan's files are not known to this apply")
        try:
            desired = desired_at(path, commit, environ)
        except FilesUnreadable as error:
            raise MoneyUnreadable(error.message) from None
        if desired is None:
            return {}
        return money_of(diff(desired, live, options))

    return money_at


def policy_at(path: Path, commit: str, environ: Mapping[str, str]) -> ApprovalPolicy | None:
    """The files' `policy.approvals` as `commit` holds them; None: no policy at that commit (or
    no files yet). An account's entry in the accounts file is the accounts layer's to read."""
    desired = desired_at(path, commit, environ)
    return desired.policy.approvals if desired is not None else None
