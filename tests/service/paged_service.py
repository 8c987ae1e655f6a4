"""A tiny stand-in for a service that pages differently from the sandbox, over real HTTP.

The sandbox numbers pages as the contract says (from 1, or from 0 with `--zero-based-pages`)
and answers every envelope the contract gives; a real service may drop envelope fields, clamp
sizes lower or fail one page. This app serves the three paged endpoints in either numbering
(one-indexed as Spring's, where `page=0` and `page=1` both answer the first page and `number`
still says 0), with the envelope shape of each, so the client's paging is tried against both
over a real socket.
"""

from __future__ import annotations

import asyncio
import math
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


@dataclass
class PagedService:
    """Serves `count` items on each paged endpoint; `requests` logs (path, page) asked."""

    count: int
    one_indexed: bool
    max_size: int = 200
    requests: list[tuple[str, int]] = field(default_factory=list)
    failing_pages: set[int] = field(default_factory=set)  # these answer failing_status, always
    failing_status: int = 503
    held_pages: set[int] = field(default_factory=set)  # these wait for `released` (30 s at most)
    released: threading.Event = field(default_factory=threading.Event)

    def _slice(self, request: Request) -> tuple[list[int], int, int]:
        asked = int(request.query_params.get("page", "1" if self.one_indexed else "0"))
        size = min(int(request.query_params.get("size", "20")), self.max_size)
        self.requests.append((request.url.path, asked))
        # Spring with one-indexed parameters: page 0 and page 1 are both the first page.
        index = max(asked - 1, 0) if self.one_indexed else asked
        ids = list(range(1, self.count + 1))[index * size : (index + 1) * size]
        return ids, index, size

    async def workers(self, request: Request) -> Response:
        ids, index, size = self._slice(request)
        if index in self.failing_pages:
            return Response(
                "upstream unavailable", status_code=self.failing_status, media_type="text/plain"
            )
        deadline = time.monotonic() + 30
        while (
            index in self.held_pages and not self.released.is_set() and time.monotonic() < deadline
        ):
            await asyncio.sleep(0.01)
        total_pages = math.ceil(self.count / size)
        content = [
            {
                "agreementId": n,
                "firstName": None,
                "lastName": None,
                "legalName": None,
                "email": f"w{n}@example.com",
                "jobTitle": "Engineer",
                "country": None,
                "externalId": f"ENG-{n}",
                "workerCreationDate": "2025-03-14T09:26:53.589+00:00",
                "status": "INVITATION_SENT",
            }
            for n in ids
        ]
        return JSONResponse(
            {
                "content": content,
                "pageable": {"pageNumber": index, "pageSize": size},
                "last": index >= total_pages - 1,
                "first": index == 0,
                "empty": not content,
                "totalPages": total_pages,
                "totalElements": self.count,
                "number": index,
                "size": size,
                "numberOfElements": len(content),
            }
        )

    async def payments(self, request: Request) -> JSONResponse:
        ids, index, size = self._slice(request)
        content = [
            {
                "id": n,
                "description": f"p{n}",
                "amount": 1.5,
                "worker_email": "a@example.com",
                "paylist_id": 1,
                "status": "SUCCESS",
                "cause": None,
                "creation_date": "2025-03-14T09:26:53.589793Z",
            }
            for n in ids
        ]
        return JSONResponse(
            {
                "content": content,
                "pageable": {"pageNumber": index, "pageSize": size},
                "totalElements": self.count,
            }
        )

    async def transactions(self, request: Request) -> JSONResponse:
        ids, _, _ = self._slice(request)
        content = [
            {
                "journal_id": n,
                "amount": -1.5,
                "reason": "PAYMENT",
                "operation": "WITHDRAWAL",
                "client_id": 9,
                "created_at": "2025-03-14T09:26:53.589793Z",
            }
            for n in ids
        ]
        return JSONResponse({"content": content})

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/contract/workers/list", self.workers),
                Route("/payment-agent/payments", self.payments),
                Route("/client-wallet/clients/transactions", self.transactions),
            ]
        )


@contextmanager
def serving(app: Starlette) -> Iterator[str]:
    """Run `app` with uvicorn on a free loopback port in a thread; yields its base URL."""
    # IPPROTO_TCP named explicitly: asyncio sets TCP_NODELAY on accepted connections only when
    # the listening socket's proto says TCP; with proto 0 every answer waits on a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the test service did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
