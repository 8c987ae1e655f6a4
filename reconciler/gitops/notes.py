"""One note (comment) of each kind per change request: found again by its marker, updated in
place, never duplicated; and the outcome note, a row per account the merge applied."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reconciler.gitops.forge import Forge, NoteResult
from reconciler.gitops.outcome import OUTCOME, Landing
from reconciler.render.comment_body import fit_body
from reconciler.render.marker import Marker
from reconciler.render.outcome import outcome_body

#: Each change request's outcome rows: (the account's outcome, its run's page).
Rows = Mapping[int, Sequence[tuple[Landing, str | None]]]


def upsert_note(
    forge: Forge, request: int, body: str, marker: Marker, *, author: str | None = None
) -> NoteResult:
    """Create the marked note on `request`, or update the one there (written by `author`;
    None: the forge's default)."""
    body = fit_body(marker.stamp(body), forge.words.note_limit)
    existing = next((n for n in forge.notes(request, author) if marker.matches(n.body)), None)
    if existing is None:
        created = forge.post_note(request, body)
        return NoteResult("created", created.id, created.url)
    if existing.body == body:
        return NoteResult("unchanged", existing.id, existing.url)
    updated = forge.edit_note(request, existing, body)
    return NoteResult("updated", updated.id, updated.url)


def post_outcomes(
    forge: Forge, rows: Rows, sha: str, run_url: str, key: str = "accounts"
) -> list[tuple[int, NoteResult]]:
    """Keep the outcome note (`key`'s: the accounts', or the action's key) of every change
    request in `rows`, its rows replaced by these; what was done to each, in order."""
    marker = Marker(OUTCOME, key)
    done = []
    for request, mine in sorted(rows.items()):
        existing = next((n for n in forge.notes(request, None) if marker.matches(n.body)), None)
        before = marker.strip(existing.body) if existing is not None else None
        body = outcome_body(mine, sha, run_url, before)
        done.append((request, upsert_note(forge, request, body, marker)))
    return done
