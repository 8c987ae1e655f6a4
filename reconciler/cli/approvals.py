"""Dual control at the edge: `apply`'s and `plan`'s approvals options, and the forge's reviews.

`--approvals-from N[,N...]` names the change requests in range (the CI flow passes them);
`--policy-at SHA|none` the commit of the account's last successful apply (its files' policy is
the policy in force; `none`: never applied); `--run-url URL` the run, and `--records-out DIR`
where the evidence records are written (`reconciler.accounts.approving`, `.records`). The
reviews are read through the forge the job's environment names
(`reconciler.gitops.environment.source_from_env`), imported only when asked for; outside CI there
is none, and a payrun under an approvals policy waits.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from reconciler.errors import ReconcilerError

if TYPE_CHECKING:  # the gate and its reviews are imported when a command runs, not for --help
    from reconciler.plan.approvals import ReviewSource

F = TypeVar("F", bound=Callable[..., Any])
_SHA = re.compile(r"[0-9a-f]{7,64}")


def _numbers(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, ...]:
    del ctx
    if value is None:
        return ()
    numbers = []
    for part in value.split(","):
        text = part.strip().lstrip("#")
        if not text.isdecimal() or not text.isascii() or int(text) < 1 or len(text) > 12:
            raise click.BadParameter(
                f"{part!r:.40} is not a change request's number (1 or more)", param=param
            )
        numbers.append(int(text))
    return tuple(dict.fromkeys(numbers))


def _policy_at(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    del ctx
    if value is None:
        return None
    from reconciler.accounts.approving import NEVER_APPLIED

    text = value.strip().lower()
    if text != NEVER_APPLIED and not _SHA.fullmatch(text):
        raise click.BadParameter(
            f"{value!r:.80} is neither a commit SHA nor `none` (the account was never applied)",
            param=param,
        )
    return text


def _run_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    del ctx
    if value is not None and not re.fullmatch(r"https?://[^\s]{1,2000}", value):
        raise click.BadParameter(f"{value!r:.80} is not an http(s) URL", param=param)
    return value


def approvals_options(*, apply: bool) -> Callable[[F], F]:
    """`--approvals-from` (both commands), and for `apply` `--policy-at`, `--run-url` and
    `--records-out`; the command receives `gate` (a `Gate`)."""

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            from reconciler.accounts.approving import Gate

            requests = kwargs.pop("approvals_from")
            policy_at = kwargs.pop("policy_at", None)
            run_url = kwargs.pop("run_url", None)
            records_out = kwargs.pop("records_out", None)
            gate = Gate(requests, policy_at, run_url, records_out, review_source)
            return command(*args, gate=gate, **kwargs)

        wrapped: Any = wrapper
        if apply:
            wrapped = click.option(
                "--records-out",
                type=click.Path(file_okay=False, path_type=Path),
                help="Write the signed evidence record of each payrun paid here "
                "(<account>/<paylist key>.json), and approvals.json.",
            )(wrapped)
            wrapped = click.option(
                "--run-url", callback=_run_url, metavar="URL", help="The CI run, for the records."
            )(wrapped)
            wrapped = click.option(
                "--policy-at",
                callback=_policy_at,
                metavar="SHA|none",
                help="The commit of the account's last successful apply: its policy.approvals "
                "is the one in force (none: never applied). Default: the files' own.",
            )(wrapped)
        wrapped = click.option(
            "--approvals-from",
            callback=_numbers,
            metavar="N[,N...]",
            help="The pull (merge) requests whose approvals count for the payruns.",
        )(wrapped)
        return wrapped  # type: ignore[no-any-return]

    return decorate


def review_source(requests: Sequence[int]) -> tuple[ReviewSource | None, str | None]:
    """The forge's reviews of `requests` (None outside CI), or why they cannot be read: a
    forge named by the environment that cannot be opened (a missing token) is no approval,
    never "no forge"."""
    try:
        from reconciler.gitops.environment import source_from_env
    except ImportError:  # a build without the forges' adapters: no forge
        return None, None
    try:
        return source_from_env(requests), None
    except ReconcilerError as error:
        return None, f"refused: the reviews could not be read ({error.one_line()})"
