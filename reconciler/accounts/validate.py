"""`validate` over a fleet: the accounts file, then each account's files, with no network; each
account's problems printed as `validate PATH` prints a file's, and a fleet of one (PATH) as a
file's always were.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import click

from reconciler.accounts.confine import path_environment
from reconciler.accounts.file import AccountEntry, InvalidAccountsFile, approvals_twice
from reconciler.accounts.fleet import Fleet, refuse_path
from reconciler.accounts.options import AccountOptions
from reconciler.annotations import workflow_command
from reconciler.desired import InvalidDesiredState, load_desired_state
from reconciler.desired.report import LISTED, expired_rules, render_problems
from reconciler.errors import ReconcilerError
from reconciler.words import plural

#: pre-commit sets this in the environment of every hook it runs.
_PRE_COMMIT = "PRE_COMMIT"


def validate_fleet(
    path: Path | None, options: AccountOptions, output_format: str, no_env: bool
) -> None:
    """Check the accounts file, then each selected account's files, or the files at PATH."""
    if options.active:
        refuse_path(path)
    elif path is None:
        message, hint = _missing_path()
        raise ReconcilerError(message, hint=hint)
    fleet = Fleet(options, path, single=not options.active)
    try:
        accounts, chosen = fleet.load()
    except InvalidAccountsFile as error:  # its problems as the desired state's are shown
        click.echo(render_problems(InvalidDesiredState(error.problems), output_format))
        raise click.exceptions.Exit(1) from None

    invalid: list[tuple[str, InvalidDesiredState]] = []
    failed: list[tuple[str, str]] = []
    valid: list[tuple[str, str]] = []
    for entry in chosen:  # reading files is CPU: one after the other
        if fleet.single:
            environ = path_environment(entry.path, os.environ)
        else:
            from reconciler.accounts.environment import account_environment

            environ = account_environment(entry, accounts, os.environ, connect=False)
        try:
            state = load_desired_state(entry.path, environ, read_variables=not no_env)
        except InvalidDesiredState as error:
            invalid.append((entry.name, error))
            continue
        except ReconcilerError as error:
            if fleet.single:  # the command's own error
                raise
            failed.append((entry.name, str(error)))
            continue
        if entry.approvals is not None and state.policy.approvals is not None:
            twice = approvals_twice(entry, accounts.path)
            invalid.append((entry.name, InvalidDesiredState([twice])))
            continue
        account = None if fleet.single else entry.name
        if expired := expired_rules(state, output_format, account=account):
            click.echo(expired, err=output_format != "github")
        webhook = "a webhook" if state.webhook is not None else "no webhook"
        valid.append((entry.name, f"({plural(len(state.workers), 'worker')}, {webhook})"))
    if fleet.single:
        _report_one(valid, invalid, output_format)
    else:
        _report(accounts.named, valid, invalid, failed, output_format)
    if invalid or failed:
        raise click.exceptions.Exit(1)


def _report_one(
    valid: list[tuple[str, str]], invalid: list[tuple[str, InvalidDesiredState]], fmt: str
) -> None:
    """A fleet of one as `validate PATH` reports a file: its problems, or that it is valid."""
    for _, error in invalid:
        click.echo(render_problems(error, fmt))
        if fmt != "text" and error.total > len(error.problems[: LISTED[fmt]]):
            click.echo(error.count_line(LISTED[fmt]), err=True)
    for path, summary in valid:
        if fmt == "json":
            click.echo("[]")
        elif fmt == "text":
            click.echo(f"{path}: valid {summary}")


def _report(
    named: Callable[[str], AccountEntry | None],
    valid: list[tuple[str, str]],
    problems: list[tuple[str, InvalidDesiredState]],
    failed: list[tuple[str, str]],
    output_format: str,
) -> None:
    """Every account's result, named."""
    if output_format == "json":
        rows = []
        for name, problem in problems:
            rows += [
                {"account": name, **row} for row in json.loads(render_problems(problem, "json"))
            ]
        rows += [{"account": name, "message": message} for name, message in failed]
        click.echo(json.dumps(rows, indent=2))
    elif output_format == "github":
        lines = [render_problems(problem, "github") for _, problem in problems]
        lines += [workflow_command("error", f"account {name}: {said}") for name, said in failed]
        if lines:
            click.echo("\n".join(lines))
    else:
        for name, summary in valid:
            path = named(name).written_path  # type: ignore[union-attr]
            click.echo(f"account {name}: {path}: valid {summary}")
        for name, problem in problems:
            click.echo(f"account {name}: invalid")
            listed = problem.problems[: LISTED["text"]]
            click.echo("\n".join(f"  {item}" for item in listed))
        for name, message in failed:
            click.echo(f"account {name}: {message}")


def _missing_path() -> tuple[str, str]:
    """What to say when no PATH is given: in a pre-commit hook, the lines to add."""
    if os.environ.get(_PRE_COMMIT):
        return (
            "the reconciler-validate hook needs the path of your desired state",
            "add it to the hook in .pre-commit-config.yaml, for instance\n"
            "        - id: reconciler-validate\n"
            "          args: [workforce/]      # your file or directory\n"
            "          files: ^workforce/",
        )
    return (
        "no PATH given: name the desired-state file or directory to check",
        "reconciler validate workforce.yaml   (or a directory of *.yaml files)",
    )
