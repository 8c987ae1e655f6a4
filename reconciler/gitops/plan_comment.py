"""The one plan note (comment) of a change request: every account's plan, the commit planned,
and the accounts whose plan job failed.

The body is `reconciler comment DIR --key accounts` over the joined folder of saved plans (a
table of every account, then the risky sections of every account before any low-risk tail),
with the commit and pull request planned named under its marker line (so a cut keeps it), and
a closing line naming every account to plan that has no plan in the folder. With no account
changed, a line saying so. The comment is created once and updated on every push.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from reconciler.errors import ReconcilerError
from reconciler.gitops.forge import Forge, NoteResult, Words
from reconciler.gitops.landing import Run, run_reconciler
from reconciler.gitops.notes import upsert_note
from reconciler.render.marker import PLAN, Marker

#: The accounts plan comment's marker key.
KEY = "accounts"


class CommentFailed(ReconcilerError):
    """`reconciler comment` could not render the joined plans."""


def plan_comment_body(
    words: Words,
    names: list[str] | None,
    plans: Path,
    request: int,
    head_sha: str,
    run: Run,
    *,
    run_url: str = "",
    accounts_file: Path | None = None,
) -> str:
    """The body, marker first; `names`: the accounts to plan (None: those planned, in
    `plans`); `accounts_file`: the one the plans were made with, when not the default branch's
    (an account the change request adds, `pull_accounts`)."""
    marker = Marker(PLAN, KEY)
    planned = {path.stem for path in plans.glob("*.json")} if plans.is_dir() else set()
    if not (planned if names is None else names):
        return marker.stamp(
            f"No account in reconciler.yaml is changed by this {words.request} at {head_sha}: "
            "nothing to plan.\n"
        )
    text = ""
    if planned:
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "comment.md"
            where = ["--accounts-file", str(accounts_file)] if accounts_file else []
            if run(["comment", str(plans), "--key", KEY, *where], out) != 0:
                raise CommentFailed(f"reconciler comment {plans} failed (see above)")
            text = marker.strip(out.read_text(encoding="utf-8"))
    said = f"Planned at commit {head_sha} of {words.request} {words.sign}{request}.\n\n{text}"
    missing = [name for name in names or () if name not in planned]
    if missing:
        said += f"\n:x: **Not planned:** {' '.join(missing)}: see [the run]({run_url}).\n"
    return marker.stamp(said)


def post_plan_comment(
    forge: Forge,
    names: list[str] | None,
    plans: Path,
    request: int,
    head_sha: str,
    *,
    run_url: str = "",
    accounts_file: Path | None = None,
    run: Run | None = None,
) -> tuple[NoteResult, str]:
    """Create or update the one plan note; what it did, and the body. `accounts_file`: the
    one the plans were made with (with the accounts the change request adds)."""
    body = plan_comment_body(forge.words, names, plans, request, head_sha, run or run_reconciler,
                             run_url=run_url, accounts_file=accounts_file)  # fmt: skip
    return upsert_note(forge, request, body, Marker(PLAN, KEY)), body
