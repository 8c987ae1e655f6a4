"""The GitLab pipeline's commands (`reconciler gitlab plan-account`, ...): each parses its
options and calls one of reconciler.gitops.gitlab_*'s decisions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from reconciler.accounts.file import find_accounts_file
from reconciler.cli.github_runs import accounts_file_option
from reconciler.cli.review import COMMIT_SHA


@click.command("plan-account")
@click.option("--account", "name", required=True, help="The account of this job.")
@click.option("--since", required=True, metavar="REF", help="The target branch (changed since).")
@click.option("--merge-request", "iid", type=click.IntRange(min=1), required=True)
@click.option("--head-sha", type=COMMIT_SHA, required=True, help="The commit planned.")
@accounts_file_option
def gitlab_plan(name: str, since: str, iid: int, head_sha: str, accounts_file: Path | None) -> None:
    """Plan the account into plans/ if the merge request changes it (or adds it)."""
    from reconciler.gitops.gitlab_jobs import plan_merge_request_account as plan

    raise click.exceptions.Exit(plan(find_accounts_file(accounts_file), name, since, iid, head_sha))


@click.command("plan-note")
@click.option("--merge-request", "iid", type=click.IntRange(min=1), required=True)
@click.option("--plans", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--head-sha", type=COMMIT_SHA, required=True, help="The commit planned.")
def gitlab_note(iid: int, plans: Path, head_sha: str) -> None:
    """Post or update the one note of every account's plan on the merge request."""
    from reconciler.gitops.gitlab import GitLab
    from reconciler.gitops.gitlab_jobs import post_plan_note

    with GitLab.from_environment() as client:
        click.echo(f"{post_plan_note(client, iid, plans, head_sha)} the plan note")


@click.command("apply-account")
@click.option("--account", "name", required=True, help="The account of this job.")
@click.option("--sha", type=COMMIT_SHA, required=True, help="The commit merged.")
@click.option("--work-dir", "work", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--job-url", envvar="CI_JOB_URL", default="", help="This job's page.")
@click.option("--default-branch", envvar="CI_DEFAULT_BRANCH", required=True)
@accounts_file_option
def gitlab_apply(name: str, accounts_file: Path | None, **job: Any) -> None:
    """Apply the account as the default branch says, from its last successful apply."""
    from reconciler.gitops.gitlab_landing import ApplyJob, apply_account, in_project

    raise click.exceptions.Exit(in_project(accounts_file, apply_account, name, ApplyJob(**job)))


@click.command("outcome-note")
@click.option("--sha", type=COMMIT_SHA, required=True, help="The commit merged.")
@click.option("--pipeline-url", envvar="CI_PIPELINE_URL", required=True, help="This pipeline.")
@accounts_file_option
def gitlab_outcome(sha: str, pipeline_url: str, accounts_file: Path | None) -> None:
    """One outcome note on each merge request applied (or tried), updated in place."""
    from reconciler.gitops.gitlab_landing import OutcomeJob, in_project, post_outcome_notes

    click.echo(in_project(accounts_file, post_outcome_notes, OutcomeJob(sha, pipeline_url)))


@click.command("pending")
@click.option("--account", "name", required=True, help="The account of this job.")
@click.option("--sha", type=COMMIT_SHA, required=True, help="The default branch's commit.")
@accounts_file_option
def gitlab_pending(name: str, sha: str, accounts_file: Path | None) -> None:
    """Say whether the account's files at SHA are applied (else since when, which merges)."""
    from reconciler.gitops.gitlab_landing import in_project, pending_report

    click.echo(in_project(accounts_file, pending_report, name, sha))


@click.command("child-pipeline")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--head-sha", type=COMMIT_SHA, help="A merge request's commit: its new accounts too.")
@accounts_file_option
def gitlab_child(out: Path, head_sha: str | None, accounts_file: Path | None) -> None:
    """Write the accounts' child pipeline, one job per account of reconciler.yaml."""
    from reconciler.gitops.gitlab_child import write_child_pipeline

    click.echo(write_child_pipeline(find_accounts_file(accounts_file), out, head_sha))


#: The `reconciler gitlab` commands of the GitLab pipeline.
GITLAB = (gitlab_plan, gitlab_note, gitlab_apply, gitlab_outcome, gitlab_pending, gitlab_child)
