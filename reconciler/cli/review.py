"""The review a saved plan is bound to, at the edge: its options, and the files' digest.

`plan --out` and `comment --out` record the digest of the desired-state files they planned
and, given `--pull-request N --head-sha SHA` (the plan job passes its inputs: the plan workflow
runs on the default branch, so nothing in its own environment names the pull request's commit),
that pull request and commit. `apply PLAN --expect-pull-request N --expect-head-sha SHA
--expect-files PATH` (the merge job's) applies the plan only when all three match.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from reconciler.desired.source import read_sources
from reconciler.errors import ReconcilerError
from reconciler.plan.review import COMMIT, FILES_LABEL, Review, check_review, files_digest
from reconciler.plan.saved import SavedPlan
from reconciler.plan.signing import PlanKey

F = TypeVar("F", bound=Callable[..., Any])


class _Commit(click.ParamType):  # type: ignore[type-arg]
    name = "sha"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = str(value).strip().lower()
        if not COMMIT.fullmatch(text):
            self.fail(f"{value!r:.80} is not a full commit SHA (40 hexadecimal digits)", param)
        return text


COMMIT_SHA = _Commit()


def review_options(command: F) -> F:
    """`--pull-request N --head-sha SHA`, both or neither; the command receives `pull_request`
    (None or (N, SHA))."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        number, sha = kwargs.pop("pull_request_number"), kwargs.pop("head_sha")
        if (number is None) != (sha is None):
            raise click.UsageError(
                "--pull-request and --head-sha go together: the pull request and the commit "
                "of it that is planned"
            )
        return command(*args, pull_request=None if number is None else (number, sha), **kwargs)

    wrapper = click.option(
        "--head-sha",
        type=COMMIT_SHA,
        help="With --pull-request: the commit of the pull request that is planned (its head).",
    )(wrapper)
    wrapper = click.option(
        "--pull-request",
        "pull_request_number",
        type=click.IntRange(min=1),
        metavar="N",
        help="Record in the saved plan the pull request it is reviewed on (with --head-sha), "
        "so the merge applies it only for that pull request and commit.",
    )(wrapper)
    return wrapper  # type: ignore[return-value]


def expect_options(command: F) -> F:
    """`apply PLAN`'s `--expect-pull-request`, `--expect-head-sha` and `--expect-files`."""
    decorators = [
        click.option(
            "--expect-pull-request",
            type=click.IntRange(min=1),
            metavar="N",
            help="A saved PLAN or DIR: apply it only if it was planned for this pull request "
            "(with --expect-head-sha, and for a PLAN --expect-files: the merge job's check; "
            "each plan of a DIR is checked against the files at its account's path).",
        ),
        click.option(
            "--expect-head-sha",
            type=COMMIT_SHA,
            help="A saved PLAN or DIR: apply it only if it was planned at this commit.",
        ),
        click.option(
            "--expect-files",
            type=click.Path(path_type=Path),
            metavar="PATH",
            help="A saved PLAN only: apply it only if it was planned from the same "
            "desired-state files as those at PATH now.",
        ),
    ]
    for decorate in reversed(decorators):
        command = decorate(command)
    return command


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
