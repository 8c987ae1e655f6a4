"""The reconciler's processes of a test, started warm: forked from a process that has already
imported the package, instead of a new interpreter importing it again.

The suite starts thousands of `reconciler` processes (tests/cli.py, and every command of the
workflow runners' jobs), and on 2 cores their imports were most of its time. Each pytest process
starts one warm process (`command()`, on first use): it imports the command line and every
command's module, then waits on a socket. A test's `reconciler ARGS...` is a small client
(tests/warm_client.py) that hands it its arguments, environment, working directory and standard
streams; the warm process forks, and the fork runs `python -m reconciler ARGS...` as a new
interpreter would: those streams as stdin, stdout and stderr (line-buffered on a terminal), that
environment in `os.environ`, that directory, `sys.argv` as `-m` sets it, Python's own handlers
of SIGINT and SIGPIPE, and the interpreter's end (its threads joined, its exit functions run,
its streams flushed). The client forwards the signals it gets to the fork and ends as the fork
ended. A command whose interpreter would start otherwise (a PYTHON* variable or the locale not
the warm process's) is not forked: the client runs `python -m reconciler` itself. The code the
fork runs is the package's own, unchanged; only the imports are done once.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import io
import json
import os
import runpy
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLIENT = Path(__file__).with_name("warm_client.py")

#: What an interpreter reads at its start: a command whose environment differs from the warm
#: process's in one of these is run by a new interpreter instead.
_AT_START = ("PYTHON", "LANG", "LC_")

_started: tuple[subprocess.Popen[bytes] | None, list[str]] | None = None
_lock = threading.Lock()


def command() -> list[str]:
    """The argv that runs `reconciler` warm, to be followed by its arguments; the warm process
    is started on the first call, with this test process's environment and PYTHONPATH this
    checkout, and ends with it. Where it cannot start (its socket cannot be made, say), every
    command starts a new interpreter, as before. A warm process that ended since is not
    started again: each client then runs the command itself."""
    global _started
    with _lock:
        if _started is None:
            folder = tempfile.mkdtemp(prefix="rw-")
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
            address = os.path.join(folder, "s")
            kept = {k: v for k, v in os.environ.items() if k.startswith(_AT_START)}
            environ = {**kept, "PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)}
            server = subprocess.Popen(
                [sys.executable, "-m", "tests.warm", address],
                env=environ,
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
            )
            atexit.register(server.kill)
            assert server.stdout is not None
            if server.stdout.readline() == b"ready\n":  # the imports are done
                _started = (server, [sys.executable, "-I", "-S", str(CLIENT), address])
            else:
                _started = (None, [sys.executable, "-m", "reconciler"])
        return list(_started[1])


def server_pid() -> int:
    """The warm process's pid (started if it is not yet)."""
    command()
    assert _started is not None and _started[0] is not None, "no warm process"
    return _started[0].pid


def shim(path: Path, *, this_checkout: bool = False) -> None:
    """Write an executable `reconciler` at `path` that runs it warm (a runner's PATH), with
    PYTHONPATH this checkout if `this_checkout`."""
    argv = " ".join(f'"{part}"' for part in command())
    setting = f'PYTHONPATH="{ROOT}" ' if this_checkout else ""
    path.write_text(f'#!/bin/sh\n{setting}exec {argv} "$@"\n', encoding="utf-8")
    path.chmod(0o755)


# --- the warm process -------------------------------------------------------------------------


def _import_everything() -> None:
    """The command line and every command's module, as the commands would import them."""
    from reconciler import cli

    for module, _attribute, _help in cli._COMMANDS.values():
        importlib.import_module(module)


def _same_start(env: dict[str, str]) -> bool:
    names = {k for k in (*env, *os.environ) if k.startswith(_AT_START)}
    return all(env.get(name) == os.environ.get(name) for name in names)


def _streams() -> None:
    """stdin, stdout and stderr over fds 0, 1 and 2, as the interpreter's start makes them:
    the warm process's encoding, errors and buffering (its flags are the command's), stdout
    line-buffered on a terminal, stderr always."""
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        template = getattr(sys, f"__{name}__")
        raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
        buffer: io.RawIOBase | io.BufferedIOBase = raw
        buffered = fd == 0 or not isinstance(template.buffer, io.FileIO)  # not -u
        if buffered:
            buffer = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        stream = io.TextIOWrapper(
            buffer,  # type: ignore[arg-type]
            encoding=template.encoding,
            errors=template.errors,
            line_buffering=buffered and (fd == 2 or os.isatty(fd)),
            write_through=template.write_through,
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _run(request: dict[str, object]) -> int:
    """In the fork: the command, as `python -m reconciler` runs it; its exit status."""
    os.environ.clear()
    os.environ.update(request["env"])  # type: ignore[arg-type]
    os.chdir(str(request["cwd"]))
    sys.path[0] = os.getcwd()  # as `-m` puts it first
    _streams()
    # runpy puts the module's path in place of "-m", as `python -m` does
    sys.argv = ["-m", *request["argv"]]  # type: ignore[misc]
    try:
        runpy.run_module("reconciler", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exit_:
        if exit_.code is None:
            code = 0
        elif isinstance(exit_.code, int):
            code = exit_.code
        else:
            print(exit_.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    threading._shutdown()  # type: ignore[attr-defined]  # the interpreter's end, in its order
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    return code


def _fork(connection: socket.socket, request: dict[str, object], fds: list[int],
          others: list[socket.socket], wake: tuple[int, int]) -> int:  # fmt: skip
    pid = os.fork()
    if pid:
        for fd in fds:
            os.close(fd)
        return pid
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for other in others:
            other.close()
        connection.close()
        for fd in wake:
            os.close(fd)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        code = _run(request)
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code)


def serve(address: str) -> None:
    """Import everything, say ready, then fork a command for each client until the test
    process that started this one ends."""
    _import_everything()
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(address)
    listener.listen(128)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    print("ready", flush=True)
    running: dict[int, socket.socket] = {}  # the fork's pid -> its client
    waiting: dict[socket.socket, int] = {}  # a client -> its fork's pid
    while os.getppid() == parent:
        readable, _, _ = select.select([listener, wake_read, *waiting], [], [], 1.0)
        if wake_read in readable:
            os.read(wake_read, 4096)
        for client in [c for c in readable if c in waiting]:  # a client gone: so is its fork
            with contextlib.suppress(OSError):
                if client.recv(1) == b"":
                    os.kill(waiting[client], signal.SIGKILL)
        if listener in readable:
            client, _ = listener.accept()
            message, fds, _flags, _ = socket.recv_fds(client, 1 << 20, 3)
            request = json.loads(message)
            if len(fds) != 3 or not _same_start(request["env"]):
                client.send(b"{}")  # the client runs the command itself
                client.close()
                for fd in fds:
                    os.close(fd)
            else:
                pid = _fork(client, request, fds, [listener, *waiting], (wake_read, wake_write))
                client.send(json.dumps({"pid": pid}).encode())
                running[pid], waiting[client] = client, pid
        while running:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            client = running.pop(pid)
            del waiting[client]
            with contextlib.suppress(OSError):
                client.send(json.dumps({"code": os.waitstatus_to_exitcode(status)}).encode())
            client.close()
    for pid in running:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    serve(sys.argv[1])
