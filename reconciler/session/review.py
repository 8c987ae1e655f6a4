"""The review a saved plan is bound to: the digest of the desired-state files it was planned
from, and the pull request and commit it was reviewed on.

`plan --out` and `comment --out` record it (`review_planned`, from the bytes the load read);
`apply PLAN --expect-...` and `apply DIR` check a plan against the files as they are now
(`review_of`, `check_expected`). The options that ask for it are the command line's
(`reconciler.cli.review`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import click

from reconciler.desired.source import read_sources
from reconciler.errors import ReconcilerError
from reconciler.plan.review import FILES_LABEL, Review, check_review, files_digest
from reconciler.plan.saved import SavedPlan
from reconciler.plan.signing import PlanKey


def review_of(path: Path, key: PlanKey, pull_request: tuple[int, str] | None = None) -> Review:
    """The review a plan of the files at `path` as they are now would have (the merge's)."""
    number, sha = pull_request if pull_request is not None else (None, None)
    return Review(_digest(_read(path), key), number, sha)


def review_planned(
    digests: Sequence[tuple[str, str]], key: PlanKey, pull_request: tuple[int, str] | None
) -> Review:
    """The review of a plan made from files whose bytes, as its load read them, have these
    SHA-256 digests (`DesiredState.digests`): never read again, so a file changed while the
    plan was made is not signed as reviewed."""
    assert digests, "load_desired_state(digests=True): a plan to save records its files"
    number, sha = pull_request if pull_request is not None else (None, None)
    return Review(_digest(digests, key), number, sha)


def check_expected(
    saved: SavedPlan,
    key: PlanKey,
    pull_request: int | None,
    head_sha: str | None,
    files: Path | None,
) -> None:
    """`apply PLAN --expect-...`: refuse a plan reviewed for other files, another pull request
    or commit (nothing to check when none is given)."""
    if files is None:
        if pull_request is not None or head_sha is not None:
            raise click.UsageError(
                "--expect-pull-request and --expect-head-sha need --expect-files: a plan is "
                "the reviewed one only for the same files too"
            )
        return
    assert saved.review is not None, "a saved plan read from a file records its review"
    expected = Review(_digest(_read(files), key), pull_request, head_sha)
    check_review(saved.review, expected, name=saved.name)


def _read(path: Path) -> list[tuple[str, str]]:
    sources, problems = read_sources(path, digests=True)
    if problems:
        first = problems[0]
        raise ReconcilerError(f"cannot read the desired-state files at {path}: {first}")
    return [(source.name, source.sha256) for source in sources]


def _digest(digests: Iterable[tuple[str, str]], key: PlanKey) -> str:
    # The file's name only: the plan and the merge read the same files from other folders.
    named = ((Path(name).name, sha256) for name, sha256 in digests)
    return files_digest(named, key.derive(FILES_LABEL))
