"""`reconciler github ...`: the GitHub side of the CI recipes, each command parsing its options
and calling the flow (reconciler.gitops: pending, landing, notes, statuses, plan_comment,
issues, adoption) with the GitHub forge (reconciler.gitops.github).

It talks to GitHub's REST API with the token from $GITHUB_TOKEN (a workflow passes
`secrets.GITHUB_TOKEN`), never from a flag; `reconciler plan-compare`, the reviewed-plan check,
is in `cli/plan_compare.py`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from reconciler.accounts.file import find_accounts_file, load_accounts_file
from reconciler.accounts.selection import MAX_CHUNK, account_names, named_accounts
from reconciler.accounts.targets import DEFAULT_ENVIRONMENT
from reconciler.cli.comment import key_option, marker_for
from reconciler.cli.gitops import (
    accounts_file_option,
    accounts_option,
    adopt_with,
    adoption_options,
    head_sha_option,
    planned_option,
    pr_option,
    run_url_option,
    written_accounts,
)
from reconciler.cli.review import COMMIT_SHA
from reconciler.gitops.github import ACTIONS_BOT
from reconciler.gitops.github.forge import GitHubForge
from reconciler.gitops.github.runs import DEFAULT_WORKFLOW, check_pull_head, find_reviewed_plan
from reconciler.gitops.issues import DEFAULT_LABEL, DEFAULT_TITLE, sync_drift_issue
from reconciler.gitops.notes import upsert_note
from reconciler.render.comment_body import JOB_SUMMARY_LIMIT, fit_body, utf8_bytes
from reconciler.render.marker import APPLY, DRIFT, PLAN

_repository_option = click.option(
    "--repository",
    metavar="OWNER/NAME",
    help="The repository (default: $GITHUB_REPOSITORY, which GitHub Actions sets).",
)
_text_file = click.Path(exists=True, dir_okay=False, path_type=Path)
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


@click.group("github")
def github() -> None:
    """Post the plan comment, keep the drift issue, find the reviewed plan (needs $GITHUB_TOKEN)."""


@github.command("pr-comment")
@pr_option
@click.option("--body-file", type=_text_file, required=True, help="From `reconciler comment`.")
@key_option
@click.option(
    "--purpose",
    type=click.Choice([PLAN, APPLY]),
    default=PLAN,
    show_default=True,
    help="plan: the plan comment; apply: the comment saying why a merge was not applied.",
)
@click.option(
    "--author",
    default=ACTIONS_BOT,
    show_default=True,
    help="Only a comment by this login is ours to update (the token's user or app bot).",
)
@_repository_option
def pr_comment(
    number: int,
    body_file: Path,
    key: str | None,
    purpose: str,
    author: str,
    repository: str | None,
) -> None:
    """Create the pull request's plan comment, or update the one already there."""
    marker = marker_for(purpose, key)
    body = body_file.read_text(encoding="utf-8")
    with GitHubForge.from_environment(repository=repository) as forge:
        result = upsert_note(forge, number, body, marker, author=author)
    click.echo(f"{result.action} the {purpose} comment: {result.url}")


@github.command("drift-issue")
@click.option(
    "--drift-exit-status",
    type=int,
    required=True,
    help="What `reconciler drift` exited with: 0 in sync (close), 2 drift (open or update), "
    "anything else leaves the issue alone.",
)
@click.option(
    "--report-file", type=_text_file, required=True, help="`drift --format markdown` output."
)
@key_option
@click.option("--label", default=DEFAULT_LABEL, show_default=True, help="The issue's label.")
@click.option("--title", default=DEFAULT_TITLE, show_default=True, help="A new issue's title.")
@_repository_option
def drift_issue(
    drift_exit_status: int,
    report_file: Path,
    key: str | None,
    label: str,
    title: str,
    repository: str | None,
) -> None:
    """Open, update or close the one drift issue to match what `reconciler drift` found."""
    marker = marker_for(DRIFT, key)
    report = report_file.read_text(encoding="utf-8")
    with GitHubForge.from_environment(repository=repository) as forge:
        result = sync_drift_issue(
            forge, drift_exit_status, report, marker, label=label, title=title
        )
    where = f" #{result.number}: {result.url}" if result.number is not None else ""
    click.echo(f"drift issue: {result.action.value}{where}")


@github.command("adopt-pr")
@adoption_options
@click.option(
    "--base-sha",
    envvar="GITHUB_SHA",
    help="The commit the adoption is built on (default: $GITHUB_SHA, the job's checkout).",
)
@_path
@_repository_option
def adopt_pr(repository: str | None, desired: Path | None, **given: Any) -> None:
    """Open, update or close the pull request that adopts what changed live (branch
    reconciler/adopt-<KEY>)."""
    from reconciler.gitops.adoption_plan import Subject, post_adoption_plan

    key = given["key"]
    subject = Subject(path=desired, key=key) if desired is not None else Subject(key)
    with GitHubForge.from_environment(repository=repository) as forge:
        result, files = adopt_with(forge, **given)
        if result.commit is not None and result.number is not None and (key or desired is not None):
            # Its token's pull request starts no plan workflow: the job plans it itself.
            planned = post_adoption_plan(
                forge, forge, result.number, result.commit, files, subject,
                root=Path.cwd(), run_url=_run_url(),
            )  # fmt: skip
            click.echo(f"its plan: {planned.state}, the note {planned.note}: {planned.url}")


def _run_url() -> str:
    """This workflow run's page, when GitHub Actions says it."""
    import os

    parts = [os.environ.get(k, "") for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY",
                                            "GITHUB_RUN_ID")]  # fmt: skip
    return f"{parts[0]}/{parts[1]}/actions/runs/{parts[2]}" if all(parts) else ""


@github.command("step-summary")
@click.option("--body-file", type=_text_file, required=True, help="The Markdown to add.")
@click.option(
    "--summary-file",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="GITHUB_STEP_SUMMARY",
    required=True,
    help="The job summary file (default: $GITHUB_STEP_SUMMARY, which GitHub Actions sets).",
)
def step_summary(body_file: Path, summary_file: Path) -> None:
    """Add the Markdown to the job summary, within GitHub's 1 MiB a step (cut with a note)."""
    existing = summary_file.stat().st_size if summary_file.exists() else 0
    body = fit_body(
        body_file.read_text(encoding="utf-8"),
        JOB_SUMMARY_LIMIT - existing,
        measure=utf8_bytes,
        whole="The whole plan is `plan.md` in this run's plan artifact.",
    )
    with summary_file.open("a", encoding="utf-8") as summary:
        summary.write(body)
    click.echo(f"added {utf8_bytes(body):,} bytes to the job summary")


@github.command("pull-head")
@pr_option
@click.option("--head-sha", type=COMMIT_SHA, required=True, help="The commit to plan.")
@_repository_option
def pull_head(number: int, head_sha: str, repository: str | None) -> None:
    """Exit 0 only if HEAD-SHA is the head of the open pull request PR (before planning it)."""
    with GitHubForge.from_environment(repository=repository) as client:
        pull = client.get(client.repo_path(f"pulls/{number}"))
    check_pull_head(pull, number, head_sha)
    click.echo(f"pull request #{number} is at {head_sha}: planning that commit")


@github.command("reviewed-plan")
@click.option(
    "--sha", type=COMMIT_SHA, required=True, help="The merge commit on the default branch."
)
@click.option(
    "--artifact",
    required=True,
    help="The plan artifact's name, without the `-<head sha>` the plan job adds.",
)
@click.option(
    "--workflow",
    default=DEFAULT_WORKFLOW,
    show_default=True,
    metavar="FILE",
    help="The plan workflow's file in .github/workflows/: only artifacts its runs on the "
    "default branch uploaded count.",
)
@_repository_option
def reviewed_plan(sha: str, artifact: str, workflow: str, repository: str | None) -> None:
    """Find the plan workflow's run that saved the merged pull request's plan; print
    GITHUB_OUTPUT lines."""
    if "/" in workflow or workflow.startswith("."):
        raise click.BadParameter(
            f"{workflow!r:.80} is not a file name in .github/workflows/ (such as "
            f"{DEFAULT_WORKFLOW})",
            param_hint="--workflow",
        )
    with GitHubForge.from_environment(repository=repository) as client:
        found = find_reviewed_plan(client, sha, artifact, workflow)
    if found is None:
        click.echo("found=false")
        return
    click.echo(
        f"found=true\npull-request={found.pull_request}\nhead-sha={found.head_sha}\n"
        f"run-id={found.run_id}\nartifact-id={found.artifact_id}\n"
        f"artifact-name={found.artifact_name}"
    )


@github.command("pending")
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
    from reconciler.accounts.targets import targets
    from reconciler.gitops.github import outputs

    accounts = targets(environment, accounts_file, path=desired, key=key)
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


@github.command("apply-accounts")
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
    from reconciler.accounts.targets import targets
    from reconciler.gitops.forge import ApplyJob, Reviewed
    from reconciler.gitops.landing import land_fleet
    from reconciler.gitops.outcome import FAILED, REFUSED

    if (names is None) == (desired is None):
        raise click.UsageError("give --accounts or --path, one of them")
    wanted = named_accounts(names, "--accounts") if names is not None else None
    accounts = targets(environment, accounts_file, wanted, path=desired, key=key)
    folder = reviewed if reviewed is not None and reviewed.is_dir() else None
    plans = Reviewed(folder, pull_request, head_sha)
    job = ApplyJob(sha, default_branch, environment, log_url, work_dir)
    with GitHubForge.from_environment() as forge:
        landings = [landing for landing, _ in land_fleet(forge, accounts, lambda _: plans, job)]
    for landing in landings:
        if landing.plan:
            click.echo(f"applied={landing.plan}")  # the action's output `applied`
    refused = [landing.account for landing in landings if landing.kind == REFUSED]
    failed = [landing.account for landing in landings if landing.kind == FAILED]
    if refused:  # a check said no before anything was sent
        click.echo(f"::error::Not applied (refused): {' '.join(refused)}")
    if failed:
        click.echo(f"::error::Not applied, or applied in part: {' '.join(failed)}")
    if refused or failed:
        raise click.exceptions.Exit(1)


@github.command("outcome")
@click.option("--sha", type=COMMIT_SHA, required=True, help="The commit the run applied.")
@click.option("--pulls", required=True, help='`pending`\'s pulls= line: {"eu": [31], ...}.')
@run_url_option
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


@github.command("commit-status")
@click.option("--sha", type=COMMIT_SHA, required=True, help="The pull request's head commit.")
@click.option("--state", type=click.Choice(["pending", "success", "failure", "error"]),
              help="The status (or give --plan-result).")  # fmt: skip
@click.option("--plan-result", type=click.Choice(["success", "failure", "cancelled", "skipped"]),
              help="The plan jobs' result (needs.plan.result).")  # fmt: skip
@planned_option
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


@github.command("plan-comment")
@pr_option
@head_sha_option
@planned_option
@click.option("--plans", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The joined folder of saved plans, <account>.json each.")  # fmt: skip
@run_url_option
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
    from reconciler.accounts.pull_request import pull_request_accounts
    from reconciler.gitops.plan_comment import post_plan_comment

    accounts = None
    if pull_request_files is not None:  # its plans were made with the accounts it adds
        default = find_accounts_file(None)
        accounts = pull_request_accounts(default, pull_request_files).path
    with GitHubForge.from_environment() as forge:
        result, body = post_plan_comment(forge, account_names([names]), plans, number, head_sha,
                                         run_url=run_url, accounts_file=accounts)  # fmt: skip
    body_out.write_text(body, encoding="utf-8")
    click.echo(f"{result.action} the plan comment: {result.url}")


@github.command("matrix")
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
    from reconciler.accounts.pull_request import planned_names
    from reconciler.gitops.account_jobs import matrix_lines

    default = find_accounts_file(accounts_file)
    if pull_request_files is not None:
        names = planned_names(written_accounts(default, pull_request_files), changed_since)
    else:
        names = load_accounts_file(default).names
    for line in matrix_lines(names, chunk):
        click.echo(line)
    click.echo(f"Accounts: {' '.join(names) or 'none'}", err=True)


@github.command("plan-accounts")
@accounts_option
@pr_option
@head_sha_option
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

    default = find_accounts_file(accounts_file)
    files, refused = default, {}
    if pull_request_files is not None:
        written = written_accounts(default, pull_request_files)
        files, refused = written.path, written.refused
    job = PlanJob(files, number, head_sha, out, part, refused)
    raise click.exceptions.Exit(plan(account_names([names]), job))


@github.command("drift-accounts")
@accounts_option
@click.option("--work-dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="A folder for the reports.")  # fmt: skip
@click.option("--fail-on-drift", type=bool, default=False, help="Exit 2 on drift too.")
@click.option("--strict", type=bool, default=True, show_default=True,
              help="Run drift --strict (unmanaged workers and conflicts count as drift); false "
              "reports them without opening the issue for them.")  # fmt: skip
def drift_accounts(names: str, work_dir: Path, fail_on_drift: bool, strict: bool) -> None:
    """Check each account for drift; keep its drift issue and adoption pull request; exit 1
    when a check failed (after every one ran)."""
    from reconciler.gitops.account_jobs import DriftJob
    from reconciler.gitops.account_jobs import drift_accounts as drift

    job = DriftJob(work_dir, fail_on_drift, strict=strict)
    raise click.exceptions.Exit(drift(account_names([names]), job))


@github.command("head-plan")
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


@github.command("approvals-status")
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
    from reconciler.gitops.approvals import ForgeReviews
    from reconciler.gitops.statuses import status_from_plans

    with GitHubForge.from_environment() as forge:
        source = ForgeReviews(forge, [number])
        said = status_from_plans(forge, source, plans, head_sha, context, target_url)
    click.echo(f"{context}: {said}")
