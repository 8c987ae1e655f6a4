"""The adoption change request's words: its branch, its title, its body (risk first: what it
does to money and to where secrets go, who is added or removed, then what changed live), and
the notes the drift job leaves on it. The same for every forge; the CI flow
(`reconciler.gitops.adoption`) decides what to do with the request and tells the forge.
"""

from __future__ import annotations

import re

from reconciler.adopt.model import CHANGED, Adoption
from reconciler.render.comment_body import fit_body
from reconciler.render.markdown import code_span, prose
from reconciler.render.marker import Marker
from reconciler.words import plural

BRANCH_PREFIX = "reconciler/adopt-"
CLOSING_NOTE = "Nothing is left to adopt: the account and the files agree again; closing."
_DIFF_FENCE = "````"
_OWN_COMMIT_LINE = re.compile(r"^The drift job's commit on `[^`\n]*`: ([0-9a-f]{7,64})\.\n?", re.M)
_OWN_COMMIT = re.compile(r"^The drift job's commit on `[^`\n]*`: ([0-9a-f]{7,64})\.$", re.M)


def branch_for(account: str | None) -> str:
    return BRANCH_PREFIX + (account or "default")


def title_for(account: str | None) -> str:
    where = f"the account {account}" if account else "the account"
    return f"reconciler: adopt what changed live in {where}"


def adoption_body(
    adoption: Adoption, marker: Marker, *, base_sha: str, commit: tuple[str, str] | None = None
) -> str:
    """The pull request's body: risk first (what it does to money and to where secrets go, who
    is added or removed), then every other change the service made, what was not adopted and
    why, the variables to set, and the diff; last, `commit` (branch, SHA): the commit the job
    made there, which tells a commit someone else pushed."""
    lines = [
        "The scheduled drift check found changes made in the service itself. Merging this "
        "pull request **adopts** them into the files; closing it means they are to be undone "
        "by an apply.",
        "",
    ]
    if adoption.risks:  # what it does to money and to where secrets go: read first
        lines.append("### :warning: Review first: what this does to money and to where secrets go")
        lines += [f"- {prose(risk)}" for risk in adoption.risks]
        lines.append("")
    added, removed = adoption.added(), adoption.removed()
    if added or removed:
        lines.append("### :warning: Who is added or removed")
        lines += [f"- **added** {code_span(i.address)}: {prose(i.detail)}" for i in added]
        lines += [f"- **removed** {code_span(i.address)}: {prose(i.detail)}" for i in removed]
        lines.append("")
    changed = [item for item in adoption.adopted if item not in added and item not in removed]
    if changed:
        lines.append("### What changed live")
        lines += [
            f"- {code_span(item.address)}: {prose(item.detail)}"
            + ("" if item.kind == CHANGED else f" ({item.kind})")
            for item in changed
        ]
        lines.append("")
    if adoption.variables:
        lines.append("### Variables to set before merging")
        lines += [
            f"- {code_span(v.name)}: {prose(v.holds)} (never in a file)" for v in adoption.variables
        ]
        lines.append("")
    if adoption.not_adopted:
        lines.append(f"### Not adopted ({plural(len(adoption.not_adopted), 'item')})")
        lines += [f"- {code_span(i.address)}: {prose(i.why)}" for i in adoption.not_adopted]
        lines.append("")
    if adoption.ignored:
        lines += [f"{plural(adoption.ignored, 'drifted field')} hidden by ignore rules.", ""]
    lines += [
        "<details><summary>The diff</summary>",
        "",
        _DIFF_FENCE + "diff",
        adoption.diff().rstrip("\n"),
        _DIFF_FENCE,
        "",
        "</details>",
        "",
        f"Built on {base_sha}.",
    ]
    if commit is not None:
        lines.append(f"The drift job's commit on {code_span(commit[0])}: {commit[1]}.")
    return fit_body(marker.stamp("\n".join(lines) + "\n"))


def own_commit(body: str) -> str | None:
    """The commit the drift job made on the branch, as the body it wrote names it."""
    found = _OWN_COMMIT.findall(body)
    return found[-1] if found else None


def without_commit(body: str) -> str:
    """The body without the line that names the job's commit (what the job compares)."""
    return _OWN_COMMIT_LINE.sub("", body)


def replaced_note(branch: str, pushed: str, made: str) -> str:
    return (
        f":warning: A commit the drift job did not make was on {code_span(branch)}: {pushed}. "
        f"The job put its own content back (its commit {made}): this pull request holds only "
        f"what its body describes; what {pushed[:12]} held is not in it. Push changes to "
        "another branch of your own."
    )


def not_described_note(branch: str, pushed: str) -> str:
    return (
        f":warning: A commit the drift job did not make is on {code_span(branch)}: {pushed}. "
        "This run could not build the adoption again (adopt failed), so the body above does "
        f"**not** describe what the branch holds: review {pushed[:12]} itself, or close this "
        "pull request, before merging."
    )
