"""`reconciler sandbox serve`: the local sandbox of the workforce service, on a loopback port."""

from __future__ import annotations

import json
import signal
import sqlite3
import threading
from collections import Counter
from pathlib import Path
from types import FrameType

import click

from reconciler.cli.connection import demo_seed
from reconciler.errors import ReconcilerError
from reconciler.hosts import is_loopback
from reconciler.sandbox import SandboxServer
from reconciler.sandbox.faults import FaultSettings
from reconciler.sandbox.seed import SeedError
from reconciler.secrets import Secret
from reconciler.service.client import ServiceClient
from reconciler.service.config import ClientConfig
from reconciler.service.errors import ServiceError
from reconciler.words import counted, plural


@click.group()
def sandbox() -> None:
    """The local sandbox of the workforce service (for demos and tests)."""


@sandbox.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, help="Port; 0 (default) picks a free one."
)
@click.option(
    "--db",
    default=":memory:",
    show_default=True,
    help="SQLite file; it keeps the account (and the demo token) across runs.",
)
@click.option(
    "--seed",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="YAML account loaded into the demo client when the database is created (default: "
    "the demo account of examples/sandbox-seed.yaml, as --sandbox has).",
)
@click.option(
    "--empty",
    is_flag=True,
    help="Start with an empty account instead of the demo seed.",
)
@click.option(
    "--process-delay-ms",
    type=click.IntRange(min=0),
    default=500,
    show_default=True,
    help="How long an accepted paylist waits before it is settled.",
)
@click.option(
    "--token-ttl-s",
    type=click.IntRange(min=1, max=366 * 86400),
    default=3600,
    show_default=True,
    help="How long a login token (POST /login/login/v2) lives.",
)
@click.option(
    "--zero-based-pages",
    is_flag=True,
    help="Read `page` from 0 (page 1 is the second) instead of the real service's from 1.",
)
@click.option(
    "--error-style",
    type=click.Choice(["problem", "spring"]),
    default="problem",
    show_default=True,
    help="Errors as RFC 9457 problem+json, or in Spring Boot's default shape.",
)
@click.option(
    "--event-retry-base-ms",
    type=click.IntRange(min=0),
    default=250,
    show_default=True,
    help="First delay of the exponential backoff between event deliveries.",
)
@click.option(
    "--page-cost-ms",
    type=click.FloatRange(min=0, max=10_000),
    default=0,
    help="CPU time (not a sleep) spent on each page of a list, as a slower server would; "
    "a fault like the others: POST /_sandbox/faults and reset clear it.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Start, read the demo account over HTTP, print a summary, and stop.",
)
def serve(
    host: str,
    port: int,
    db: str,
    seed: Path | None,
    process_delay_ms: int,
    token_ttl_s: int,
    zero_based_pages: bool,
    error_style: str,
    event_retry_base_ms: int,
    page_cost_ms: float,
    check: bool,
    empty: bool,
) -> None:
    """Serve the sandbox until stopped; the first line on stdout says where and how to call it.

    The account starts as `--sandbox` has it (the demo seed), unless `--empty` or `--seed`.
    """
    if empty and seed is not None:
        raise click.UsageError("--empty starts without a seed: leave out --seed")
    given_seed = seed is not None
    if not empty and seed is None:
        seed = demo_seed()
    server = SandboxServer(
        db=db,
        host=host,
        port=port,
        process_delay_ms=process_delay_ms,
        event_retry_base_ms=event_retry_base_ms,
        seed=seed,
        token_ttl_s=token_ttl_s,
        zero_based_pages=zero_based_pages,
        error_style=error_style,
    )
    _start(server)
    if page_cost_ms:
        server.sandbox.faults.configure(FaultSettings(page_cost_ms=page_cost_ms))
    if not is_loopback(host):
        click.echo(
            f"warning: listening on {host}, beyond this machine: the sandbox's controls "
            "(/_sandbox/: reset, faults, new clients with tokens) take no token, so anyone who "
            "can reach this address can use them; use 127.0.0.1 unless you mean it",
            err=True,
        )
    try:
        first_line = {"base_url": server.base_url, "client_id": server.client_id}
        secrets = {"token": server.token, "email": server.email, "password": server.password}
        click.echo(json.dumps({**first_line, **secrets}))
        click.echo(
            "To use it from another shell:\n"
            f"  export RECONCILER_BASE_URL={server.base_url} "
            f"RECONCILER_CLIENT_ID={server.client_id} RECONCILER_TOKEN={server.token}",
            err=True,
        )
        if given_seed and not server.seeded:
            click.echo(
                f"note: {db} already held the demo account, so --seed was not applied "
                "(a seed loads only into a new database)",
                err=True,
            )
        if check:
            click.echo(_summary(server))
        else:
            _wait_for_stop()
    finally:
        server.stop()


def _start(server: SandboxServer) -> None:
    try:
        server.start()
    except SeedError as error:
        raise ReconcilerError(str(error)) from None
    except sqlite3.Error as error:
        raise ReconcilerError(f"cannot use the database {server.db}: {error}") from None
    except OSError as error:
        raise ReconcilerError(
            f"cannot listen on {server.host}:{server.port}: {error.strerror or error}",
            hint="pick another --port, or 0 for a free one",
        ) from None


def _wait_for_stop() -> None:
    """Block until Ctrl-C or SIGTERM."""
    stop = threading.Event()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _summary(server: SandboxServer) -> str:
    """What the demo account holds, read over HTTP as any client would: with the service
    client, so its pages are walked as the contract numbers them (one-indexed, or from 0
    under --zero-based-pages), each agreement once."""
    config = ClientConfig(  # its own address, even beyond loopback: the token is its own too
        base_url=server.base_url,
        token=Secret(server.token),
        token_source="the sandbox's demo client",
        client_id=server.client_id,
    )
    try:
        with ServiceClient(config, read_only=True) as client:
            workers = client.list_workers()
            webhook = client.get_webhook()
    except ServiceError as error:
        raise ReconcilerError(f"the sandbox did not answer: {error}") from None
    statuses = Counter(str(worker.status) for worker in workers)
    lines = [
        f"The sandbox answers at {server.base_url} (demo client {server.client_id}).",
        f"Workers: {plural(len(workers), 'agreement')}",
    ]
    lines += [f"  {status:<22}{counted(count)}" for status, count in sorted(statuses.items())]
    if webhook is None:
        lines.append("Webhook: none")
    else:
        state = "enabled" if webhook.enabled else "disabled"
        lines.append(f"Webhook: {webhook.url} ({state}), events {', '.join(webhook.event_types)}")
    return "\n".join(lines)
