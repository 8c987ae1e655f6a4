"""`reconciler export`: write the desired-state file(s) of the live account (onboarding)."""

from __future__ import annotations

import os
import shlex
from datetime import UTC, datetime
from pathlib import Path

import click

from reconciler import logs
from reconciler.cli.connection import ConnectionOptions, connection_options, open_client
from reconciler.errors import ReconcilerError
from reconciler.export import PLACEHOLDER, Export, ExportOptions, SplitBy, render_export
from reconciler.export.files import check_target, schema_target, write_directory, write_file
from reconciler.export.pay import read_pay
from reconciler.export.yamltext import quoted, scalar
from reconciler.plan.money import DEFAULT_WINDOW, MoneyWindow
from reconciler.plan.refresh import refresh
from reconciler.session.reading import refresh_progress
from reconciler.words import plural as _count

#: The file still holds `TODO(export)` placeholders that a person must fill in.
EXIT_PLACEHOLDERS = 2

_log = logs.get_logger("reconciler.export")


@click.command("export")
@click.option(
    "--scope-prefix",
    metavar="P",
    help="Export only workers whose externalId starts with P, and write it as the file's scope.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Write to this file (a directory with --split-by) instead of stdout.",
)
@click.option(
    "--split-by",
    type=click.Choice([choice.value for choice in SplitBy]),
    help="With --out DIR: one file of workers per country or job title, and 00-settings.yaml.",
)
@click.option(
    "--include-unmanaged",
    is_flag=True,
    help="List open agreements without an externalId as a comment, with how to manage them.",
)
@click.option("--force", is_flag=True, help="Overwrite an existing file or non-empty directory.")
@click.option(
    "--with-pay",
    is_flag=True,
    help="Write each worker's pay from the newest SUCCESS payment made to it, marked for review.",
)
@connection_options
def export(
    scope_prefix: str | None,
    out: Path | None,
    split_by: str | None,
    include_unmanaged: bool,
    force: bool,
    with_pay: bool,
    connection: ConnectionOptions,
) -> None:
    """Write a desired-state file from the live account, so its first plan is empty.

    Exit 0 when the file is ready, 2 when it holds TODO(export) placeholders to fill in by hand
    (workers who have not answered their invitation), 1 on an error.
    """
    if split_by is not None and out is None:
        raise ReconcilerError("--split-by writes a directory: give it with --out DIR")
    if scope_prefix == "":
        raise ReconcilerError("--scope-prefix cannot be empty: leave it out to export every worker")
    if out is not None:  # refuse before reading the account, not after
        check_target(out, directory=split_by is not None, force=force)
    reference, schema_to_write = schema_target(_folder_of(out, split=split_by is not None))
    options = ExportOptions(
        scope_prefix=scope_prefix,
        include_unmanaged=include_unmanaged,
        split_by=SplitBy(split_by) if split_by is not None else None,
        schema_ref=reference,
    )
    # plan's progress line while the account is read (drawn on a terminal only)
    with open_client(connection, read_only=True) as client, refresh_progress() as on_progress:
        # The money window's paylists, written as the account's known history (`history:`).
        window = MoneyWindow(datetime.now(UTC) - DEFAULT_WINDOW, top_ups=False)
        live = refresh(client, on_progress, money=window)
        pay = read_pay(client) if with_pay else None
    if live.webhook is not None:
        for header in live.webhook.headers:  # never in a log line, whatever happens next
            logs.register_secret(header.value.reveal())
    _log.info("refreshed", agreements=len(live.workers), webhook=live.webhook is not None)
    result = render_export(live, options, pay)
    _write(result, out)
    _report(result, out, options, connection, schema_to_write)
    if result.needs_placeholders:
        raise click.exceptions.Exit(EXIT_PLACEHOLDERS)


def _folder_of(out: Path | None, *, split: bool) -> Path:
    """The folder the file(s) will be in, for the modeline's relative path to the schema."""
    if out is None:
        return Path.cwd()  # stdout is most often redirected into the current folder
    return out if split else out.absolute().parent


def _write(result: Export, out: Path | None) -> None:
    if out is None:
        click.echo(result.files[0].text, nl=False)
    elif len(result.files) == 1 and result.files[0].name == "":
        write_file(out, result.files[0].text)
    else:
        for removed in write_directory(out, result.files):
            click.echo(f"Removed {removed}: it is not part of this export.", err=True)


def _report(
    result: Export,
    out: Path | None,
    options: ExportOptions,
    connection: ConnectionOptions,
    schema_to_write: Path | None,
) -> None:
    """What the person must know, on stderr: counts, what is left out, what to do next."""
    where = "stdout" if out is None else str(out)
    webhook = " and the webhook" if result.webhook else ""
    _say(f"Exported {_count(result.workers, 'worker')}{webhook} to {where}.")
    if result.unmanaged:
        count = _count(len(result.unmanaged), "open agreement")
        if options.include_unmanaged:
            _say(f"{count} without an externalId listed as a comment (unmanaged).")
        else:
            _say(
                f"{count} without an externalId left out (unmanaged); --include-unmanaged "
                "lists them in the file, with how to bring them under management."
            )
    if result.outside_scope:
        count = _count(result.outside_scope, "open agreement")
        _say(f"{count} outside the scope {quoted(options.scope_prefix or '')} left out.")
    for conflict in result.conflicts:
        others = ", ".join(str(other.agreement_id) for other in conflict.others)
        _say(
            f"Warning: {scalar(conflict.external_id)} has several open agreements; exported "
            f"{conflict.exported.agreement_id}, not {others}: a plan reports a conflict."
        )
    if result.unfinished:
        _say(
            f"{_count(len(result.unfinished), 'worker')} with values the service does not show "
            f"yet: fill in each {PLACEHOLDER} (listed at the top of its file) before validate, "
            "plan or apply:"
        )
        for item in result.unfinished:
            fields = ", ".join(item.fields)
            _say(f"  {scalar(item.external_id)} ({scalar(item.email)}, {item.status}): {fields}")
    steps = []
    if schema_to_write is not None:
        where = shlex.quote(os.path.relpath(schema_to_write))
        steps.append(f"reconciler schema --out {where}")
        writes = "the first command of the next steps" if out is not None else f"`{steps[0]}`"
        _say(
            f"The editor modeline points at {where}, which does not exist yet: {writes} "
            "writes it (once; commit it)."
        )
    if out is not None:
        target = shlex.quote(str(out))
        again = connection.repeated()
        steps += [f"reconciler validate {target}", f"reconciler plan{again} {target}"]
        _say("Next: " + " && ".join(steps))
    if result.header_variables:  # last, where a person looks for what to do
        _say("Set these variables (in CI: environment secrets of the same name, never repository")
        _say("secrets, which any workflow of any branch can read)")
        _say("before validate, plan or apply; they may be secrets, and were not written:")
        for variable in result.header_variables:
            what = (
                "the webhook's URL: its path or query may be a credential"
                if variable.in_url
                else f"header {scalar(variable.header)}"
            )
            _say(f"  {variable.variable}  ({what})")


def _say(line: str) -> None:
    click.echo(line, err=True)
