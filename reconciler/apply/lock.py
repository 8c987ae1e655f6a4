"""One apply at a time per account: the account lock, as Terraform's state lock.

Every apply takes the lock of its account (its service and client, wherever its plans or files
are) before its first write and holds it through paying and settling; a second apply of the
account refuses at once, saying who holds the lock (`AccountLocked`), or waits for it as long as
`--lock-timeout` says. The lock is a small protocol (`AccountLock`): on one machine it is a file
lock (`MachineLock`: `fcntl.flock` through `filelock`), which dies with the process that holds
it, so a lock whose apply was killed is free again at once; the note beside it of who holds it
(pid, host, command, since when) is advisory, for the message. A forge adds its own kind (an
in-progress deployment, held by CI's apply), and `hold` takes every kind given, in turn.

The lock file is in a directory of the user's own: `RECONCILER_LOCK_DIR` when set (a test, or
a directory every user of a shared checkout can reach), else `$XDG_RUNTIME_DIR/reconciler/locks`,
else `$XDG_CACHE_HOME` (or `~/.cache`) `/reconciler/locks`, created 0700.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import filelock

from reconciler.errors import ReconcilerError, Refused
from reconciler.plan.account import Account
from reconciler.redaction import shown
from reconciler.regular import read_regular

ENV_LOCK_DIR = "RECONCILER_LOCK_DIR"
#: The holder's note is small; a bigger file is no note of ours.
_NOTE_MOST = 4096
_NOTED = threading.Lock()  # accounts applied side by side add their refusals in turn


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds an account's lock, as the holder wrote it down (advisory)."""

    pid: int
    host: str
    command: str
    since: datetime

    @classmethod
    def this_process(cls) -> Holder:
        command = shlex.join(["reconciler", *sys.argv[1:]])
        return cls(os.getpid(), socket.gethostname(), command, datetime.now(UTC))

    def as_record(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "host": self.host,
            "command": self.command,
            "since": self.since.isoformat(timespec="seconds"),
        }

    @classmethod
    def from_record(cls, record: Any) -> Holder | None:
        """The note as read back; None when it is not one (a torn or foreign file)."""
        if not isinstance(record, dict):
            return None
        pid, host, command, since = (record.get(k) for k in ("pid", "host", "command", "since"))
        if not (isinstance(pid, int) and isinstance(host, str) and isinstance(command, str)):
            return None
        try:
            moment = datetime.fromisoformat(str(since))
        except ValueError:
            return None
        if moment.tzinfo is None:
            return None
        return cls(pid, host, command, moment)

    def describe(self, now: datetime | None = None) -> str:
        """'pid 4242 on ci-7 (reconciler apply plan.json), since 2026-12-01 23:10:04 UTC,
        12 s ago'."""
        moment = self.since.astimezone(UTC)
        ago = max(0, int(((now or datetime.now(UTC)) - moment).total_seconds()))
        return (
            f"pid {self.pid} on {shown(self.host, 80)} ({shown(self.command, 200)}), since "
            f"{moment:%Y-%m-%d %H:%M:%S} UTC, {ago} s ago"
        )


class AccountLocked(Refused):
    """Another apply of the account holds its lock: nothing was changed."""


class AccountLock(Protocol):
    """One kind of lock on an account's applies (this machine's; a forge's, in CI)."""

    def hold(self, account: Account, *, timeout: float) -> AbstractContextManager[None]:
        """Held until the block ends; `AccountLocked` when another apply still holds it after
        `timeout` seconds (0: refuse at once)."""
        ...


def lock_directory(environ: Mapping[str, str]) -> Path:
    """Where this user's account locks are (see the module's docstring)."""
    if environ.get(ENV_LOCK_DIR):
        return Path(environ[ENV_LOCK_DIR])
    runtime = environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        return Path(runtime) / "reconciler" / "locks"
    cache = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "reconciler" / "locks"


def lock_name(account: Account) -> str:
    """The account's lock file: its normalised base URL and its client, hashed."""
    client = "unknown" if account.client_id is None else str(account.client_id)
    digest = hashlib.sha256(f"{account.base_url}\0{client}".encode()).hexdigest()
    return f"account-{digest[:32]}"


class MachineLock:
    """The account's lock on this machine: a `flock` on a file of the lock directory, which the
    kernel drops when the holding process ends, however it ends; and a note of who holds it.

    `notice` is told once when the lock is busy and will be waited for."""

    def __init__(
        self,
        directory: Path | None = None,
        *,
        environ: Mapping[str, str] = os.environ,
        notice: Callable[[str], None] | None = None,
    ) -> None:
        self._directory = directory if directory is not None else lock_directory(environ)
        self._notice = notice

    @contextmanager
    def hold(self, account: Account, *, timeout: float) -> Iterator[None]:
        directory = self._ready_directory()
        name = lock_name(account)
        note = directory / f"{name}.holder"
        lock = filelock.FileLock(directory / f"{name}.lock", thread_local=False)
        try:
            lock.acquire(timeout=0)
        except filelock.Timeout:
            if timeout <= 0:
                raise self._locked(account, note, waited=0) from None
            if self._notice is not None:
                self._notice(
                    f"waiting up to {timeout:g} s for the lock of {account.describe()}, held "
                    f"by {_holder(note)}"
                )
            try:
                lock.acquire(timeout=timeout)
            except filelock.Timeout:
                raise self._locked(account, note, waited=timeout) from None
        try:
            _write_note(note, Holder.this_process())
            yield
        finally:
            with suppress(OSError):  # before the lock is free: the next holder's note stays
                note.unlink(missing_ok=True)
            lock.release()

    def _ready_directory(self) -> Path:
        directory = self._directory
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as error:
            raise ReconcilerError(
                f"cannot make the directory of the account locks, {directory}: "
                f"{error.strerror or error}; nothing was changed",
                hint=f"set {ENV_LOCK_DIR} to a directory of yours",
            ) from None
        if not directory.is_dir():
            raise ReconcilerError(
                f"the account locks' {directory} is not a directory; nothing was changed",
                hint=f"set {ENV_LOCK_DIR} to a directory of yours",
            )
        return directory

    @staticmethod
    def _locked(account: Account, note: Path, *, waited: float) -> AccountLocked:
        after = f" after waiting {waited:g} s" if waited else ""
        return AccountLocked(
            f"another apply of {account.describe()} holds its lock{after}: {_holder(note)}; "
            "nothing was changed",
            hint="wait for it to end, or apply with --lock-timeout (such as 5m) to wait for it; "
            "the lock of an apply that died is free again at once",
        )


def _write_note(note: Path, holder: Holder) -> None:
    """The holder's note, put in place whole (a reader never sees half of it)."""
    aside = note.with_name(f"{note.name}.{os.getpid()}.tmp")
    try:
        descriptor = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            json.dump(holder.as_record(), stream)
        os.replace(aside, note)
    except OSError:  # the note is advisory: the lock is held all the same
        aside.unlink(missing_ok=True)


def _holder(note: Path) -> str:
    """Who the note says holds the lock, or that it does not say."""
    try:
        holder = Holder.from_record(json.loads(read_regular(note, _NOTE_MOST)))
    except (OSError, ValueError):
        holder = None
    return "an apply that left no note of who it is" if holder is None else holder.describe()


@contextmanager
def hold(
    account: Account,
    *,
    timeout: float,
    notice: Callable[[str], None] | None = None,
    locks: Sequence[AccountLock] | None = None,
) -> Iterator[None]:
    """Hold every lock of the account (this machine's by default, which tells `notice` when it
    waits), `timeout` seconds in all to get them; they are let go in the reverse order."""
    deadline = time.monotonic() + timeout
    with ExitStack() as stack:
        for number, lock in enumerate(
            locks if locks is not None else (MachineLock(notice=notice),)
        ):
            left = timeout if number == 0 else max(0.0, deadline - time.monotonic())
            stack.enter_context(lock.hold(account, timeout=left))
        yield


#: The file of `apply --records-out DIR` that says the apply was refused by the account's lock
#: (its message, a line an account refused), for the merge job's landing: exit 1 says only that
#: something failed. Text, not JSON: no reader of the records takes it for a record.
REFUSAL_NOTE = "locked.txt"


@contextmanager
def noting_refusal(held: AbstractContextManager[None], folder: Path | None) -> Iterator[None]:
    """`held`, and when the lock refuses (`AccountLocked`), its message added to
    `folder/REFUSAL_NOTE` (None: nowhere) before the refusal goes on."""
    with ExitStack() as stack:
        try:
            stack.enter_context(held)
        except AccountLocked as refused:
            if folder is not None:
                with suppress(OSError), _NOTED:  # the refusal is said all the same
                    folder.mkdir(parents=True, exist_ok=True)
                    with (folder / REFUSAL_NOTE).open("a", encoding="utf-8") as stream:
                        stream.write(" ".join(refused.message.split()) + "\n")
            raise
        yield


def read_refusal(folder: Path) -> str | None:
    """What `noting_refusal` wrote in `folder` (its lines joined), or None: no refusal."""
    try:
        text = read_regular(folder / REFUSAL_NOTE, _NOTE_MOST).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError:
        return "the account's lock refused it (its note cannot be read)"
    return "; ".join(line for line in text.splitlines() if line.strip()) or None
