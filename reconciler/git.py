"""Running git: what it prints, or why it could not (the accounts' selection, a plan's files'
history). Below every layer that asks git something."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path


class GitFailed(Exception):
    """git did not run (`ran` False: why), or failed (the last line of what it said)."""

    def __init__(self, reason: str, *, ran: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.ran = ran


def run_git(folder: Path, *args: str) -> str:
    """What `git ARGS` in `folder` prints, read as UTF-8 with any other bytes kept as surrogate
    escapes (file names and files as they are, as os.fsdecode reads them), so no bytes of a
    repository can fail it; GitFailed when git does not run or fails."""
    import subprocess  # only when git is asked (`validate` starts without it)

    try:
        done = subprocess.run(
            ["git", *args],
            cwd=folder,
            capture_output=True,
            encoding="utf-8",
            errors="surrogateescape",
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise GitFailed(str(error), ran=False) from None
    if done.returncode != 0:
        reason = done.stderr.strip().splitlines()[-1:] or ["no reason given"]
        raise GitFailed(reason[0], ran=True)
    return done.stdout


def file_at_commit(folder: Path, sha: str, name: str) -> bytes | None:
    """The file `name` of the repository's root at commit `sha`, its bytes as committed (None:
    there is none, or git could not tell)."""
    try:
        text = run_git(folder, "show", f"{sha}:./{name}")
    except GitFailed:
        return None
    return text.encode("utf-8", "surrogateescape")  # the bytes run_git read, as they were


@contextmanager
def worktree(root: Path, tree: Path) -> Iterator[Path]:
    """A worktree of the checkout's commit at `tree` (the checkout at `root` is left as it is),
    removed after; GitFailed when git cannot make it."""
    run_git(root, "worktree", "add", "--detach", "--quiet", str(tree), "HEAD")
    try:
        yield tree
    finally:
        with suppress(GitFailed):
            run_git(root, "worktree", "remove", "--force", str(tree))
