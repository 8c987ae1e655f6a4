"""Commands for people who look rather than change: workers, wallet, journal, payments, webhook.

Each reads through a read-only client and prints a table (on a terminal), JSON or CSV.
"""

from __future__ import annotations

import csv
import dataclasses
import enum
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, TypeVar

import click

from reconciler.cli.connection import ConnectionOptions, connection_options, open_client
from reconciler.cli.moment import Moment
from reconciler.cli.tables import print_fields, print_table
from reconciler.money import two_places
from reconciler.secrets import MASK, Secret
from reconciler.service.client import ServiceClient
from reconciler.service.models import WebhookHeader, WorkerStatus

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

_FORMATS = ("table", "json", "csv")

WORKER_COLUMNS = (
    "agreement_id",
    "external_id",
    "status",
    "email",
    "first_name",
    "last_name",
    "legal_name",
    "job_title",
    "country_iso",
    "created_at",
)
PAYMENT_COLUMNS = (
    "id",
    "paylist_id",
    "status",
    "amount",
    "worker_email",
    "description",
    "cause",
    "created_at",
    "updated_at",
)
JOURNAL_COLUMNS = (
    "journal_id",
    "created_at",
    "operation",
    "reason",
    "amount",
    "payment_order_id",
    "payment_purpose",
)
WALLET_COLUMNS = (
    "id",
    "client_id",
    "enabled",
    "balance",
    "over_draft_limit",
    "version",
    "created_at",
)
WEBHOOK_COLUMNS = ("url", "enabled", "event_types", "headers", "client_id", "updated_at")


#: Which columns a table on a narrow terminal keeps first (the rest follow in display order).
PRIORITY = (
    "email",
    "worker_email",
    "status",
    "flow_stage",
    "amount",
    "total",
    "balance",
    "id",
    "paylist_id",
    "journal_id",
    "external_id",
    "agreement_id",
    "operation",
    "cause",
)


def format_option(command: F) -> F:
    """`--format` and `--wide` (every column of a table, whatever the terminal's width)."""
    command = click.option(
        "--wide",
        is_flag=True,
        expose_value=False,
        callback=_remember_wide,
        help="A table shows every column and every value whole, wider than the terminal if it "
        "must be.",
    )(command)
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(_FORMATS),
        default=None,
        help="table (the default on a terminal), json (the default otherwise) or csv.",
    )(command)


def _remember_wide(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    ctx.meta["reconciler.wide"] = value
    return value


def _wide() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get("reconciler.wide"))


@click.command("workers")
@click.option(
    "--status",
    type=click.Choice([status.value for status in WorkerStatus], case_sensitive=False),
    help="Only workers with this status.",
)
@format_option
@connection_options
def workers(connection: ConnectionOptions, status: str | None, output_format: str | None) -> None:
    """List the account's workers (one row per agreement)."""
    wanted = status.upper() if status else None
    rows = read_with(connection, lambda client: client.list_workers(wanted))
    print_rows(rows, WORKER_COLUMNS, output_format, title="Workers")


@click.command("wallet")
@format_option
@connection_options
def wallet(connection: ConnectionOptions, output_format: str | None) -> None:
    """Show the wallet and its balance."""
    found = read_with(connection, ServiceClient.get_wallet)
    print_record(found, WALLET_COLUMNS, output_format, title="Wallet")


@click.command("transactions")
@format_option
@connection_options
def transactions(connection: ConnectionOptions, output_format: str | None) -> None:
    """List the wallet's journal entries, oldest first."""
    rows = read_with(connection, ServiceClient.list_transactions)
    print_rows(rows, JOURNAL_COLUMNS, output_format, title="Wallet journal")


def date_range_options(command: F) -> F:
    """`--since` and `--until`, the range of a dated list (checked by `check_range`)."""
    command = click.option("--until", type=Moment(), help="Created before this date or timestamp.")(
        command
    )
    return click.option(
        "--since", type=Moment(), help="Created at or after this date or timestamp."
    )(command)


def check_range(since: datetime | None, until: datetime | None) -> None:
    if since is not None and until is not None and since >= until:
        raise click.BadParameter("--since must be before --until", param_hint="--since")


@click.command("payments")
@date_range_options
@format_option
@connection_options
def payments(
    connection: ConnectionOptions,
    since: datetime | None,
    until: datetime | None,
    output_format: str | None,
) -> None:
    """List the account's payments in a date range (the service's defaults: all, until now)."""
    check_range(since, until)
    rows = read_with(connection, lambda client: client.list_payments(since, until))
    print_rows(rows, PAYMENT_COLUMNS, output_format, title="Payments")


@click.group("webhook")
def webhook() -> None:
    """The account's webhook configuration."""


@webhook.command("show")
@format_option
@connection_options
def webhook_show(connection: ConnectionOptions, output_format: str | None) -> None:
    """Show the webhook configuration; header values are masked."""
    found = read_with(connection, ServiceClient.get_webhook)
    if found is None:
        chosen = chosen_format(output_format)
        if chosen == "json":
            click.echo("null")
        elif chosen == "csv":
            _write_csv([], WEBHOOK_COLUMNS)  # the header alone: no configuration, no row
        else:
            click.echo("No webhook is configured.")
        return
    print_record(found, WEBHOOK_COLUMNS, output_format, title="Webhook")


COMMANDS: tuple[click.Command, ...] = (
    workers,
    wallet,
    transactions,
    payments,
    webhook,
)


def read_with(connection: ConnectionOptions, read: Callable[[ServiceClient], T]) -> T:
    """What `read` returns from a read-only client of the connection."""
    with open_client(connection, read_only=True) as client:
        return read(client)


# -- output ------------------------------------------------------------------------------------


def chosen_format(output_format: str | None) -> str:
    if output_format is not None:
        return output_format
    return "table" if sys.stdout.isatty() else "json"


def print_rows(
    rows: Sequence[object], columns: Sequence[str], output_format: str | None, *, title: str
) -> None:
    chosen = chosen_format(output_format)
    if chosen == "json":
        records = [record(row, columns) for row in rows]
        click.echo(json.dumps(records, indent=2, ensure_ascii=False))
    elif chosen == "csv":
        _write_csv(rows, columns)
    else:
        cells = [[_table_cell(getattr(row, column)) for column in columns] for row in rows]
        print_table(columns, cells, title=f"{title} ({len(rows)})", wide=_wide(), priority=PRIORITY)


def print_record(
    row: object, columns: Sequence[str], output_format: str | None, *, title: str
) -> None:
    chosen = chosen_format(output_format)
    if chosen == "json":
        click.echo(json.dumps(record(row, columns), indent=2, ensure_ascii=False))
    elif chosen == "csv":
        _write_csv([row], columns)
    else:
        fields = [(column, _table_cell(getattr(row, column))) for column in columns]
        print_fields(fields, title=title, wide=_wide())


def _write_csv(rows: Iterable[object], columns: Sequence[str]) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(_cell(getattr(row, column)) for column in columns)


def record(row: object, columns: Sequence[str]) -> dict[str, Any]:
    """The row's columns as JSON values: amounts as two-place strings (as the plan writes them),
    times in ISO 8601, secrets masked."""
    return {column: _json_value(getattr(row, column)) for column in columns}


def _json_value(value: Any) -> Any:
    if isinstance(value, Secret):
        return MASK
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Decimal):
        return two_places(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: _json_value(getattr(value, field.name))
            for field in dataclasses.fields(value)
        }
    if isinstance(value, list | tuple):
        return [_json_value(item) for item in value]
    return value


def _table_cell(value: Any) -> str:
    """A cell of a table for people: times to the second, else as in CSV."""
    if isinstance(value, datetime):
        text = value.isoformat(sep=" ", timespec="seconds")
        return text.removesuffix("+00:00") + " UTC" if text.endswith("+00:00") else text
    return _cell(value)


def _cell(value: Any) -> str:
    """A value as a CSV cell: amounts with two places (12.50), secrets masked, times in full."""
    if value is None:
        return ""
    if isinstance(value, Secret):
        return MASK
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return two_places(value)
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, WebhookHeader):
        return f"{value.name}: {MASK}"
    if isinstance(value, list | tuple):
        return ", ".join(_cell(item) for item in value)
    return str(value)
