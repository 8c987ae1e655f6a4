"""The adoption pull request's plan, posted by the drift job that opened or updated it.

A pull request opened or pushed with a workflow's own GITHUB_TOKEN starts no workflow (GitHub's
rule against loops), so the plan workflow never plans the adoption pull request the drift job
made. The drift job plans it itself: the files as the pull request's commit has them (the
job's checkout, in a worktree of its own, with the adopted files written in), planned as the
plan workflow plans them (`Subject`): an account of the accounts file by `reconciler comment
--account NAME --key accounts`, the single action's PATH by `reconciler comment PATH [--key
KEY]`. Its note shows money and the risky changes first; it is the pull request's one plan note
(the plan workflow's marker, which a later run of that workflow updates), with the commit
planned, and the head's `reconciler/plan` status (`reconciler/plan/KEY` for the action's keyed
account) says it was planned (a failure when planning failed). Nothing of it is a reviewed
plan: the merge applies no saved plan of it, it plans the merged files again.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.accounts.file import find_accounts_file
from reconciler.errors import ReconcilerError
from reconciler.git import GitFailed, worktree
from reconciler.gitops.forge import Forge
from reconciler.gitops.landing import Run, run_reconciler
from reconciler.gitops.notes import upsert_note
from reconciler.gitops.plan_comment import KEY
from reconciler.gitops.statuses import DESCRIPTION_LIMIT, Statuses
from reconciler.render.marker import PLAN, Marker

if TYPE_CHECKING:  # the adoption's modules only when a forge commits one
    from reconciler.adopt.commit import BranchFile

#: The plan's commit status, as the plan workflow names it.
CONTEXT = "reconciler/plan"


@dataclass(frozen=True, slots=True)
class Subject:
    """What the adoption is planned as: the accounts file's account `account`, or (with
    `path`) the single action's desired-state file or folder, named by its `key`."""

    account: str | None = None
    path: Path | None = None
    key: str | None = None

    @property
    def name(self) -> str:
        """How a failure names it: the account, the key, or the path."""
        return self.account or self.key or str(self.path)

    @property
    def marker(self) -> Marker:
        """The plan workflow's note marker: the accounts note's, or the action's with its key."""
        return Marker(PLAN, KEY if self.path is None else self.key)

    @property
    def context(self) -> str:
        """The plan's commit status, as the plan workflow names it."""
        return f"{CONTEXT}/{self.key}" if self.path is not None and self.key else CONTEXT

    def command(self, root: Path, tree: Path) -> list[str]:
        """`reconciler comment ...` of the files in `tree`, a worktree of the checkout `root`."""
        if self.path is None:
            accounts = find_accounts_file(None).resolve().relative_to(root.resolve())
            return ["comment", "--account", str(self.account), "--key", KEY,
                    "--accounts-file", str(tree / accounts)]  # fmt: skip
        desired = Path(os.path.abspath(self.path)).resolve()
        if root.resolve() != desired and root.resolve() not in desired.parents:
            raise ReconcilerError(f"{self.path} is outside the repository at {root}")
        keyed = ["--key", self.key] if self.key else []
        return ["comment", str(tree / desired.relative_to(root.resolve())), *keyed]


@dataclass(frozen=True, slots=True)
class Planned:
    """What was posted: the note's action and page, and the status's state."""

    note: str
    url: str
    state: str


def post_adoption_plan(
    forge: Forge,
    statuses: Statuses,
    request: int,
    commit: str,
    files: Mapping[str, BranchFile],
    subject: Subject,
    *,
    root: Path,
    run_url: str = "",
    run: Run | None = None,
) -> Planned:
    """Plan `subject` with `files` (repository path -> file) written over the checkout at
    `root` (or the checkout above it), as the adoption request's commit `commit` holds them;
    post the plan note on `request` and the status on `commit`."""
    run = run or run_reconciler
    words = forge.words
    root = next((p for p in (root, *root.parents) if (p / ".git").exists()), root)
    with tempfile.TemporaryDirectory(prefix="reconciler-adoption-") as temp, ExitStack() as made:
        tree = Path(temp) / "tree"
        command = subject.command(root, tree)
        try:
            made.enter_context(worktree(root, tree))
        except GitFailed as failed:
            raise ReconcilerError(
                f"cannot make a worktree of {root} to plan the adoption: {failed.reason[:300]}"
            ) from None
        for path, file in files.items():
            target = tree / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(file.text, encoding="utf-8")
        out = Path(temp) / "comment.md"
        status = run(command, out)
        text = out.read_text(encoding="utf-8") if out.is_file() else ""
    marker = subject.marker
    said = (
        f"Planned at commit {commit} of {words.request} {words.sign}{request}, by the drift job "
        f"that proposed it (its token's {words.request} starts no plan workflow)."
    )
    if status == 0:
        body = f"{said}\n\n{marker.strip(text)}"
        state, description = "success", "planned by the drift job"
    else:
        where = f" (see [the run]({run_url}))" if run_url else ""
        name = subject.name
        body = f"{said}\n\n:x: **Not planned:** {name}: planning it failed{where}.\n"
        state, description = "failure", f"not planned: {name}"
    note = upsert_note(forge, request, body, marker)
    statuses.set_status(commit, state, subject.context, description[:DESCRIPTION_LIMIT], run_url)
    return Planned(note.action, note.url, state)
