"""`reconciler gitlab ...`: the GitLab pipeline's commands (examples/gitlab/, and the child
pipeline of reconciler/gitops/templates/), each parsing its options and calling the CI flow
(reconciler.gitops) with the GitLab forge (reconciler.gitops.gitlab)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from reconciler.accounts.file import find_accounts_file
from reconciler.accounts.targets import DEFAULT_ENVIRONMENT
from reconciler.cli.gitops import (
    accounts_file_option,
    adopt_with,
    adoption_options,
    head_sha_option,
)
from reconciler.cli.review import COMMIT_SHA
from reconciler.errors import ReconcilerError

if TYPE_CHECKING:
    from reconciler.accounts.targets import Targets


_account = click.option("--account", "name", required=True, help="The account of this job.")
_merge_request = click.option("--merge-request", "iid", type=click.IntRange(min=1), required=True)


@click.group("gitlab")
def gitlab() -> None:
    """The GitLab pipeline's jobs: plan, note, apply, outcome, adoption (needs $GITLAB_TOKEN)."""


@gitlab.command("plan-account")
@_account
@click.option("--since", required=True, metavar="REF", help="The target branch (changed since).")
@_merge_request
@head_sha_option
@accounts_file_option
def gitlab_plan(name: str, since: str, iid: int, head_sha: str, accounts_file: Path | None) -> None:
    """Plan the account into plans/ if the merge request changes it (or adds it)."""
    from reconciler.gitops.gitlab.pipeline import plan_merge_request_account as plan

    raise click.exceptions.Exit(plan(find_accounts_file(accounts_file), name, since, iid, head_sha))


@gitlab.command("plan-note")
@_merge_request
@click.option("--plans", type=click.Path(file_okay=False, path_type=Path), required=True)
@head_sha_option
def gitlab_note(iid: int, plans: Path, head_sha: str) -> None:
    """Post or update the one note of every account's plan on the merge request."""
    from reconciler.gitops.gitlab.forge import GitLabForge
    from reconciler.gitops.gitlab.pipeline import accounts_to_plan
    from reconciler.gitops.plan_comment import post_plan_comment

    accounts_file, _, _ = accounts_to_plan(find_accounts_file(None), head_sha)
    with GitLabForge.from_environment() as forge:
        result, _ = post_plan_comment(
            forge, None, plans, iid, head_sha, accounts_file=accounts_file
        )
    click.echo(f"{result.action} the plan note")


@gitlab.command("apply-account")
@_account
@click.option("--sha", type=COMMIT_SHA, required=True, help="The commit merged.")
@click.option("--work-dir", "work", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--job-url", envvar="CI_JOB_URL", default="", help="This job's page.")
@click.option("--default-branch", envvar="CI_DEFAULT_BRANCH", required=True)
@accounts_file_option
def gitlab_apply(
    name: str, accounts_file: Path | None, sha: str, work: Path, job_url: str, default_branch: str
) -> None:
    """Apply the account as the default branch says, from its last successful apply."""
    from reconciler.gitops.forge import NOT_REVIEWED, ApplyJob, Reviewed
    from reconciler.gitops.gitlab.forge import GitLabForge
    from reconciler.gitops.landing import land_fleet
    from reconciler.gitops.record import Standing

    accounts = _one_account(name, accounts_file)
    job = ApplyJob(sha, default_branch, DEFAULT_ENVIRONMENT, job_url, work)
    with GitLabForge.from_environment() as forge:

        def reviewed(at: Standing) -> Reviewed:
            into = work / "reviewed-artifact"
            return forge.reviewed_plan(at.merges[-1], into) if at.merges else NOT_REVIEWED

        ((_, status),) = land_fleet(forge, accounts, reviewed, job)
    raise click.exceptions.Exit(status)


@gitlab.command("outcome-note")
@click.option("--sha", type=COMMIT_SHA, required=True, help="The commit merged.")
@click.option("--pipeline-url", envvar="CI_PIPELINE_URL", required=True, help="This pipeline.")
@accounts_file_option
def gitlab_outcome(sha: str, pipeline_url: str, accounts_file: Path | None) -> None:
    """One outcome note on each merge request applied (or tried), updated in place."""
    from reconciler.accounts.targets import targets
    from reconciler.gitops.gitlab.forge import GitLabForge
    from reconciler.gitops.notes import post_outcomes

    accounts = targets(DEFAULT_ENVIRONMENT, accounts_file)
    with GitLabForge.from_environment() as forge:
        rows = forge.kept_landings(accounts, sha)
        done = post_outcomes(forge, rows, sha, pipeline_url)
    said = [f"!{iid}: {result.action} the outcome note" for iid, result in done]
    click.echo("\n".join(said) or "no merge request to tell")


@gitlab.command("pending")
@_account
@click.option("--sha", type=COMMIT_SHA, required=True, help="The default branch's commit.")
@accounts_file_option
def gitlab_pending(name: str, sha: str, accounts_file: Path | None) -> None:
    """Say whether the account's files at SHA are applied (else since when, which merges)."""
    from reconciler.gitops.gitlab.forge import GitLabForge
    from reconciler.gitops.pending import report

    accounts = _one_account(name, accounts_file)
    with GitLabForge.from_environment() as forge:
        click.echo("\n".join(report(forge, accounts, sha)))


@gitlab.command("child-pipeline")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--head-sha", type=COMMIT_SHA, help="A merge request's commit: its new accounts too.")
@accounts_file_option
def gitlab_child(out: Path, head_sha: str | None, accounts_file: Path | None) -> None:
    """Write the accounts' child pipeline, one job per account of reconciler.yaml."""
    from reconciler.gitops.gitlab.pipeline import write_child_pipeline

    click.echo(write_child_pipeline(find_accounts_file(accounts_file), out, head_sha))


@gitlab.command("adopt-mr")
@adoption_options
@click.option(
    "--base-sha",
    envvar="CI_COMMIT_SHA",
    help="The commit the adoption is built on (default: $CI_COMMIT_SHA).",
)
@click.option(
    "--target-branch",
    envvar="CI_DEFAULT_BRANCH",
    required=True,
    help="The branch it merges into (default: $CI_DEFAULT_BRANCH).",
)
def adopt_mr(target_branch: str, **given: Any) -> None:
    """Open, update or close the merge request that adopts what changed live (branch
    reconciler/adopt-<KEY>)."""
    from reconciler.gitops.gitlab.forge import GitLabForge

    with GitLabForge.from_environment() as forge:
        adopt_with(forge, target=target_branch, **given)


def _one_account(name: str, accounts_file: Path | None) -> Targets:
    """The job's one account, refused when the accounts file has none of that name."""
    from reconciler.accounts.targets import targets

    accounts = targets(DEFAULT_ENVIRONMENT, accounts_file, [name])
    if accounts.missing:
        raise ReconcilerError(accounts.missing[name])
    return accounts
