"""What every forge's command group shares (`reconciler github ...` and the others):
the options its jobs give, and the adoption request's command (`adoption_options`,
`adopt_with`). A forge's commands parse their options, make its forge (`from_environment`: the
token from the CI's variables, never a flag) and call the flow (reconciler.gitops).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from reconciler.accounts.pull_request import PullAccounts, messages, pull_request_accounts
from reconciler.adopt.commit import BranchFile, read_adoption, repository_files
from reconciler.cli.comment import key_option, marker_for
from reconciler.cli.review import COMMIT_SHA
from reconciler.gitops.adoption import AdoptionPrResult, add_link, sync_adoption_request
from reconciler.gitops.forge import Forge
from reconciler.render.marker import ADOPT

accounts_file_option = click.option(
    "--accounts-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The accounts file (default: reconciler.yaml here or in a parent folder).",
)
head_sha_option = click.option("--head-sha", type=COMMIT_SHA, required=True,
                               help="The commit planned.")  # fmt: skip
pr_option = click.option("--pr", "number", type=click.IntRange(min=1), required=True,
                         help="The PR number.")  # fmt: skip
#: The accounts a job runs, and those a plan job plans (none: no account changed).
accounts_option = click.option("--accounts", "names", required=True,
                               help="The accounts, separated by spaces.")  # fmt: skip
planned_option = click.option("--accounts", "names", default="",
                              help="The accounts to plan, separated by spaces.")  # fmt: skip
run_url_option = click.option("--run-url", required=True, help="This run's page.")


def written_accounts(default: Path, checkout: Path) -> PullAccounts:
    """The accounts file of a pull request's checkout, its warnings said on stderr."""
    written = pull_request_accounts(default, checkout)
    for message in messages(written):
        click.echo(message, err=True)
    return written


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
