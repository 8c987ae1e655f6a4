"""`reconciler report [PATH]`: the payroll register, read-only (`reconciler.plan.register`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from reconciler.cli.connection import ConnectionOptions, connection_options


class _Month(click.ParamType):  # type: ignore[type-arg]  # generic in newer click only
    name = "YYYY-MM"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from reconciler.plan.register import month_problem

        text = str(value).strip()
        if (problem := month_problem(text)) is not None:
            self.fail(problem, param, ctx)
        return text


@click.command("report")
@click.argument("path", type=click.Path(path_type=Path), required=False)
@click.option("--since", type=_Month(), help="From this month (the money moved in it or after).")
@click.option("--until", type=_Month(), help="Until this month, included.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("text", "markdown", "csv", "json")),
    default="text",
    show_default=True,
    help="text for people, markdown (a chart and a table) for an issue, csv one row a payment, "
    "json for machines.",
)
@click.option(
    "--records",
    metavar="REF_OR_DIR",
    help="The evidence records of the merges (a folder, or a git ref such as "
    "origin/reconciler/records): the commit, pull request, author and approvers beside each "
    "paylist, from the records whose signature verifies.",
)
@connection_options
def report(
    connection: ConnectionOptions,
    path: Path | None,
    since: str | None,
    until: str | None,
    fmt: str,
    records: str | None,
) -> None:
    """The payroll register: per month and paylist, requested, paid, failed and pending.

    Months are those the money moved in. With PATH, only the paylists its payruns paid, each
    named by its payrun; without, the whole account. Exit 0, or 1 on an error.
    """
    if since is not None and until is not None and since > until:
        raise click.BadParameter(f"{since} is after --until {until}", param_hint="--since")
    from reconciler.plan.register import MergeRecord
    from reconciler.render.register import render_register
    from reconciler.session.register import read_register

    merges: dict[int, MergeRecord] | None = None
    said: list[str] = []
    if records is not None:
        from reconciler.accounts.records import merges_of

        merges, said = merges_of(records, connection.env())
    register = read_register(connection, path, since=since, until=until, merges=merges)
    click.echo(render_register(register, fmt, None if path is None else str(path)), nl=False)
    if records is not None:
        from reconciler.accounts.records import without_record

        said += without_record(register)
    for line in said:
        click.echo(line, err=True)
