"""Commands for people who look rather than change: workers, wallet, journal, payments, webhook.

Each reads through a read-only client and prints a table (on a terminal), JSON or CSV
(`reconciler.render.rows`); a list is printed while its pages are read (`print_list`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

import click

from reconciler.cli.connection import ConnectionOptions, connection_options, open_client
from reconciler.cli.formats import format_option
from reconciler.cli.moment import Moment
from reconciler.render.rows import chosen_format, print_record, print_rows, write_csv
from reconciler.secrets import live_webhook_url
from reconciler.service.client import ServiceClient
from reconciler.service.models import WorkerStatus

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

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
    print_list(
        connection,
        lambda client: client.iter_workers(wanted),
        WORKER_COLUMNS,
        output_format,
        title="Workers",
    )


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
    print_list(
        connection,
        ServiceClient.iter_transactions,
        JOURNAL_COLUMNS,
        output_format,
        title="Wallet journal",
    )


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
    print_list(
        connection,
        lambda client: client.iter_payments(since, until),
        PAYMENT_COLUMNS,
        output_format,
        title="Payments",
    )


@click.group("webhook")
def webhook() -> None:
    """The account's webhook configuration."""


@webhook.command("show")
@format_option
@connection_options
def webhook_show(connection: ConnectionOptions, output_format: str | None) -> None:
    """Show the webhook configuration; header values, and the URL's path and query, are masked."""
    found = read_with(connection, ServiceClient.get_webhook)
    if found is None:
        chosen = chosen_format(output_format)
        if chosen == "json":
            click.echo("null")
        elif chosen == "csv":
            write_csv([], WEBHOOK_COLUMNS, sys.stdout)  # the header alone: no configuration, no row
        else:
            click.echo("No webhook is configured.")
        return
    # The live URL's path and query are credentials (an incoming-webhook URL often is one):
    # shown as its origin and a fingerprint, as every output shows a URL no file writes.
    shown_url = str(live_webhook_url(found.url, ""))
    print_record(replace(found, url=shown_url), WEBHOOK_COLUMNS, output_format, title="Webhook")


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


def print_list(
    connection: ConnectionOptions,
    read: Callable[[ServiceClient], Iterable[object]],
    columns: Sequence[str],
    output_format: str | None,
    *,
    title: str,
) -> None:
    """Print the rows `read` yields from a read-only client, while they are read (`print_rows`)."""
    with open_client(connection, read_only=True) as client:
        print_rows(read(client), columns, output_format, title=title)
