"""`reconciler plan-compare`: whether a new saved plan asks for exactly what the reviewed one
did. It needs no network; the key it checks both plans with is `accounts.comparing`'s.
"""

from __future__ import annotations

from pathlib import Path

import click

from reconciler.accounts.comparing import comparison_key
from reconciler.plan.account import check_account
from reconciler.plan.review import compare_plans
from reconciler.plan.saved import load_saved_plan

#: The new plan asks for something the review did not see.
EXIT_DIFFERENT = 2

_text_file = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.command("plan-compare")
@click.argument("reviewed", type=_text_file)
@click.argument("new", type=_text_file)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown"]),
    default="text",
    show_default=True,
    help="markdown: a paragraph for a pull-request comment.",
)
@click.option(
    "--accounts-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="For an account's plans (`plan --all --out DIR`): the accounts file whose entry "
    "names the account's plan key variable (default: reconciler.yaml, found as by --all).",
)
def plan_compare(reviewed: Path, new: Path, fmt: str, accounts_file: Path | None) -> None:
    """Exit 0 when the saved plan NEW changes exactly what REVIEWED did, 2 when it does not."""
    plans = load_saved_plan(reviewed), load_saved_plan(new)
    key = comparison_key(plans, (reviewed, new), accounts_file)
    for saved in plans:  # a plan nobody made, or one edited since, compares with nothing
        saved.verify(key)
    reviewed_for, new_for = plans[0].account, plans[1].account
    assert reviewed_for is not None and new_for is not None, "read from files"
    check_account(reviewed_for, new_for, name=plans[0].name, doing="compares it with a plan for")
    comparison = compare_plans(
        [*plans[0].records, *plans[0].payruns], [*plans[1].records, *plans[1].payruns]
    )
    if comparison.equal:
        click.echo("The new plan makes exactly the reviewed changes.")
        return
    click.echo(comparison.markdown() if fmt == "markdown" else comparison.text())
    raise click.exceptions.Exit(EXIT_DIFFERENT)
