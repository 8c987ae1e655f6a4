"""What git says about an account between two commits: did its files change, and by which merges.

An account is a `Scope`: a name and its paths. In an accounts file, its files are those under
its `path` and its own entry in the file (a change to the file's other top-level settings counts
for every account), as for `--changed-since`; the single account of the composite action is the
desired-state file or folder it is given (its `path` input), named by its key.
Here the two sides are commits (the last apply's, the default branch's head), never the work
tree. The merges are the default branch's own commits (`--first-parent`): a merge commit, or
the one commit of a squash or rebase merge. Git is asked, read-only, in the checkout's folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reconciler.accounts.selection import account_settings, file_at
from reconciler.errors import ReconcilerError
from reconciler.git import GitFailed, run_git


class HistoryError(ReconcilerError):
    """Git could not tell what changed between two commits."""


@dataclass(frozen=True, slots=True)
class Scope:
    """One account's part of the repository: its name, the checkout's root, its files (a folder
    or file relative to the root) and, in an accounts file, that file (relative), whose shared
    settings and `name`'s entry are the account's too."""

    name: str
    root: Path
    files: str
    accounts_file: str | None = None

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.files,) if self.accounts_file is None else (self.files, self.accounts_file)


def scope_of(name: str, files: Path, accounts_file: Path | None = None) -> Scope:
    """The account `name`'s scope: its files (a file or folder) and, in an accounts file, that
    file (a single desired-state PATH is an account of no file)."""
    folder = files if files.is_dir() else files.parent
    root = _root((accounts_file.parent if accounts_file is not None else folder).absolute())
    if accounts_file is None:
        return Scope(name, root, _relative(root, files))
    return Scope(name, root, _relative(root, files), _relative(root, accounts_file))


def changed_between(scope: Scope, old: str, new: str) -> bool:
    """Whether `scope`'s files at commit `new` differ from its files at commit `old`."""
    if _git(scope.root, "diff", "--name-only", old, new, "--", scope.files).strip():
        return True
    file = scope.accounts_file
    return file is not None and _entry_at(scope, file, old) != _entry_at(scope, file, new)


def merges_between(scope: Scope, old: str | None, new: str) -> list[str]:
    """The default branch's commits after `old` (every one if None) up to `new` that changed
    `scope`'s files, oldest first."""
    span = new if old is None else f"{old}..{new}"
    listed = _git(
        scope.root, "log", "--first-parent", "--reverse", "--format=%H", span, "--", *scope.paths
    )
    merges = []
    for sha in listed.split():
        parents = _git(scope.root, "rev-list", "--parents", "-n", "1", sha).split()[1:]
        if not parents or changed_between(scope, parents[0], sha):
            merges.append(sha)
    return merges


def head_of(scope: Scope, branch: str) -> str:
    """The commit the remote's `branch` is at, as the checkout fetched it. Only where the job
    fetched the branch itself (in its own script): a checkout may point `origin/<branch>` at
    the run's own commit when the branch has moved since the push, and a forge whose does asks
    its API (`Forge.default_head`)."""
    ref = f"refs/remotes/origin/{branch}^{{commit}}"
    return _git(scope.root, "rev-parse", "--verify", ref).strip()


def has_commit(scope: Scope, sha: str) -> bool:
    """Whether the checkout holds commit `sha` (one pushed after it was fetched does not)."""
    try:
        _git(scope.root, "cat-file", "-e", f"{sha}^{{commit}}")
    except HistoryError:
        return False
    return True


def on_line(scope: Scope, sha: str, tip: str) -> bool:
    """Whether the default branch pointed at commit `sha` on its way to `tip`: `sha` is on
    `tip`'s first-parent line (a pull request's head is an ancestor of its merge, yet off it)."""
    return sha in _git(scope.root, "rev-list", "--first-parent", tip).split()


def _root(folder: Path) -> Path:
    return Path(_git(folder, "rev-parse", "--show-toplevel").strip()).resolve()


def _relative(root: Path, path: Path) -> str:
    under = path.resolve()
    return (under.relative_to(root).as_posix() or ".") if under.is_relative_to(root) else str(under)


def _entry_at(scope: Scope, file: str, sha: str) -> object:
    """The accounts file's shared settings and the account's entry at `sha` (None: no file)."""
    return account_settings(file_at(scope.root, sha, file), scope.name)


def _git(folder: Path, *args: str) -> str:
    try:
        return run_git(folder, *args)
    except GitFailed as failed:
        if not failed.ran:
            raise HistoryError(f"git did not run: {failed.reason}") from None
        raise HistoryError(
            f"git could not tell {' '.join(args[:3])}: {failed.reason}",
            hint="check out the default branch with its history (actions/checkout with "
            "fetch-depth: 0)",
        ) from None
