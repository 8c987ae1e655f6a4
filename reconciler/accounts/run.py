"""Accounts side by side: each in a thread of its own, with its own client, reported in order.

An account's work is the single-account code given that account's environment; whatever it
raises fails that account alone, named with the reason, once every other account has run.
On a terminal a progress line per account shows what it is doing.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from reconciler import logs, redaction, threads
from reconciler.accounts.bundle import with_bundle
from reconciler.accounts.environment import account_environment
from reconciler.accounts.file import AccountEntry, AccountsFile
from reconciler.accounts.naming import account_names
from reconciler.accounts.progress import Progress
from reconciler.errors import ReconcilerError, Refused
from reconciler.service.config import SettingNames
from reconciler.words import plural

if TYPE_CHECKING:
    from reconciler.session.connection import Connect, Connection

T = TypeVar("T")

_log = logs.get_logger("reconciler.accounts")


@dataclass(frozen=True, slots=True)
class Outcome(Generic[T]):
    """One account's result, or the reason it failed (never both); `refused` when a check
    said no before anything was sent (`reconciler.errors.Refused`)."""

    entry: AccountEntry
    value: T | None = None
    error: str | None = None
    refused: bool = False
    exit_code: int = 1  # the error's (`ReconcilerError.exit_code`)

    @property
    def name(self) -> str:
        return self.entry.name


@dataclass(frozen=True, slots=True)
class Job:
    """What an account's work gets: its entry, its environment, a progress callback (None: the
    progress line of one account on a terminal), where its settings are given, for its
    messages (`reconciler.accounts.naming`), and, for a fleet of one, the command line's
    connection (`reconciler.accounts.fleet`)."""

    entry: AccountEntry
    environ: Mapping[str, str]
    progress: Callable[[int], None] | None
    status: Callable[[str], None]
    names: SettingNames = field(default_factory=SettingNames)
    connection: Connection | None = None

    def connect(self, connect: Connect) -> Connection:
        """The account's connection: the command line's, else made from its environment."""
        if self.connection is not None:
            return self.connection
        return connect(environ=self.environ, names=self.names)


def run_accounts(
    accounts: AccountsFile,
    chosen: list[AccountEntry],
    work: Callable[[Job], T],
    *,
    parallelism: int,
    environ: Mapping[str, str],
    doing: str = "planning",
    processes: int = 1,
) -> list[Outcome[T]]:
    """`work` for each chosen account, at most `parallelism` at once; outcomes in file order.

    With `processes` above 1 the accounts are spread over that many processes (forked, so
    each starts with what this one has), `parallelism` accounts at once over all of them: an
    account's work is mostly the interpreter's (its file, its pages), and one interpreter
    runs one thread at a time. What `work` returns must then be picklable.
    """
    try:
        variables = with_bundle(environ)
    except ReconcilerError:
        variables = {}  # each account's environment says why, and none runs
    for entry in accounts.accounts:  # no output of any account may show another's secret
        for variable in (entry.token_env, entry.password_env, entry.plan_key_env):
            if variable is not None and variables.get(variable):
                redaction.register_secret(variables[variable])

    def one(entry: AccountEntry, line: Progress) -> Outcome[T]:
        line.say(doing)
        try:
            # Every line its work logs names it, from whichever thread the work started.
            with logs.bound(account=entry.name):
                own = account_environment(entry, accounts, environ)
                names = account_names(entry, accounts.path)
                value = work(Job(entry, own, line.count, line.say, names))
        except ReconcilerError as error:
            line.say("refused" if isinstance(error, Refused) else "failed")
            message = redaction.scrub(str(error))
            refused = isinstance(error, Refused)
            return Outcome(entry, error=message, refused=refused, exit_code=error.exit_code)
        except Exception as error:  # an account's surprise must not stop the others
            with logs.bound(account=entry.name):
                _log.debug("internal error", exc_info=True)
            line.say("failed")
            message = redaction.scrub(f"internal error: {type(error).__name__}: {error}")
            return Outcome(entry, error=message)
        line.say("done")
        return Outcome(entry, value=value)

    if not chosen:
        return []
    names = [entry.name for entry in chosen]
    processes = max(1, min(processes, parallelism, len(chosen)))
    if processes > 1:
        from reconciler.accounts.spread import can_spread, spread

        if can_spread():
            each = -(-parallelism // processes)
            shown = functools.partial(_progress_lines, names, doing)
            return spread(
                chosen,
                one,
                processes=processes,
                threads=each,
                lines=shown,
                failed=lambda entry, why: Outcome(entry, error=why),
            )
    with _progress_lines(names, doing) as lines:
        workers = max(1, min(parallelism, len(chosen)))
        pool = threads.Pool(workers, thread_name_prefix="accounts")
        try:
            outcomes = list(pool.map(lambda entry: one(entry, lines.get(entry.name)), chosen))
        except KeyboardInterrupt:  # no account not started yet starts
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        return outcomes


class _Line:
    """One account's progress line (or nothing, off a terminal)."""

    def __init__(self, update: Callable[..., None] | None) -> None:
        self._update = update

    def count(self, read: int) -> None:
        if self._update is not None:
            self._update(read=plural(read, "agreement"))

    def say(self, state: str) -> None:
        if self._update is not None:
            self._update(state=state)


class _Lines:
    def __init__(self) -> None:
        self._lines: dict[str, _Line] = {}
        self._lock = threading.Lock()

    def add(self, name: str, line: _Line) -> None:
        self._lines[name] = line

    def get(self, name: str) -> _Line:
        with self._lock:
            return self._lines.get(name) or _Line(None)


@contextmanager
def _progress_lines(names: list[str], doing: str) -> Iterator[_Lines]:
    """A line per account on stderr while they run, only on a terminal."""
    lines = _Lines()
    if not sys.stderr.isatty() or not names:
        yield lines
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    width = max(len(name) for name in names)
    columns: list[Any] = [
        SpinnerColumn(),
        TextColumn(f"{{task.fields[name]:<{width}}}  {{task.fields[state]}} {{task.fields[read]}}"),
        TimeElapsedColumn(),
    ]
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        for name in names:
            task = progress.add_task(name, total=None, name=name, state="waiting", read="")

            def update(task: Any = task, **fields: Any) -> None:
                if fields.get("state") in ("done", "failed", "refused"):
                    progress.update(task, total=1, completed=1, **fields)
                    return
                progress.update(task, state=fields.pop("state", doing), **fields)

            lines.add(name, _Line(update))
        yield lines
