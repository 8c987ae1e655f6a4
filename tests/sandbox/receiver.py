"""A webhook receiver on loopback for the event tests: records every POST, answers as told."""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType


@dataclass(frozen=True)
class Received:
    """One request the receiver got."""

    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    """`with Receiver() as hook:` POST to `hook.url`; `hook.answers` queues statuses (else 200)."""

    def __init__(self, *, delay_s: float = 0.0) -> None:
        self.received: list[Received] = []
        self.answers: deque[int] = deque()
        self.delay_s = delay_s
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver._lock:
                    receiver.received.append(Received(self.path, dict(self.headers.items()), body))
                    status = receiver.answers.popleft() if receiver.answers else 200
                time.sleep(receiver.delay_s)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False  # a slow handler must not hold up the test
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/hook"

    def wait_for(self, count: int, timeout_s: float = 10.0) -> list[Received]:
        """The first `count` requests, waiting for them to arrive."""
        deadline = time.monotonic() + timeout_s
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(self.received) >= count, f"got {len(self.received)} of {count} requests"
        return self.received[:count]

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
