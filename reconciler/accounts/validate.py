"""`validate` over the selected accounts: the accounts file, then each account's files, with
no network; each account's problems printed as `validate PATH` prints a file's."""

from __future__ import annotations

import json
import os

import click

from reconciler.accounts.options import AccountOptions
from reconciler.annotations import workflow_command
from reconciler.errors import ReconcilerError
from reconciler.words import plural


def validate_accounts(options: AccountOptions, output_format: str, no_env: bool) -> None:
    """Check the accounts file, then each selected account's files (no network)."""
    from reconciler.accounts.environment import account_environment
    from reconciler.accounts.file import InvalidAccountsFile
    from reconciler.accounts.run import Job
    from reconciler.desired import InvalidDesiredState, load_desired_state
    from reconciler.desired.report import LISTED, expired_rules, render_problems

    try:
        accounts, chosen = options.load()
    except InvalidAccountsFile as error:  # its problems as the desired state's are shown
        click.echo(render_problems(InvalidDesiredState(error.problems), output_format))
        raise click.exceptions.Exit(1) from None

    def check(job: Job) -> str:
        state = load_desired_state(job.entry.path, job.environ, read_variables=not no_env)
        if expired := expired_rules(state, output_format, account=job.entry.name):
            click.echo(expired, err=output_format != "github")
        webhook = "a webhook" if state.webhook is not None else "no webhook"
        return f"({plural(len(state.workers), 'worker')}, {webhook})"

    invalid: list[tuple[str, InvalidDesiredState]] = []
    failed: list[tuple[str, str]] = []
    valid: list[tuple[str, str]] = []
    for entry in chosen:  # reading files is CPU: one after the other
        environ = account_environment(entry, accounts, os.environ, connect=False)
        try:
            valid.append((entry.name, check(Job(entry, environ, _ignore, _ignore))))
        except InvalidDesiredState as error:
            invalid.append((entry.name, error))
        except ReconcilerError as error:
            failed.append((entry.name, str(error)))
    if output_format == "json":
        rows = []
        for name, problem in invalid:
            rows += [
                {"account": name, **row} for row in json.loads(render_problems(problem, "json"))
            ]
        rows += [{"account": name, "message": message} for name, message in failed]
        click.echo(json.dumps(rows, indent=2))
    elif output_format == "github":
        lines = [render_problems(problem, "github") for _, problem in invalid]
        lines += [workflow_command("error", f"account {name}: {said}") for name, said in failed]
        if lines:
            click.echo("\n".join(lines))
    else:
        for name, summary in valid:
            path = accounts.named(name).written_path  # type: ignore[union-attr]
            click.echo(f"account {name}: {path}: valid {summary}")
        for name, problem in invalid:
            click.echo(f"account {name}: invalid")
            problems = problem.problems[: LISTED["text"]]
            click.echo("\n".join(f"  {problem}" for problem in problems))
        for name, message in failed:
            click.echo(f"account {name}: {message}")
    if invalid or failed:
        raise click.exceptions.Exit(1)


def _ignore(*_: object) -> None:
    return None
