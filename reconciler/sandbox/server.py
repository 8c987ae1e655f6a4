"""`SandboxServer`: the sandbox on a loopback port, served by uvicorn in a background thread."""

from __future__ import annotations

import logging
import socket
import threading
from pathlib import Path
from types import TracebackType

import uvicorn

from reconciler.sandbox import clients
from reconciler.sandbox.app import FUNCTIONS, SCHEMA, create_app
from reconciler.sandbox.background import Background
from reconciler.sandbox.context import Sandbox, Timing
from reconciler.sandbox.seed import apply_seed, load_seed
from reconciler.sandbox.store import MEMORY, Store

_START_TIMEOUT_S = 10.0


class _QuietDrops(logging.Filter):
    """Drops uvicorn's complaint about the incomplete answers that the drop fault sends."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "without completing response" not in record.getMessage()


logging.getLogger("uvicorn.error").addFilter(_QuietDrops())


class SandboxServer:
    """A running sandbox: `with SandboxServer() as sandbox: httpx.get(sandbox.base_url + ...)`.

    `db` is `:memory:` or a file (created on first start with the demo client and the `seed`;
    later starts keep its data and the demo client's token).
    """

    def __init__(
        self,
        db: str | Path = MEMORY,
        host: str = "127.0.0.1",
        port: int = 0,
        process_delay_ms: int = 500,
        event_retry_base_ms: int = 250,
        seed: str | Path | None = None,
        token_ttl_s: int = 3600,
        zero_based_pages: bool = False,
        error_style: str = "problem",
    ) -> None:
        self.db = str(db)
        self.host = host
        self.port = port
        self.timing = Timing(process_delay_ms, event_retry_base_ms)
        self.seed = None if seed is None else Path(seed)
        self.seeded = False
        self.client_id = 0
        self.token = ""
        self.email = ""  # the demo client's login
        self.password = ""
        self.token_ttl_s = token_ttl_s
        self.zero_based_pages = zero_based_pages
        if error_style not in ("problem", "spring"):
            raise ValueError(f"error_style must be 'problem' or 'spring', not {error_style!r}")
        self.error_style = error_style
        self._sandbox: Sandbox | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def sandbox(self) -> Sandbox:
        """The running sandbox's state (its store, faults and request log)."""
        if self._sandbox is None:
            raise RuntimeError("the sandbox is not started")
        return self._sandbox

    def start(self) -> SandboxServer:
        """Open the database, bind the port and serve; returns once it answers."""
        seed = load_seed(self.seed) if self.seed is not None else None  # fail before any write
        store = Store(self.db, SCHEMA, FUNCTIONS)
        try:
            with store.write() as conn:
                demo, created = clients.ensure_demo_client(conn)
                if created and seed is not None:
                    apply_seed(conn, demo.client_id, seed)
                    self.seeded = True
            sock = _bind(self.host, self.port)
        except BaseException:
            store.close()
            raise
        self.client_id, self.token = demo.client_id, demo.token
        self.email, self.password = demo.email, demo.password
        self.port = sock.getsockname()[1]
        background = Background(
            store,
            process_delay_ms=self.timing.process_delay_ms,
            event_retry_base_ms=self.timing.event_retry_base_ms,
        )
        background.start()
        self._sandbox = Sandbox(
            store=store,
            timing=self.timing,
            background=background,
            token_ttl_s=self.token_ttl_s,
            one_based_pages=not self.zero_based_pages,
            error_style=self.error_style,
        )
        config = uvicorn.Config(
            create_app(self._sandbox),
            log_config=None,  # leave the host process's logging as it is
            log_level="warning",
            access_log=False,
            lifespan="off",
            http="h11",
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="sandbox", daemon=True
        )
        self._thread.start()
        self._wait_started()
        return self

    def _wait_started(self) -> None:
        assert self._server is not None and self._thread is not None
        deadline = threading.Event()
        for _ in range(int(_START_TIMEOUT_S / 0.005)):
            if self._server.started:
                return
            if not self._thread.is_alive():
                break
            deadline.wait(0.005)
        self.stop()
        raise RuntimeError(f"the sandbox did not start on {self.base_url}")

    def stop(self) -> None:
        """Stop serving and close the database."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._sandbox is not None:
            if self._sandbox.background is not None:
                self._sandbox.background.stop()
            self._sandbox.store.close()
        self._server = self._thread = self._sandbox = None

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one), IPv4 or IPv6 as the host says."""
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    # proto IPPROTO_TCP (not 0) is what makes asyncio set TCP_NODELAY on accepted connections;
    # without it every answer on a kept-alive connection waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock
