"""The file and the account, read at the same time.

`plan`, `drift`, `comment` and `apply PATH` need two things before they diff: the desired state
(the files read, validated and modelled: CPU in this process) and the live account (pages of
the service: mostly waiting on it). The refresh needs nothing from the file to start (the
workers and the webhook are read whole; the scope is applied by the diff), so it starts first,
in a thread of its own, and the file is loaded while its pages are awaited; the money part of
the refresh (paylists, payments, wallet, journal), which the file decides, starts as soon as the
file is known and good, on the same client, beside the workers' refresh still running. Payruns
need every paylist, its payments and the wallet whatever else the file says: a file that writes
payruns (`desired.source.payruns_written`, a guess from its bytes) has these started as soon as
the client is open, and only the money report's window (the journal's top-ups) waits for the
file; were the guess wrong (payruns written, none loaded), what was read is dropped unread.

What the user sees stays as it was when the two ran one after the other:

- a problem in the file stops the command with the file's report, whatever the refresh met
  (the file is what the user must fix; an error of the connection is the next thing to see,
  and it comes once the file is good), and the refresh is stopped;
- nothing is written before both are done: the refresh only reads (GETs, and a login);
- a connection or service error is reported as it was, once the file is known to be good:
  the workers' refresh's first, then the money reads' (which are stopped when the refresh
  failed).
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from reconciler import ending, logs, threads
from reconciler.desired import DesiredState, load_desired_state
from reconciler.desired.source import payruns_written
from reconciler.plan.agreements import AgreementIndex
from reconciler.plan.model import LiveState
from reconciler.plan.money import MoneyWindow
from reconciler.plan.paylist_reads import MoneyReading
from reconciler.plan.refresh import refresh, start_money, with_money
from reconciler.plan.signing import PlanKey
from reconciler.service.client import ServiceClient
from reconciler.service.models import Webhook, Worker
from reconciler.session.base_rules import rule_changes
from reconciler.session.collector import collector_paused
from reconciler.session.connection import Connection
from reconciler.session.listed import files_listed
from reconciler.session.plankey import plan_key
from reconciler.words import plural

_log = logs.get_logger("reconciler.plan")


@dataclass(frozen=True, slots=True)
class Ready:
    """Both sides of a plan, and the open client that read the account."""

    desired: DesiredState
    live: LiveState
    client: ServiceClient
    key: PlanKey | None  # only when asked for (`keyed`)


@contextmanager
def file_and_account(
    path: Path,
    connection: Connection,
    *,
    read_only: bool,
    parallelism: int | None = None,
    keyed: bool = False,
    money: Callable[[DesiredState], MoneyWindow | None] | None = None,
    progress: Callable[[int], None] | None = None,
) -> Iterator[Ready]:
    """Load the file at `path` while the account is refreshed; the client stays open inside.

    `money` gives the money report's window from the file (None: nothing of it to read).
    Raises the file's `InvalidDesiredState` (or what `money` raised) first, then whatever
    opening the client, the plan key (`keyed`) or the refresh raised. `progress` is told the
    agreements read instead of the progress line on a terminal (several accounts at once).
    """
    shown = refresh_progress() if progress is None else nullcontext(progress)
    with ExitStack() as client_stack:
        with collector_paused(), prompt_turns(), shown as on_progress:
            held = _HeldLines.install()
            account = _AccountReading(client_stack, connection, read_only, parallelism, keyed)
            account.start(on_progress)
            # Payruns need every paylist and the wallet whatever else the file says: a file
            # that writes them has these read from the client's opening on, beside the
            # workers, not once it is loaded (a guess from its bytes, made while the client
            # opens; a wrong one only reads what is then dropped).
            account.read_money_first(money is not None and payruns_written(path))
            account.sending(_OPENING if connection.sandbox else None)
            try:
                # Header values are registered with the log scrubber as they are read.
                desired = load_desired_state(
                    path, connection.env(), credentials=connection.credentials(), digests=keyed
                )
                window = None if money is None else money(desired)
                # What the files ever listed (git), so prune spares what the service made.
                desired = replace(desired, listed=files_listed(path))
                # The ignore rules a pull request adds or changes, against its base (git).
                changes = rule_changes(Path(path), desired.ignore)
                desired = replace(desired, ignore_changes=changes)
            except BaseException:
                held.drop()
                account.stop()
                held.remove()  # other accounts' refreshes (several at once) log on
                raise
            held.release()
            _log.info("loaded", workers=len(desired.workers), payruns=len(desired.payruns))
            opened = account.opened()
            # The money the file asks for is read from now on, beside the workers' refresh.
            money_reads = account.money_first
            if money_reads is not None and not desired.payruns:  # the guess was wrong
                money_reads.close()
                money_reads = None
            if money_reads is not None:
                money_reads.add_window(window)
            elif opened is not None:
                money_reads = start_money(
                    opened,
                    payruns=bool(desired.payruns),
                    money=window,
                    parallelism=opened.config.parallelism,
                )
            account.index.expect(desired)  # the pairs read so far are compared while it reads on
            try:
                client, key, live = account.result()
            except BaseException:  # the refresh's error comes first, as when it ran alone
                if money_reads is not None:
                    money_reads.stop()
                raise
            live = with_money(live, money_reads)
        ready = Ready(desired, live, client, key)
        ending.hold(ready)  # a hundred thousand workers a side are not freed one by one
        yield ready


#: How long the file waits for the embedded sandbox's client to send its first request. Any
#: other client is waited for until it sends it: opening a client imports the HTTP stack, file
#: by file, and a thread that waits on a file gets the interpreter back only at the next
#: switch while another thread loads the file, so its start-up, begun beside the file's
#: load, took 0.6 s longer with a file of 100,000 workers than alone (the first request at
#: 0.85 s instead of 0.21 s; it came earlier only while the opening fit in a 0.25 s wait).
#: Both are work for this process: neither is done sooner by sharing the interpreter, and the
#: service's first answer is awaited while the file is read. The embedded sandbox, which
#: takes longer to start, is not waited for past this.
_OPENING = 0.25


class _Stopped(Exception):
    """The file failed: the refresh stops at its next worker."""


class _AccountReading:
    """The thread that opens the client and refreshes the workers and the webhook."""

    def __init__(
        self,
        client_stack: ExitStack,
        connection: Connection,
        read_only: bool,
        parallelism: int | None,
        keyed: bool,
    ) -> None:
        self._client_stack = client_stack
        self._connection = connection
        self._read_only = read_only
        self._parallelism = parallelism
        self._keyed = keyed
        self._stop = threading.Event()
        self._opened = threading.Event()
        self._sending = threading.Event()  # the first request is about to go, or failed
        self._thread: threading.Thread | None = None
        self._client: ServiceClient | None = None
        self._outcome: tuple[ServiceClient, PlanKey | None, LiveState] | None = None
        self._error: BaseException | None = None
        self._read_money_first: Future[bool] = Future()
        #: The money reads started with the workers' (`read_money_first`), once opened.
        self.money_first: MoneyReading | None = None
        self.index = AgreementIndex()  # filled by the refresh as the pages arrive

    def start(self, on_progress: Callable[[int], None] | None) -> None:
        self._thread = threads.start(self._run, on_progress, name="reconciler-refresh")

    def read_money_first(self, first: bool) -> None:
        """Whether the money payruns need is read from the client's opening on (the thread
        waits for this word once the client is open)."""
        if not self._read_money_first.done():
            self._read_money_first.set_result(first)

    def stop(self) -> None:
        """Stop the refresh (the file failed) and wait for it; what it met is dropped."""
        self._stop.set()
        self.read_money_first(False)
        if self._client is not None:
            self._client.abandon()  # no retry waits out its backoff for nothing
        self._join()
        if self.money_first is not None:
            self.money_first.stop()

    def opened(self, timeout: float | None = None) -> ServiceClient | None:
        """The client once it is open, while the refresh goes on (None: opening it failed, or
        not done within `timeout` seconds)."""
        self._opened.wait(timeout)
        return self._client

    def sending(self, timeout: float | None) -> None:
        """Wait until the refresh sends its first request (or failed before it), at most
        `timeout` seconds (None: until then)."""
        self._sending.wait(timeout)

    def result(self) -> tuple[ServiceClient, PlanKey | None, LiveState]:
        self._join()
        if self._error is not None:
            raise self._error
        assert self._outcome is not None
        return self._outcome

    def _join(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def _run(self, on_progress: Callable[[int], None] | None) -> None:
        try:
            try:
                client = self._client_stack.enter_context(
                    self._connection.open(read_only=self._read_only, parallelism=self._parallelism)
                )
                self._client = client
                if self._read_money_first.result() and not self._stop.is_set():
                    self.money_first = start_money(
                        client, payruns=True, money=None, parallelism=client.config.parallelism
                    )
            finally:
                self._opened.set()
            if self._stop.is_set():
                client.abandon()
            key = plan_key(client, self._connection.env()) if self._keyed else None
            reader = _StoppableReader(client, self._stop)
            self._sending.set()
            live = refresh(reader, on_progress, index=self.index)
            self._outcome = (client, key, live)
        except BaseException as error:  # handed to the main thread, which raises it
            self._error = error
        finally:
            self._sending.set()


class _StoppableReader:
    """The client's reads of the workers and the webhook, stopped once the file failed; the
    webhook is read beside the first page of workers, not one round trip before or after."""

    def __init__(self, client: ServiceClient, stop: threading.Event) -> None:
        self._client = client
        self._stop = stop
        self._webhook: Future[Webhook | None] = Future()
        threads.start(self._read_webhook, name="reconciler-webhook")

    def _read_webhook(self) -> None:
        try:
            self._webhook.set_result(self._client.get_webhook())
        except BaseException as error:  # raised where the refresh asks for the webhook
            self._webhook.set_exception(error)

    def get_webhook(self) -> Webhook | None:
        if self._stop.is_set():
            raise _Stopped
        return self._webhook.result()

    def iter_workers(self) -> Iterator[Worker]:
        stopped = self._stop.is_set
        for worker in self._client.iter_workers():
            if stopped():
                raise _Stopped
            yield worker


class _HeldLines(logging.Filter):
    """The refresh's log lines (its threads are named `reconciler-...`), held while the file is
    loaded: written in order once the file is good, dropped when it is not, since the report
    is then the file's alone (a retry warning of an abandoned refresh would only mislead)."""

    def __init__(self, handlers: list[logging.Handler]) -> None:
        super().__init__()
        self._handlers = handlers
        self._lock = threading.Lock()
        self._held: list[logging.LogRecord] | None = []  # None: released
        # Several accounts read at once: only this one's lines are held (each names its own).
        self._context = logs.context()

    @classmethod
    def install(cls) -> _HeldLines:
        held = cls(list(logging.getLogger().handlers))
        for handler in held._handlers:
            handler.addFilter(held)
        return held

    def filter(self, record: logging.LogRecord) -> bool:
        if not (record.threadName or "").startswith(_THREADS):
            return True
        if logs.context_of(record) != self._context:
            return True
        with self._lock:
            if self._held is None:
                return True
            self._held.append(record)
            return False

    def release(self) -> None:
        """Write what was held, and let the refresh's lines through from now on."""
        with self._lock:
            held, self._held = self._held or [], None
        for handler in self._handlers:
            handler.removeFilter(self)
        for record in held:
            for handler in self._handlers:
                if record.levelno >= handler.level:
                    handler.handle(record)

    def drop(self) -> None:
        """Forget what was held, and hold (so drop) whatever the refresh logs from now on."""
        with self._lock:
            if self._held is not None:
                self._held.clear()

    def remove(self) -> None:
        """Once the refresh stopped: forget what it logged, and hold nothing more."""
        with self._lock:
            self._held = []
        for handler in self._handlers:
            handler.removeFilter(self)


#: The names of the threads a refresh runs in: its own, the webhook's and the page fetchers.
_THREADS = "reconciler-"


@contextmanager
def prompt_turns(interval: float = 0.002) -> Iterator[None]:
    """Let a thread whose answer has come take the interpreter sooner while the file loads.

    The file's loading is CPU in this process; each page's answer needs the interpreter for a
    moment (its HTTP, its JSON) before the connection can ask for the next one. By default a
    busy thread keeps the interpreter for 5 ms before another may run, so every answer that
    comes meanwhile waits for up to that long and its connection sits idle. Plan of 100,000,
    medians of 3 to 4 interleaved, 5 / 2 / 1 ms: 3.83 / 3.65 / 3.68 s against a server
    spending 3 ms of CPU a page, 4.83 / 4.73 / 4.54 s at 50 ms a request, 3.10 / 2.97 / 2.85 s
    with neither. Shorter turns also mix the pages' objects with the file's in memory, so the
    peak grows with them (350 / 359 / 367 MiB with neither): 2 ms keeps most of the gain within
    the 400 MB the plan of 100,000 must stay under.
    """
    before = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


@contextmanager
def refresh_progress() -> Iterator[Callable[[int], None] | None]:
    """A progress line on stderr while the refresh runs, only on a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns: list[Any] = [
        SpinnerColumn(),
        TextColumn("Reading the account: {task.fields[read]}"),
        TimeElapsedColumn(),
    ]
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("refresh", total=None, read=plural(0, "agreement"))
        yield lambda count: progress.update(task, completed=count, read=plural(count, "agreement"))
