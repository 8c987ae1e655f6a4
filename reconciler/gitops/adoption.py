"""The adoption change request (pull or merge request): what the drift job proposes instead of
an undo.

After `reconciler drift` reports drift, `reconciler adopt --dry-run --format json` says what the
files would say to match the account. This module keeps one change request per account carrying
that edit, on the branch `reconciler/adopt-<account>`: opened the first time, updated while the
drift lasts and changes, closed (its branch deleted) once there is nothing left to adopt. The
commit is made with the forge's API on top of the commit the job checked out
(`Forge.push_branch`), so the job needs no push credentials in its checkout.

The decision is a pure function (`decide_adoption_pr`), the body is made here (risk first: what
it does to money and to where secrets go, who is added or removed, then what changed live), and
the forge is told in `sync_adoption_request`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from reconciler.adopt.model import CHANGED, Adoption, FileChange
from reconciler.errors import ReconcilerError
from reconciler.gitops.drift import DRIFTED, IN_SYNC, DriftAction
from reconciler.gitops.forge import BranchFile, Forge, OpenRequest
from reconciler.render.comment_body import fit_body
from reconciler.render.markdown import code_span, prose
from reconciler.render.marker import Marker
from reconciler.words import plural

BRANCH_PREFIX = "reconciler/adopt-"
CLOSING_NOTE = "Nothing is left to adopt: the account and the files agree again; closing."
_DIFF_FENCE = "````"
_BOM = "\ufeff".encode()
_OWN_COMMIT_LINE = re.compile(r"^The drift job's commit on `[^`\n]*`: ([0-9a-f]{7,64})\.\n?", re.M)
_OWN_COMMIT = re.compile(r"^The drift job's commit on `[^`\n]*`: ([0-9a-f]{7,64})\.$", re.M)


@dataclass(frozen=True, slots=True)
class AdoptionPrResult:
    action: DriftAction
    number: int | None
    url: str | None
    #: The commit the job made on the branch (opened or updated), which its plan is of.
    commit: str | None = None


def decide_adoption_pr(
    drift_exit_status: int, adoption: Adoption | None, existing: OpenRequest | None, body: str
) -> DriftAction:
    """Open, update, close or leave the adoption pull request.

    In sync closes it. A failed drift check, or drift where adopt did not run or failed
    (`adoption` None), leaves it as it is: an error is not "nothing to adopt". Something to
    adopt opens it, or updates it when its body (which names the commit it is built on, and
    carries the diff) changed; drift with nothing adoptable closes it."""
    if drift_exit_status == IN_SYNC:
        return DriftAction.CLOSE if existing is not None else DriftAction.NOTHING
    if drift_exit_status != DRIFTED or adoption is None:
        return DriftAction.NOTHING
    if adoption.anything:
        if existing is None:
            return DriftAction.OPEN
        return DriftAction.NOTHING if existing.body == body else DriftAction.UPDATE
    return DriftAction.CLOSE if existing is not None else DriftAction.NOTHING


def next_step(
    drift_exit_status: int,
    adoption: Adoption | None,
    existing: OpenRequest | None,
    marker: Marker,
    base_sha: str | None,
) -> tuple[DriftAction, str]:
    """What to do to the pull (or merge) request, and the body it is to have."""
    body = ""
    if adoption is not None and adoption.anything:
        if base_sha is None:
            raise ReconcilerError("the adoption needs the commit it is built on: --base-sha")
        body = adoption_body(adoption, marker, base_sha=base_sha)
    return decide_adoption_pr(drift_exit_status, adoption, existing, body), body


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


def read_adoption(text: str, account: str | None) -> Adoption | None:
    """The adoption `reconciler adopt --format json` printed (for one account, or over
    `--account`: that account's), or None when adopt did not run or failed for it."""
    try:
        document = json.loads(text)
        if isinstance(document, dict) and "accounts" in document:
            entry = next(e for e in document["accounts"] if e.get("name") == account)
            document = entry.get("adoption")
        return None if document is None else Adoption.from_document(document)
    except (ValueError, StopIteration, AttributeError, TypeError):
        return None


def repository_files(adoption: Adoption, folder: Path) -> dict[str, BranchFile]:
    """Each adopted file by its path in the repository that holds `folder` (the job's
    checkout), as the commit is to hold it: its new text with the checkout's file's
    byte-order mark, and its executable bit; a file outside the repository is refused."""
    if not adoption.files:
        return {}
    root = next((p for p in (folder, *folder.parents) if (p / ".git").exists()), None)
    if root is None:
        raise ReconcilerError(f"{folder} is not inside a git checkout: nothing to propose from")
    files: dict[str, BranchFile] = {}
    for change in adoption.files:
        written = Path(os.path.abspath(folder / change.name))
        if root.resolve() not in (written.resolve().parents):
            raise ReconcilerError(f"{change.name} is outside the repository at {root}")
        path = written.resolve().relative_to(root.resolve()).as_posix()
        files[path] = _as_checked_out(written, change)
    return files


def _as_checked_out(file: Path, change: FileChange) -> BranchFile:
    """The change as the checkout's `file` keeps its bytes: its BOM and its mode."""
    if change.before is None or not file.is_file():
        return BranchFile(change.after, created=change.before is None)
    with file.open("rb") as stream:
        bom = stream.read(len(_BOM)) == _BOM
    executable = bool(file.stat().st_mode & 0o111)
    return BranchFile(("\ufeff" if bom else "") + change.after, executable=executable)


def add_link(report: Path | None, result: AdoptionPrResult, sign: str) -> None:
    """Add to the drift report (if given) the line that links the open adoption change request
    (`sign`: the forge's, before its number), when one is open."""
    if report is None or not report.is_file() or result.number is None:
        return
    if result.action is DriftAction.CLOSE:
        return
    with report.open("a", encoding="utf-8") as stream:
        stream.write(
            f"\n**Proposed:** {sign}{result.number} adopts what changed live into the files "
            "(merge it), or close it and apply to undo the changes.\n"
        )


def sync_adoption_request(
    forge: Forge,
    drift_exit_status: int,
    adoption: Adoption | None,
    files: Mapping[str, BranchFile],
    marker: Marker,
    *,
    account: str | None,
    base_sha: str | None,
    target: str | None = None,
) -> AdoptionPrResult:
    """Make the adoption change request carry `adoption` (`files`: repository path -> file),
    built on the commit `base_sha` (needed only when there is something to adopt), into
    `target` (None: the default branch).

    The branch is the bot's: its body names the commit the job made, and a head that is not
    that commit (someone pushed onto the branch) is replaced by the job's own content, and
    said on the change request with the pushed commit's SHA; when the job cannot rebuild it
    (adopt failed), the change request is told that its body does not describe that commit."""
    branch = branch_for(account)
    existing = forge.find_request(branch, marker)
    mine = None if existing is None else own_commit(existing.body)
    compared = None if existing is None else replace(existing, body=without_commit(existing.body))
    action, body = next_step(drift_exit_status, adoption, compared, marker, base_sha)
    head = forge.branch_head(branch) if existing is not None else None
    pushed = head if head is not None and head != mine else None
    if pushed is not None and action is DriftAction.NOTHING and adoption is not None:
        action = DriftAction.UPDATE if adoption.anything else action
    made = None
    if action in (DriftAction.OPEN, DriftAction.UPDATE):
        assert base_sha is not None and adoption is not None  # the body above needed them
        made = forge.push_branch(branch, base_sha, files, title_for(account))
        body = adoption_body(adoption, marker, base_sha=base_sha, commit=(branch, made))
    if action is DriftAction.OPEN:
        created = forge.open_request(branch, target, title_for(account), body)
        return AdoptionPrResult(action, created.number, created.url, made)
    if existing is None:
        return AdoptionPrResult(action, None, None)
    if action is DriftAction.UPDATE:
        assert made is not None
        forge.update_request(existing.number, body)
        if pushed is not None and mine is not None:
            forge.post_note(existing.number, _replaced_note(branch, pushed, made))
    elif action is DriftAction.CLOSE:
        forge.close_request(existing.number, branch, CLOSING_NOTE)
    elif pushed is not None and mine is not None and not _said(forge, existing.number, pushed):
        forge.post_note(existing.number, _not_described_note(branch, pushed))
    return AdoptionPrResult(action, existing.number, existing.url)


def own_commit(body: str) -> str | None:
    """The commit the drift job made on the branch, as the body it wrote names it."""
    found = _OWN_COMMIT.findall(body)
    return found[-1] if found else None


def without_commit(body: str) -> str:
    """The body without the line that names the job's commit (what the job compares)."""
    return _OWN_COMMIT_LINE.sub("", body)


def _said(forge: Forge, request: int, pushed: str) -> bool:
    """Whether a note of the job's on `request` names the pushed commit already."""
    return any(pushed in note.body for note in forge.notes(request, None))


def _replaced_note(branch: str, pushed: str, made: str) -> str:
    return (
        f":warning: A commit the drift job did not make was on {code_span(branch)}: {pushed}. "
        f"The job put its own content back (its commit {made}): this pull request holds only "
        f"what its body describes; what {pushed[:12]} held is not in it. Push changes to "
        "another branch of your own."
    )


def _not_described_note(branch: str, pushed: str) -> str:
    return (
        f":warning: A commit the drift job did not make is on {code_span(branch)}: {pushed}. "
        "This run could not build the adoption again (adopt failed), so the body above does "
        f"**not** describe what the branch holds: review {pushed[:12]} itself, or close this "
        "pull request, before merging."
    )
