"""`reconciler github pending | apply-accounts | outcome | commit-status | plan-comment`: the
accounts workflows' decisions (reconciler.gitops.pending, .landing, .outcome, .statuses,
.plan_comment), each command parsing its options and calling one of them."""

from __future__ import annotations

import json
from pathlib import Path

import click

from reconciler.accounts.file import find_accounts_file, load_accounts_file
from reconciler.accounts.selection import MAX_CHUNK, account_names, named_accounts
from reconciler.cli.review import COMMIT_SHA
from reconciler.gitops.github.forge import GitHubForge
from reconciler.gitops.record import DEFAULT_ENVIRONMENT

accounts_file_option = click.option(
    "--accounts-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The accounts file (default: reconciler.yaml here or in a parent folder).",
)
_environment = click.option(
    "--environment",
    default=DEFAULT_ENVIRONMENT,
    show_default=True,
    help="The environment each account's deployments (its apply record) are kept in; "
    "{account} is its name.",
)
_ACCOUNTS_PLAN = "reconciler-accounts-plan.yml"
_path = click.option(
    "--path",
    "desired",
    type=click.Path(exists=True, path_type=Path),
    help="The single account's desired state (the action's), not the accounts.",
)
_key = click.option("--key", help="The single account's key (the action's), if it has one.")


@click.command("pending")
@click.option("--sha", type=COMMIT_SHA, required=True, help="The commit the run applies.")
@click.option("--chunk", type=click.IntRange(1, MAX_CHUNK), metavar="K",
              help="K accounts a matrix job (sharing one reviewed plan artifact).")  # fmt: skip
@click.option("--artifact", default="reconciler-plans", show_default=True,
              help="The joined plan artifact's name, without its `-<head sha>`.")  # fmt: skip
@click.option("--workflow", default=_ACCOUNTS_PLAN, show_default=True, metavar="FILE",
              help="The plan workflow whose runs on main saved the plans.")  # fmt: skip
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["github-output", "report"]),
    default="github-output",
    show_default=True,
    help="github-output: matrix=, names= and pulls= lines; report: a warning per account.",
)
@_environment
@accounts_file_option
@_path
@_key
def pending(
    sha: str,
    chunk: int | None,
    artifact: str,
    workflow: str,
    fmt: str,
    environment: str,
    accounts_file: Path | None,
    desired: Path | None,
    key: str | None,
) -> None:
    """The accounts whose files at SHA are not their last successful apply's, with the plan
    reviewed for each (GITHUB_OUTPUT lines), or a report of them (the drift check)."""
    from reconciler.gitops.github import outputs
    from reconciler.gitops.landing import fleet

    accounts = fleet(environment, accounts_file, path=desired, key=key)
    ask = {"artifact": artifact, "workflow": workflow}
    notices: list[str] = []
    with GitHubForge.from_environment() as forge:
        if desired is not None:  # the action's outputs, of its one account
            lines = outputs.action_lines(forge, accounts, sha, drift=fmt == "report", **ask)
        elif fmt == "report":
            lines = outputs.summary_lines(forge, accounts, sha)
        else:
            lines, notices = outputs.accounts_lines(forge, accounts, sha, chunk=chunk, **ask)
    click.echo("\n".join(lines))
    for notice in notices:
        click.echo(notice, err=True)


@click.command("apply-accounts")
@click.option("--accounts", "names", help="The accounts, separated by spaces (or give --path).")
@click.option("--sha", type=COMMIT_SHA, required=True, help="The commit the run applies.")
@click.option("--default-branch", required=True, help="The repository's default branch.")
@click.option("--reviewed", type=click.Path(file_okay=False, path_type=Path),
              help="The folder of the reviewed plans, <account>.json each.")  # fmt: skip
@click.option("--pull-request", type=int, help="The pull request the reviewed plans are of.")
@click.option("--head-sha", help="Its head commit, as planned.")
@click.option("--work-dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="A folder for the new plans.")  # fmt: skip
@click.option("--log-url", required=True, help="This run's page, for the records.")
@_environment
@accounts_file_option
@_path
@_key
def apply_accounts(names: str | None, sha: str, default_branch: str, reviewed: Path | None,
                   pull_request: int | None, head_sha: str | None, work_dir: Path, log_url: str,
                   environment: str, accounts_file: Path | None, desired: Path | None,
                   key: str | None) -> None:  # fmt: skip
    """Apply each account (or the single account at --path) as the default branch says, from
    its last successful apply; exit 1 when one was refused or failed (after every one ran)."""
    from reconciler.gitops.forge import ApplyJob, Reviewed
    from reconciler.gitops.landing import fleet, land_fleet

    if (names is None) == (desired is None):
        raise click.UsageError("give --accounts or --path, one of them")
    wanted = named_accounts(names, "--accounts") if names is not None else None
    accounts = fleet(environment, accounts_file, wanted, path=desired, key=key)
    folder = reviewed if reviewed is not None and reviewed.is_dir() else None
    plans = Reviewed(folder, pull_request, head_sha)
    job = ApplyJob(sha, default_branch, environment, log_url, work_dir)
    with GitHubForge.from_environment() as forge:
        landings = [landing for landing, _ in land_fleet(forge, accounts, lambda _: plans, job)]
    for landing in landings:
        if landing.plan:
            click.echo(f"applied={landing.plan}")  # the action's output `applied`
    failed = [landing.account for landing in landings if landing.failed]
    if failed:
        click.echo(f"::error::Not applied, or applied in part: {' '.join(failed)}")
        raise click.exceptions.Exit(1)


@click.command("outcome")
@click.option("--sha", type=COMMIT_SHA, required=True, help="The commit the run applied.")
@click.option("--pulls", required=True, help='`pending`\'s pulls= line: {"eu": [31], ...}.')
@click.option("--run-url", required=True, help="This run's page.")
@_environment
@click.option("--key", default="accounts", show_default=True, help="The comment's key.")
def outcome(sha: str, pulls: str, run_url: str, environment: str, key: str) -> None:
    """Keep one comment on each pull request this run applied: a row per account."""
    from reconciler.gitops.notes import post_outcomes

    try:
        wanted = json.loads(pulls or "{}")
        valid = isinstance(wanted, dict) and all(
            isinstance(v, list) and all(isinstance(n, int) for n in v) for v in wanted.values()
        )
    except ValueError:
        valid = False
    if not valid:
        raise click.BadParameter(
            f"{pulls!r:.80} is not a JSON object of account names to pull request numbers",
            param_hint="--pulls",
        )
    with GitHubForge.from_environment() as forge:
        landings = {row[0].account: row for row in forge.landings(wanted, sha, environment)}
        rows = {
            number: [landings[name] for name, numbers in wanted.items() if number in numbers]
            for number in {n for numbers in wanted.values() for n in numbers}
        }
        results = post_outcomes(forge, rows, sha, run_url, key)
    for _, result in results:
        click.echo(f"{result.action} the outcome comment: {result.url}")


@click.command("commit-status")
@click.option("--sha", type=COMMIT_SHA, required=True, help="The pull request's head commit.")
@click.option("--state", type=click.Choice(["pending", "success", "failure", "error"]),
              help="The status (or give --plan-result).")  # fmt: skip
@click.option("--plan-result", type=click.Choice(["success", "failure", "cancelled", "skipped"]),
              help="The plan jobs' result (needs.plan.result).")  # fmt: skip
@click.option("--accounts", "names", default="", help="The accounts to plan, separated by spaces.")
@click.option("--plans", type=click.Path(file_okay=False, path_type=Path),
              help="The folder of the saved plans, whose changes it counts.")  # fmt: skip
@click.option("--description", default="", help="What it says, before the counts.")
@click.option("--context", default="reconciler/plan", show_default=True,
              help="The status's name, which branch protection can require.")  # fmt: skip
@click.option("--target-url", default="", help="The run's page.")
def commit_status(
    sha: str,
    state: str | None,
    plan_result: str | None,
    names: str,
    plans: Path | None,
    description: str,
    context: str,
    target_url: str,
) -> None:
    """Set the plan's commit status on the pull request's head."""
    from reconciler.gitops.statuses import PlanStatus, set_plan_status

    if (state is None) == (plan_result is None):
        raise click.UsageError("give --state or --plan-result, one of them")
    status = PlanStatus(state, plan_result, tuple(account_names([names])), plans)
    with GitHubForge.from_environment() as forge:
        said = set_plan_status(forge, sha, status, description, context, target_url)
    click.echo(f"{context}: {said}")


_chunk = click.option("--chunk", type=click.IntRange(1, MAX_CHUNK), metavar="K",
                      envvar="RECONCILER_CHUNK", help="K accounts a job.")  # fmt: skip
_pull_request_files = click.option(
    "--pull-request-files", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
    help="The pull request's checkout: its reconciler.yaml becomes the default branch's with "
    "the accounts it adds (reconciler.gitops.pull_accounts).",
)  # fmt: skip


@click.command("plan-comment")
@click.option("--pr", "number", type=click.IntRange(min=1), required=True, help="The PR number.")
@click.option("--head-sha", type=COMMIT_SHA, required=True, help="The commit planned.")
@click.option("--accounts", "names", default="", help="The accounts to plan, separated by spaces.")
@click.option("--plans", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The joined folder of saved plans, <account>.json each.")  # fmt: skip
@click.option("--run-url", required=True, help="This run's page.")
@click.option("--body-out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write the body too (for the job summary).")  # fmt: skip
@_pull_request_files
def plan_comment(
    number: int,
    head_sha: str,
    names: str,
    plans: Path,
    run_url: str,
    body_out: Path,
    pull_request_files: Path | None,
) -> None:
    """Post or update the one plan comment of every account's plan on the pull request."""
    from reconciler.gitops.plan_comment import post_plan_comment
    from reconciler.gitops.pull_accounts import pull_request_accounts

    accounts = None
    if pull_request_files is not None:  # its plans were made with the accounts it adds
        default = find_accounts_file(None)
        accounts = pull_request_accounts(default, pull_request_files).path
    with GitHubForge.from_environment() as forge:
        result, body = post_plan_comment(forge, account_names([names]), plans, number, head_sha,
                                         run_url=run_url, accounts_file=accounts)  # fmt: skip
    body_out.write_text(body, encoding="utf-8")
    click.echo(f"{result.action} the plan comment: {result.url}")


@click.command("matrix")
@click.option("--changed-since", metavar="REF", help="Only the accounts changed since REF.")
@_chunk
@_pull_request_files
@accounts_file_option
def job_matrix(
    changed_since: str | None,
    chunk: int | None,
    pull_request_files: Path | None,
    accounts_file: Path | None,
) -> None:
    """The matrix= and names= lines (GITHUB_OUTPUT) of the accounts' jobs."""
    from reconciler.gitops.account_jobs import matrix_lines
    from reconciler.gitops.pull_accounts import messages, planned_names, pull_request_accounts

    default = find_accounts_file(accounts_file)
    if pull_request_files is not None:
        written = pull_request_accounts(default, pull_request_files)
        for message in messages(written):
            click.echo(message, err=True)
        names = planned_names(written, changed_since)
    else:
        names = load_accounts_file(default).names
    for line in matrix_lines(names, chunk):
        click.echo(line)
    click.echo(f"Accounts: {' '.join(names) or 'none'}", err=True)


@click.command("plan-accounts")
@click.option("--accounts", "names", required=True, help="The accounts, separated by spaces.")
@click.option("--pr", "number", type=click.IntRange(min=1), required=True, help="The PR number.")
@click.option("--head-sha", type=COMMIT_SHA, required=True, help="The commit planned.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The plans' folder: plans/<account>.json, full/<part>.md.")  # fmt: skip
@click.option("--part", required=True, help="This job's part of the plans (its account).")
@_pull_request_files
@accounts_file_option
def plan_accounts(
    names: str,
    number: int,
    head_sha: str,
    out: Path,
    part: str,
    pull_request_files: Path | None,
    accounts_file: Path | None,
) -> None:
    """Validate and plan each account of the pull request; exit 1 when one failed (after
    every one ran)."""
    from reconciler.gitops.account_jobs import PlanJob
    from reconciler.gitops.account_jobs import plan_accounts as plan
    from reconciler.gitops.pull_accounts import messages, pull_request_accounts

    default = find_accounts_file(accounts_file)
    files, refused = default, {}
    if pull_request_files is not None:
        written = pull_request_accounts(default, pull_request_files)
        files, refused = written.path, written.refused
        for message in messages(written):
            click.echo(message, err=True)
    job = PlanJob(files, number, head_sha, out, part, refused)
    raise click.exceptions.Exit(plan(account_names([names]), job))


@click.command("drift-accounts")
@click.option("--accounts", "names", required=True, help="The accounts, separated by spaces.")
@click.option("--work-dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="A folder for the reports.")  # fmt: skip
@click.option("--fail-on-drift", type=bool, default=False, help="Exit 2 on drift too.")
def drift_accounts(names: str, work_dir: Path, fail_on_drift: bool) -> None:
    """Check each account for drift; keep its drift issue and adoption pull request; exit 1
    when a check failed (after every one ran)."""
    from reconciler.gitops.account_jobs import DriftJob
    from reconciler.gitops.account_jobs import drift_accounts as drift

    raise click.exceptions.Exit(drift(account_names([names]), DriftJob(work_dir, fail_on_drift)))


@click.command("head-plan")
@click.option("--pr", "number", type=click.IntRange(min=1), required=True, help="The PR number.")
@click.option("--head-sha", type=COMMIT_SHA, required=True, help="Its head commit.")
@click.option("--artifact", required=True,
              help="The plan artifact's name, without its `-<head sha>`.")  # fmt: skip
@click.option("--workflow", default=_ACCOUNTS_PLAN, show_default=True, metavar="FILE",
              help="The plan workflow whose runs on main saved the plans.")  # fmt: skip
def head_plan(number: int, head_sha: str, artifact: str, workflow: str) -> None:
    """The plan the plan workflow saved for the pull request's head: GITHUB_OUTPUT lines
    (`run-id=`, `artifact-name=`, empty when none), for the approvals' status on a review."""
    from reconciler.gitops.github.outputs import plan_lines
    from reconciler.gitops.github.runs import plan_of_head

    with GitHubForge.from_environment() as forge:
        found = plan_of_head(forge, number, head_sha, artifact, workflow)
    click.echo("\n".join(plan_lines(found)))


@click.command("approvals-status")
@click.option("--pr", "number", type=click.IntRange(min=1), required=True, help="The PR number.")
@click.option("--head-sha", type=COMMIT_SHA, required=True, help="Its head commit.")
@click.option("--plans", type=click.Path(path_type=Path), required=True,
              help="The head's reviewed plan, or the folder of its accounts' plans.")  # fmt: skip
@click.option("--context", default="reconciler/approvals", show_default=True,
              help="The status's name (with a key: reconciler/approvals/KEY).")  # fmt: skip
@click.option("--target-url", default="", help="The run's page.")
def approvals_status(
    number: int, head_sha: str, plans: Path, context: str, target_url: str
) -> None:
    """Set the approvals' status on the pull request's head from its reviews now: pending
    while a payrun of the reviewed plans lacks its approvals, success when each has them."""
    from reconciler.gitops.approval_status import status_from_plans
    from reconciler.gitops.approvals import ForgeReviews

    with GitHubForge.from_environment() as forge:
        source = ForgeReviews(forge, [number])
        said = status_from_plans(forge, source, plans, head_sha, context, target_url)
    click.echo(f"{context}: {said}")


#: The `reconciler github` commands of the accounts workflows.
GITHUB = (pending, apply_accounts, outcome, commit_status, plan_comment, job_matrix,
          plan_accounts, drift_accounts, head_plan, approvals_status)  # fmt: skip
