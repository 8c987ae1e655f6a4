"""`reconciler github ...`: the GitHub side of the CI recipes, and what the forges' command
groups share (the adoption request's options).

`reconciler github ...` talks to GitHub's REST API with the token from $GITHUB_TOKEN (a
workflow passes `secrets.GITHUB_TOKEN`), never from a flag; `reconciler plan-compare`, the
reviewed-plan check, is in `cli/plan_compare.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from reconciler.cli import github_runs
from reconciler.cli.comment import key_option, marker_for
from reconciler.cli.review import COMMIT_SHA
from reconciler.gitops.adoption import (
    AdoptionPrResult,
    add_link,
    read_adoption,
    repository_files,
    sync_adoption_request,
)
from reconciler.gitops.forge import BranchFile, Forge
from reconciler.gitops.github import ACTIONS_BOT
from reconciler.gitops.github.forge import GitHubForge
from reconciler.gitops.github.runs import DEFAULT_WORKFLOW, check_pull_head, find_reviewed_plan
from reconciler.gitops.issues import DEFAULT_LABEL, DEFAULT_TITLE, sync_drift_issue
from reconciler.gitops.notes import upsert_note
from reconciler.render.comment_body import JOB_SUMMARY_LIMIT, fit_body, utf8_bytes
from reconciler.render.marker import ADOPT, APPLY, DRIFT, PLAN

_repository_option = click.option(
    "--repository",
    metavar="OWNER/NAME",
    help="The repository (default: $GITHUB_REPOSITORY, which GitHub Actions sets).",
)
_text_file = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.group("github")
def github() -> None:
    """Post the plan comment, keep the drift issue, find the reviewed plan (needs $GITHUB_TOKEN)."""


@github.command("pr-comment")
@click.option("--pr", "number", type=click.IntRange(min=1), required=True, help="The PR number.")
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


def adoption_options(command: Any) -> Any:
    """The options every forge's adoption command shares (`github adopt-pr`, ...)."""
    options = [
        click.option(
            "--adoption-file",
            type=click.Path(dir_okay=False, path_type=Path),
            required=True,
            help="What `reconciler adopt --dry-run --format json` printed (missing or empty: "
            "adopt failed, and the pull request is left as it is).",
        ),
        click.option(
            "--drift-exit-status",
            type=int,
            required=True,
            help="What `reconciler drift` exited with: 2 proposes, 0 closes, else nothing.",
        ),
        click.option(
            "--report-file",
            type=click.Path(dir_okay=False, path_type=Path),
            help="The drift report: a line linking the open pull request is added to it.",
        ),
        key_option,
    ]
    for option in reversed(options):
        command = option(command)
    return command


Adopted = tuple[AdoptionPrResult, dict[str, BranchFile]]


def adopt_with(forge: Forge, *, adoption_file: Path, drift_exit_status: int,
               report_file: Path | None, key: str | None, base_sha: str | None,
               target: str | None = None) -> Adopted:  # fmt: skip
    """Open, update or close the adoption change request, and say what was done; what was
    done, and the files (by repository path) it holds."""
    text = adoption_file.read_text(encoding="utf-8") if adoption_file.is_file() else ""
    adoption = read_adoption(text, key)
    files = repository_files(adoption, Path.cwd()) if adoption is not None else {}
    result = sync_adoption_request(forge, drift_exit_status, adoption, files,
                                   marker_for(ADOPT, key), account=key, base_sha=base_sha,
                                   target=target)  # fmt: skip
    sign = forge.words.sign
    add_link(report_file, result, sign)
    where = f" {sign}{result.number}: {result.url}" if result.number is not None else ""
    click.echo(f"adoption {forge.words.request}: {result.action.value}{where}")
    return result, files


@github.command("adopt-pr")
@adoption_options
@click.option(
    "--base-sha",
    envvar="GITHUB_SHA",
    help="The commit the adoption is built on (default: $GITHUB_SHA, the job's checkout).",
)
@_repository_option
def adopt_pr(repository: str | None, **given: Any) -> None:
    """Open, update or close the pull request that adopts what changed live (branch
    reconciler/adopt-<KEY>)."""
    with GitHubForge.from_environment(repository=repository) as forge:
        result, files = adopt_with(forge, **given)
        if result.commit is not None and result.number is not None and given["key"]:
            # Its token's pull request starts no plan workflow: the job plans it itself.
            from reconciler.gitops.adoption_plan import post_adoption_plan

            planned = post_adoption_plan(
                forge, forge, result.number, result.commit, files, given["key"],
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
@click.option("--pr", "number", type=click.IntRange(min=1), required=True, help="The PR number.")
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


for _command in github_runs.GITHUB:
    github.add_command(_command)
