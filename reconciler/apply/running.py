"""Running a plan at the command line: its progress, the first Ctrl-C (a graceful stop) and
the second (quit at once), and the ledger printed at the end (`apply`, and `apply --all`)."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import NoReturn

import click

from reconciler.apply import Executor, Ledger
from reconciler.apply.executor import QUIT_IN_FLIGHT
from reconciler.apply.ledger import Outcome
from reconciler.apply.progress import progress_for
from reconciler.apply.report import ledger_json, ledger_text
from reconciler.plan import Plan
from reconciler.service.client import ServiceClient
from reconciler.terminal import text_look


def execute(
    client: ServiceClient,
    plan: Plan,
    parallelism: int,
    payments: int,
    then: Callable[[Ledger, Callable[[str, int], None]], None],
    *,
    fmt: str,
) -> Ledger:
    """Run the plan with progress, turning the first Ctrl-C into a graceful stop; `then` pays
    the payruns, inside the same progress. A second Ctrl-C quits at once, after printing the
    ledger of what had landed by then."""
    terminal = sys.stderr.isatty()
    if not terminal:
        _show_progress_lines()
    stop = threading.Event()
    with (
        progress_for(len(plan.changes) + payments, terminal=terminal) as progress,
        graceful_interrupt(stop),
    ):
        executor = Executor(client, parallelism=parallelism, progress=progress, stop=stop)
        try:
            ledger = executor.apply(plan)
            if not stop.is_set():
                then(ledger, progress.phase)
        except KeyboardInterrupt:
            _quit_now(executor.ledger, fmt)
    if ledger.interrupted:
        click.echo("Interrupted: the requests in flight finished; nothing new was sent.", err=True)
    return ledger


def _quit_now(ledger: Ledger | None, fmt: str) -> NoReturn:
    """The second Ctrl-C: print the ledger as it stands and leave without waiting for the
    requests in flight, which may still land (their rows say so)."""
    if ledger is not None:
        ledger.interrupted = True
        ledger.settle_the_rest(QUIT_IN_FLIGHT, Outcome.FAILED)
        print_ledger(ledger, fmt)
    click.echo(
        "Quit at once (second Ctrl-C): the ledger above is what had landed; a change "
        "marked 'not known' may still land. Run `reconciler plan` to see the account now.",
        err=True,
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)  # not sys.exit: that would wait for the threads still sending


def _show_progress_lines() -> None:
    """Progress lines are info events; show them unless the user asked for errors only."""
    import logging

    if logging.getLogger().getEffectiveLevel() <= logging.WARNING:
        logging.getLogger("reconciler.apply.progress").setLevel(logging.INFO)


@contextmanager
def graceful_interrupt(stop: threading.Event) -> Iterator[None]:
    """The first Ctrl-C stops sending and lets requests in flight end; a second quits at once."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only (a test runner may call from another)
        return

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        click.echo(
            "\nInterrupted: waiting for the requests in flight, sending nothing new "
            "(Ctrl-C again to quit at once).",
            err=True,
        )

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def print_ledger(ledger: Ledger, fmt: str) -> None:
    """The ledger on stdout: JSON, or text (coloured on a terminal unless NO_COLOR)."""
    if fmt == "json":
        click.echo(ledger_json(ledger), nl=False)
        return
    color, width = text_look(sys.stdout)
    click.echo(ledger_text(ledger, color=color, width=width), nl=False, color=color)
