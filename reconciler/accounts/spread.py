"""Accounts spread over several processes, since one interpreter runs one thread at a time.

An account's work is mostly the interpreter's: its file is read, checked and modelled, its
pages decoded, the two compared, the plan rendered. Threads only overlap its waits on the
service; fifty accounts of 2,000 workers keep one interpreter busy for seconds. So the
accounts are shared among a few forked processes (each starts with what this one has: the
modules, the accounts file, the secrets registered), each running its share side by side in
threads, and taking the next account as one ends (the order of the file, whichever process is
free). `parallelism` accounts are run at once over all of them.

What a process sends back to this one, over a pipe of its own: an account started, its
progress, the secrets it learned (registered here too, before anything is printed), and its
outcome, pickled. An account whose process ended before it finished (killed, out of memory)
fails alone, named with the reason; an account no process started fails the same way.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, suppress
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol

from reconciler import redaction
from reconciler.accounts.file import AccountEntry
from reconciler.accounts.progress import Progress
from reconciler.threads import start


class _Lines(Protocol):
    def get(self, name: str) -> Progress: ...


def can_spread() -> bool:
    """Whether accounts may be spread over forked processes: on Linux (macOS has fork, but its
    system libraries, which the HTTP stack loads, are not safe to use after one), and only from
    a process running no other thread (a fork copies a lock another thread holds). How many
    processes (one per core) is the caller's."""
    return (
        sys.platform.startswith("linux")
        and "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
    )


def spread(
    chosen: list[AccountEntry],
    one: Callable[[AccountEntry, Any], Any],
    *,
    processes: int,
    threads: int,
    lines: Callable[[], AbstractContextManager[_Lines]],
    failed: Callable[[AccountEntry, str], Any],
) -> list[Any]:
    """`one(entry, progress)` for each account, in `processes` processes of `threads` threads;
    the outcomes in `chosen`'s order: as `one` made them, or `failed(entry, why)` when its
    process could not tell (`one`'s result could not be passed on, or the process died)."""
    for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
        stream.flush()
    context = multiprocessing.get_context("fork")
    taken = context.Value("l", 0)  # the next account to start, shared (a lock of its own)
    children: list[_Child] = []
    try:
        for number in range(processes):
            reader, writer = context.Pipe(duplex=False)
            process = context.Process(
                target=_child,
                args=(writer, taken, chosen, one, threads, failed),
                name=f"reconciler-accounts-{number}",
                daemon=True,
            )
            process.start()
            writer.close()  # the child's end: its exit is this end's EOF
            children.append(_Child(process, reader))
        with lines() as shown:
            return _gather(chosen, children, shown, failed)
    finally:
        for child in children:  # a Ctrl-C or an error here: no process outlives the command
            if child.process.is_alive():
                child.process.terminate()
            child.process.join()
            child.reader.close()


@dataclass(slots=True)
class _Child:
    process: Any  # multiprocessing's Process (its type is the context's)
    reader: Connection
    started: set[int] = field(default_factory=set)


def _gather(
    chosen: list[AccountEntry],
    children: list[_Child],
    shown: _Lines,
    failed: Callable[[AccountEntry, str], Any],
) -> list[Any]:
    outcomes: list[Any] = [None] * len(chosen)
    open_readers = {child.reader: child for child in children}
    while open_readers:
        for reader in wait(list(open_readers)):
            child = open_readers[reader]  # type: ignore[index]
            try:
                message = pickle.loads(child.reader.recv_bytes())
            except (EOFError, OSError):  # the process ended: all it sent has been read
                del open_readers[reader]  # type: ignore[arg-type]
                continue
            kind, index, *rest = message
            if kind == "start":
                child.started.add(index)
            elif kind == "count":
                shown.get(chosen[index].name).count(rest[0])
            elif kind == "say":
                shown.get(chosen[index].name).say(rest[0])
            elif kind == "secrets":
                for value in rest[0]:
                    redaction.register_secret(value)
            elif kind == "done":
                outcomes[index] = rest[0]
                child.started.discard(index)
    for child in children:
        child.process.join()
    for index, entry in enumerate(chosen):
        if outcomes[index] is not None:
            continue
        owner = next((child for child in children if index in child.started), None)
        if owner is not None:
            code = owner.process.exitcode
            reason = f"its process ended ({_ending(code)}) before the account was done"
        else:
            reason = "no process was left to run it (each ended early)"
        shown.get(entry.name).say("failed")
        outcomes[index] = failed(entry, reason)
    return outcomes


def _ending(code: int | None) -> str:
    if code is not None and code < 0:
        return f"killed by signal {-code}"
    return f"exit code {code}"


def _child(
    writer: Connection,
    taken: Any,
    chosen: list[AccountEntry],
    one: Callable[[AccountEntry, Any], Any],
    threads: int,
    failed: Callable[[AccountEntry, str], Any],
) -> None:
    """A forked process: take the next account until none is left, `threads` at a time; send
    what happens. It ends with `os._exit`: what the parent set to run at its exit is its own."""
    code = 0
    try:
        sender = _Sender(writer)
        # Named as the pool of one process names them (the refresh's lines are held by name).
        workers = [
            start(_take, sender, taken, chosen, one, failed, name=f"accounts_{number}")
            for number in range(threads)
        ]
        for worker in workers:
            worker.join()
    except KeyboardInterrupt:  # the parent was interrupted too: it reports
        code = 130
    except BaseException:  # the parent names the accounts left undone
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)


class _Sender:
    """One pipe to the parent, written whole message by whole message from several threads."""

    def __init__(self, writer: Connection) -> None:
        self._writer = writer
        self._lock = threading.Lock()
        self._secrets = redaction.registered()

    def send(self, *message: Any) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            self._writer.send_bytes(data)

    def secrets(self, index: int) -> None:
        """The secrets registered here since the last time (a header value read from a
        file): the parent prints this account's output, so it must know them first."""
        with self._lock:
            now = redaction.registered()
            new, self._secrets = now - self._secrets, now
        if new:
            self.send("secrets", index, sorted(new))


class _Remote:
    """An account's progress, told to the parent."""

    def __init__(self, sender: _Sender, index: int) -> None:
        self._sender = sender
        self._index = index

    def count(self, read: int) -> None:
        self._sender.send("count", self._index, read)

    def say(self, state: str) -> None:
        self._sender.send("say", self._index, state)


def _take(
    sender: _Sender,
    taken: Any,
    chosen: list[AccountEntry],
    one: Callable[..., Any],
    failed: Callable[[AccountEntry, str], Any],
) -> None:
    try:
        for index in _next(taken, len(chosen)):
            sender.send("start", index)
            outcome = one(chosen[index], _Remote(sender, index))
            sender.secrets(index)
            try:
                sender.send("done", index, outcome)
            except (pickle.PicklingError, TypeError, AttributeError) as error:
                reason = f"internal error: its result could not be passed on: {error}"
                sender.send("done", index, failed(chosen[index], reason))
    except (OSError, EOFError):  # the parent is gone: nobody is left to tell
        return


def _next(taken: Any, count: int) -> Iterator[int]:
    while True:
        with taken.get_lock():
            index = taken.value
            if index >= count:
                return
            taken.value = index + 1
        yield index
