"""What the fakes of GitHub and GitLab share: a JSON API on a loopback port, started and stopped
as a context, each request parsed, recorded and answered under one lock.

A fake says how it records a request (`recorded`: its own `Recorded`, with the header it checks),
how it answers one (`answer`: its token check, its faults, then its routes' `handle`), and what
it adds to an answer on the way out (`finish`: GitHub pages its lists there).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit


class FakeServer:
    """Start with `with Fake(token) as fake:`; `.api_url` is the API's root for the client."""

    #: Added to the server's address in `api_url` (GitLab's API lives under /api/v4).
    api_path = ""
    #: The Content-Type of a JSON answer.
    json_type = "application/json"

    def __init__(self, token: str) -> None:
        self.token = token
        self.requests: list[Any] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def api_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{self.api_path}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def recorded(
        self, method: str, path: str, query: dict[str, str], body: Any, headers: Mapping[str, str]
    ) -> Any:
        """What `requests` keeps of a request."""
        raise NotImplementedError

    def answer(
        self, method: str, path: str, query: dict[str, str], body: Any, headers: Mapping[str, str]
    ) -> tuple[int, Any]:
        """The status and the answer (JSON, or bytes sent as they are), under the lock."""
        raise NotImplementedError

    def finish(
        self, method: str, path: str, query: dict[str, str], status: int, answer: Any
    ) -> tuple[Any, dict[str, str]]:
        """The answer as sent, and the headers added to it (none unless a fake adds some)."""
        return answer, {}


def _handler(fake: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _serve(self, method: str) -> None:
            parts = urlsplit(self.path)
            query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            with fake._lock:
                fake.requests.append(fake.recorded(method, parts.path, query, body, self.headers))
                status, answer = fake.answer(method, parts.path, query, body, self.headers)
            answer, headers = fake.finish(method, parts.path, query, status, answer)
            data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
            data = b"" if status == 204 else data  # No Content has no body
            self.send_response(status)
            kind = "application/zip" if isinstance(answer, bytes) else fake.json_type
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_PATCH(self) -> None:
            self._serve("PATCH")

        def do_PUT(self) -> None:
            self._serve("PUT")

        def do_DELETE(self) -> None:
            self._serve("DELETE")

    return Handler
