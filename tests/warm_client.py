"""`reconciler ARGS...` for a test, started from the warm process (tests/warm.py) instead of
importing the package again: run as `python -I -S warm_client.py SOCKET ARGS...`, with the
standard library only, so that it starts in a few milliseconds.

It sends the warm process its arguments, its environment, its working directory and its
standard streams; the warm process forks the command's process, which runs with exactly those,
and says its pid, then how it ended. This process forwards the signals it is sent to it, and
ends as it ended: with its exit status, or killed by the same signal. When the warm process
cannot be reached, or says the command needs an interpreter started otherwise (another
PYTHONPATH, another -X flag), this process becomes `python -m reconciler ARGS...` itself.
"""

import contextlib
import json
import os
import signal
import socket
import sys

_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
              signal.SIGUSR2)  # fmt: skip


def _become_the_command(args: list[str]) -> None:
    os.execv(sys.executable, [sys.executable, "-m", "reconciler", *args])


def main() -> None:
    address, args = sys.argv[1], sys.argv[2:]
    request = {"argv": args, "env": dict(os.environ), "cwd": os.getcwd()}
    try:
        warm = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        warm.connect(address)
        socket.send_fds(warm, [json.dumps(request).encode()], [0, 1, 2])
        started = json.loads(warm.recv(4096) or b"{}")
    except OSError:
        started = {}
    if "pid" not in started:
        _become_the_command(args)
    pid = int(started["pid"])

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    for signum in _FORWARDED:
        signal.signal(signum, forward)
    ended = json.loads(warm.recv(4096) or b'{"code": 1}')
    code = int(ended["code"])
    if code < 0:  # killed by a signal: so is this process
        with contextlib.suppress(OSError):  # SIGKILL and SIGSTOP have no handler to reset
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main()
