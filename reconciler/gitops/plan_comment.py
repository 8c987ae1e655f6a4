"""The accounts plan workflow's one comment: every account's plan, the commit planned, and the
accounts whose plan job failed.

The body is `reconciler comment DIR --key accounts` over the joined folder of saved plans (a
table of every account, then the risky sections of every account before any low-risk tail),
with the commit and pull request planned named under its marker line (so a cut keeps it), and
a closing line naming every account to plan that has no plan in the folder. With no account
changed, a line saying so. The comment is created once and updated on every push.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from reconciler.accounts.file import find_accounts_file
from reconciler.errors import ReconcilerError
from reconciler.gitops.comments import CommentResult, upsert_comment
from reconciler.gitops.github import GitHub
from reconciler.gitops.landing import Run, run_reconciler
from reconciler.gitops.pull_accounts import pull_request_accounts
from reconciler.render.marker import PLAN, Marker

#: The accounts plan comment's marker key.
KEY = "accounts"


class CommentFailed(ReconcilerError):
    """`reconciler comment` could not render the joined plans."""


def plan_comment_body(
    names: list[str],
    plans: Path,
    pull_request: int,
    head_sha: str,
    run_url: str,
    run: Run,
    accounts_file: Path | None = None,
) -> str:
    """The body, marker first; `accounts_file`: the one the plans were made with, when not the
    default branch's (an account the pull request adds, `pull_accounts`)."""
    marker = Marker(PLAN, KEY)
    if not names:
        return marker.stamp(
            f"No account in reconciler.yaml is changed by this pull request at {head_sha}: "
            "nothing to plan.\n"
        )
    planned = {path.stem for path in plans.glob("*.json")} if plans.is_dir() else set()
    text = ""
    if planned:
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "comment.md"
            where = ["--accounts-file", str(accounts_file)] if accounts_file else []
            if run(["comment", str(plans), "--key", KEY, *where], out) != 0:
                raise CommentFailed(f"reconciler comment {plans} failed (see above)")
            text = marker.strip(out.read_text(encoding="utf-8"))
    said = f"Planned at commit {head_sha} of pull request #{pull_request}.\n\n{text}"
    missing = [name for name in names if name not in planned]
    if missing:
        said += f"\n:x: **Not planned:** {' '.join(missing)}: see [the run]({run_url}).\n"
    return marker.stamp(said)


def post_plan_comment(
    github: GitHub,
    names: list[str],
    plans: Path,
    pull_request: int,
    head_sha: str,
    run_url: str,
    pull_request_files: Path | None = None,
    run: Run | None = None,
) -> tuple[CommentResult, str]:
    """Create or update the one plan comment; what it did, and the body. With the pull
    request's checkout, its plans are read with the accounts file they were made with."""
    accounts_file = None
    if pull_request_files is not None:
        default = find_accounts_file(None)
        accounts_file = pull_request_accounts(default, pull_request_files).path
    body = plan_comment_body(
        names, plans, pull_request, head_sha, run_url, run or run_reconciler, accounts_file
    )
    return upsert_comment(github, pull_request, body, Marker(PLAN, KEY)), body
