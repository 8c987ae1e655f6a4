"""What became of each account after a merge, said on its deployment and on the pull request.

An account's outcome is one of: applied (with the counts), nothing to do, superseded (by which
merge), refused or failed (why). The apply job records it as the status of the account's
deployment at the commit; a job with no account's secret then reads those statuses and keeps
ONE comment on each pull request the run applied (or tried to), updated in place: a row per
account, later runs replacing their accounts' rows, with the link to each run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from reconciler.gitops import deployments
from reconciler.gitops.comments import CommentResult, find_marked, upsert_comment
from reconciler.gitops.github import ACTIONS_BOT, GitHub
from reconciler.render.marker import Marker

APPLIED, NOTHING, SUPERSEDED, REFUSED, FAILED = (
    "applied",
    "nothing to do",
    "superseded",
    "refused",
    "failed",
)
#: The outcome comment's marker kind.
OUTCOME = "outcome"
_STATE = {
    APPLIED: deployments.SUCCESS,
    NOTHING: deployments.SUCCESS,
    SUPERSEDED: deployments.INACTIVE,
    REFUSED: deployments.FAILURE,
    FAILED: deployments.FAILURE,
}
_ICON = {APPLIED: ":white_check_mark:", NOTHING: ":white_check_mark:", SUPERSEDED: ":fast_forward:",
         REFUSED: ":no_entry:", FAILED: ":x:"}  # fmt: skip
_ROW = re.compile(r"^\| `([^`|]+)` \|")


@dataclass(frozen=True, slots=True)
class Landing:
    """One account's outcome in one run."""

    account: str
    kind: str
    description: str
    plan: str = ""  # applied: `reviewed` (the saved plan) or `replanned` (an equal new plan)

    @property
    def state(self) -> str:
        """The deployment status that says it."""
        return _STATE[self.kind]

    @property
    def failed(self) -> bool:
        return self.kind in (REFUSED, FAILED)

    @property
    def annotation(self) -> str:
        """The workflow command that shows it: notice, warning or error."""
        if self.failed:
            return "error"
        return "warning" if self.kind == SUPERSEDED else "notice"

    @property
    def summary(self) -> str:
        """'applied: the reviewed plan was applied: 1 to invite' (kind first, for a status)."""
        return self.description if self.description.startswith(self.kind) else (
            f"{self.kind}: {self.description}"
        )  # fmt: skip


def read_landings(github: GitHub, names: Iterable[str], sha: str, environment: str) -> list[
    tuple[Landing, str | None]
]:  # fmt: skip
    """Each account's outcome at `sha` as its newest deployment there says, with the run's
    link; an account with no deployment there did not run (cancelled, or failed to start)."""
    found = []
    for name in names:
        there = deployments.deployments(github, deployments.environment_of(environment, name), sha)
        record = deployments.record_of(github, there[0]) if there else None
        if record is None or record.state in (None, deployments.IN_PROGRESS):
            said = "did not finish: cancelled, or failed before recording (see the run)"
            found.append((Landing(name, FAILED, said), record.log_url if record else None))
            continue
        kind = next((k for k in _STATE if record.description.startswith(k)), FAILED)
        found.append((Landing(name, kind, record.description), record.log_url))
    return found


def outcome_body(
    landings: Iterable[tuple[Landing, str | None]], sha: str, run_url: str, existing: str | None
) -> str:
    """The outcome comment: a row per account, those of `existing` not in this run kept."""
    rows: dict[str, str] = {}
    for line in (existing or "").splitlines():
        if match := _ROW.match(line):
            rows[match[1]] = line
    for landing, log_url in landings:
        text = landing.summary.replace("|", "\\|").replace("\n", " ")
        link = f"[run]({log_url or run_url})"
        rows[landing.account] = f"| `{landing.account}` | {_ICON[landing.kind]} {text} | {link} |"
    return "\n".join([
        f"**Applied after the merge** (latest: commit {sha[:12]}, [this run]({run_url})).",
        "",
        "| Account | Outcome | Run |",
        "|---|---|---|",
        *rows.values(),
        "",
    ])  # fmt: skip


def post_outcomes(
    github: GitHub,
    pulls: Mapping[str, list[int]],
    sha: str,
    environment: str,
    run_url: str,
    key: str = "accounts",
) -> list[CommentResult]:
    """Keep the outcome comment (`key`'s: the accounts', or the action's key) of every pull
    request pending for an account of this run."""
    landings = dict(
        (landing.account, (landing, url))
        for landing, url in read_landings(github, pulls, sha, environment)
    )
    marker = Marker(OUTCOME, key)
    results = []
    for number in sorted({n for numbers in pulls.values() for n in numbers}):
        mine = [landings[name] for name, numbers in pulls.items() if number in numbers]
        comments = github.paginate(github.repo_path(f"issues/{number}/comments"))
        existing = find_marked(comments, marker, ACTIONS_BOT)
        before = marker.strip(existing["body"]) if existing is not None else None
        body = outcome_body(mine, sha, run_url, before)
        results.append(upsert_comment(github, number, body, marker))
    return results
