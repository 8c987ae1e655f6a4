"""What git says about an account between two commits: did its files change, and by which merges.

An account's files are those under its `path` and its own entry in the accounts file (a change
to the file's other top-level settings counts for every account), as for `--changed-since`.
Here the two sides are commits (the last apply's, the default branch's head), never the work
tree. The merges are the default branch's own commits (`--first-parent`): a merge commit, or
the one commit of a squash or rebase merge. Git is asked, read-only, in the checkout's folder.
"""

from __future__ import annotations

from pathlib import Path

from reconciler.accounts.file import AccountEntry, AccountsFile
from reconciler.accounts.selection import account_settings, file_at
from reconciler.errors import ReconcilerError


class HistoryError(ReconcilerError):
    """Git could not tell what changed between two commits."""


def changed_between(accounts: AccountsFile, entry: AccountEntry, old: str, new: str) -> bool:
    """Whether `entry`'s files at commit `new` differ from its files at commit `old`."""
    root, paths = _paths(accounts, entry)
    if _git(root, "diff", "--name-only", old, new, "--", paths[0]).strip():
        return True
    return _entry_at(root, old, paths[1], entry.name) != _entry_at(root, new, paths[1], entry.name)


def merges_between(
    accounts: AccountsFile, entry: AccountEntry, old: str | None, new: str
) -> list[str]:
    """The default branch's commits after `old` (every one if None) up to `new` that changed
    `entry`'s files, oldest first."""
    root, paths = _paths(accounts, entry)
    span = new if old is None else f"{old}..{new}"
    listed = _git(root, "log", "--first-parent", "--reverse", "--format=%H", span, "--", *paths)
    merges = []
    for sha in listed.split():
        parents = _git(root, "rev-list", "--parents", "-n", "1", sha).split()[1:]
        if not parents or changed_between(accounts, entry, parents[0], sha):
            merges.append(sha)
    return merges


def head_of(accounts: AccountsFile, branch: str) -> str:
    """The commit the remote's `branch` is at, as the checkout fetched it (fetch-depth: 0)."""
    root, _ = _paths(accounts, None)
    return _git(root, "rev-parse", "--verify", f"refs/remotes/origin/{branch}^{{commit}}").strip()


def _paths(accounts: AccountsFile, entry: AccountEntry | None) -> tuple[Path, tuple[str, str]]:
    folder = accounts.path.absolute().parent
    root = Path(_git(folder, "rev-parse", "--show-toplevel").strip()).resolve()
    file = accounts.path.resolve().relative_to(root).as_posix()
    if entry is None:
        return root, ("", file)
    under = entry.path.resolve()
    path = under.relative_to(root).as_posix() if under.is_relative_to(root) else str(under)
    return root, (path or ".", file)


def _entry_at(root: Path, sha: str, file: str, name: str) -> object:
    """The accounts file's shared settings and `name`'s entry at `sha` (None: no such file)."""
    return account_settings(file_at(root, sha, file), name)


def _git(folder: Path, *args: str) -> str:
    import subprocess

    try:
        done = subprocess.run(
            ["git", *args], cwd=folder, capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise HistoryError(f"git did not run: {error}") from None
    if done.returncode != 0:
        reason = done.stderr.strip().splitlines()[-1:] or ["no reason given"]
        raise HistoryError(
            f"git could not tell {' '.join(args[:3])}: {reason[0]}",
            hint="check out the default branch with its history (actions/checkout with "
            "fetch-depth: 0)",
        )
    return done.stdout
