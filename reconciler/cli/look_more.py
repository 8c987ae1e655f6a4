"""More commands that look: one worker, the paylists, one paylist, one payment, a webhook test.

They read the service's documented endpoints beyond the interface (service-contract.md). Each
prints a table on a terminal, JSON otherwise (or `--format`); a thing the service does not have,
or an error answer, is exit 1 with the service's reason. `webhook test` is the one that asks the
service to do something (send a test event): it is not read-only, and exits 1 when the event
was not delivered.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime

import click

from reconciler.cli.connection import ConnectionOptions, connection_options, open_client
from reconciler.cli.formats import format_option
from reconciler.cli.look import (
    PAYMENT_COLUMNS,
    WORKER_COLUMNS,
    check_range,
    date_range_options,
    print_list,
    read_with,
    webhook,
)
from reconciler.desired.rules import email_problem
from reconciler.redaction import shown
from reconciler.render.rows import (
    chosen_format,
    print_record,
    print_rows,
    record,
    row_json,
    stdout_blocks,
    write_json_list,
)
from reconciler.service.models import EVENT_TYPES

PAYLIST_COLUMNS = ("id", "description", "idempotence_key", "client_id", "created_at")
PAYLISTS_COLUMNS = ("paylist_id", "flow_stage", "description", "total")
TEST_COLUMNS = ("event_type", "delivered", "status_code", "error")


def _email(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    """The worker's email as given, when it is one (the service is not asked about others)."""
    problem = email_problem(value.strip())
    if problem is not None:
        shown = value if len(value) <= 80 else f"{value[:60]}... ({len(value):,} characters)"
        raise click.BadParameter(f"{shown!r} is not an email: {problem}")
    return value.strip()


@click.command("worker")
@click.argument("email", callback=_email)
@format_option
@connection_options
def worker(connection: ConnectionOptions, email: str, output_format: str | None) -> None:
    """Show the agreement of one worker, by email (the open one, else the latest)."""
    found = read_with(connection, lambda client: client.get_worker(email))
    print_record(found, WORKER_COLUMNS, output_format, title=f"Worker {email}")


@click.command("paylists")
@date_range_options
@format_option
@connection_options
def paylists(
    connection: ConnectionOptions,
    since: datetime | None,
    until: datetime | None,
    output_format: str | None,
) -> None:
    """List the paylists: id, stage (PROCESSING or COMPLETED), description and total."""
    check_range(since, until)
    print_list(
        connection,
        lambda client: client.iter_paylists(since, until),
        PAYLISTS_COLUMNS,
        output_format,
        title="Paylists",
    )


@click.command("paylist")
@click.argument("paylist_id", type=click.IntRange(min=0))
@format_option
@connection_options
def paylist(connection: ConnectionOptions, paylist_id: int, output_format: str | None) -> None:
    """Show one paylist: its header, then its payments."""
    chosen = chosen_format(output_format)
    with open_client(connection, read_only=True) as client:
        header = client.get_paylist(paylist_id)
        payments = client.iter_paylist_payments(paylist_id)
        if chosen == "json":
            # {"paylist": ..., "payments": [...]}, the payments written as they come.
            opening = json.dumps(
                {"paylist": record(header, PAYLIST_COLUMNS)}, indent=2, ensure_ascii=False
            )
            with stdout_blocks() as out:
                out.write(opening[: -len("\n}")] + ',\n  "payments": ')
                write_json_list(payments, out, depth=1, text=row_json(PAYMENT_COLUMNS))
                out.write("\n}\n")
            return
        if chosen == "table":
            print_record(header, PAYLIST_COLUMNS, "table", title=f"Paylist {paylist_id}")
        print_rows(payments, PAYMENT_COLUMNS, chosen, title=f"Payments of paylist {paylist_id}")


@click.command("payment")
@click.argument("payment_id", type=click.IntRange(min=0))
@format_option
@connection_options
def payment(connection: ConnectionOptions, payment_id: int, output_format: str | None) -> None:
    """Show one payment."""
    found = read_with(connection, lambda client: client.get_payment(payment_id))
    print_record(found, PAYMENT_COLUMNS, output_format, title=f"Payment {payment_id}")


@webhook.command("test")
@click.option(
    "--event-type",
    type=click.Choice(EVENT_TYPES),
    help="The event to send (default: the first the webhook subscribes).",
)
@format_option
@connection_options
def webhook_test(
    connection: ConnectionOptions, event_type: str | None, output_format: str | None
) -> None:
    """Ask the service to send one test event now; exit 0 when it was delivered, 1 when not."""
    with open_client(connection, read_only=False) as client:
        result = client.test_webhook(event_type)
    if result.error is not None:  # what the webhook's server answered: text from outside
        result = replace(result, error=shown(result.error))
    print_record(result, TEST_COLUMNS, output_format, title="Webhook test")
    if not result.delivered:
        raise click.exceptions.Exit(1)


COMMANDS: tuple[click.Command, ...] = (worker, paylists, paylist, payment)
