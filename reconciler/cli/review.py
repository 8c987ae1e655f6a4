"""The review a saved plan is bound to, at the edge: its options (the digest of the files is
`reconciler.session.review`'s).

`plan --out` and `comment --out` record the digest of the desired-state files they planned
and, given `--pull-request N --head-sha SHA` (the plan job passes its inputs: the plan workflow
runs on the default branch, so nothing in its own environment names the pull request's commit),
that pull request and commit. `apply PLAN --expect-pull-request N --expect-head-sha SHA
--expect-files PATH` (the merge job's) applies the plan only when all three match.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from reconciler.plan.review import COMMIT

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
