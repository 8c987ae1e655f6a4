"""The adoption change request (pull or merge request): what the drift job proposes instead of
an undo.

After `reconciler drift` reports drift, `reconciler adopt --dry-run --format json` says what the
files would say to match the account. This module keeps one change request per account carrying
that edit, on the branch `reconciler/adopt-<account>`: opened the first time, updated while the
drift lasts and changes, closed (its branch deleted) once there is nothing left to adopt. The
commit is made with the forge's API on top of the commit the job checked out
(`Forge.push_branch`), so the job needs no push credentials in its checkout.

The decision is a pure function (`decide_adoption_pr`), the request's words are the adoption's
(`reconciler.adopt.request`: the branch, the title, the body, the notes), as are the files of
its commit (`reconciler.adopt.commit`), and the forge is told in `sync_adoption_request`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from reconciler.adopt.commit import BranchFile
from reconciler.adopt.model import Adoption
from reconciler.adopt.request import (
    CLOSING_NOTE,
    adoption_body,
    branch_for,
    not_described_note,
    own_commit,
    replaced_note,
    title_for,
    without_commit,
)
from reconciler.errors import ReconcilerError
from reconciler.gitops.drift import DRIFTED, IN_SYNC, DriftAction
from reconciler.gitops.forge import Forge, OpenRequest
from reconciler.render.marker import Marker


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
            forge.post_note(existing.number, replaced_note(branch, pushed, made))
    elif action is DriftAction.CLOSE:
        forge.close_request(existing.number, branch, CLOSING_NOTE)
    elif pushed is not None and mine is not None and not _said(forge, existing.number, pushed):
        forge.post_note(existing.number, not_described_note(branch, pushed))
    return AdoptionPrResult(action, existing.number, existing.url)


def _said(forge: Forge, request: int, pushed: str) -> bool:
    """Whether a note of the job's on `request` names the pushed commit already."""
    return any(pushed in note.body for note in forge.notes(request, None))
