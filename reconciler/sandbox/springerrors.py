"""`--error-style spring`: every error in Spring Boot's default shape instead of problem+json.

`{"timestamp", "status", "error", "message", "path"}`, with validation details as
`errors[{field, defaultMessage}]` where `field` is the path Spring's binder gives (`url`,
`headers[2]`, `payments[1].amount`, and `[1].workerEmail` in a body that is a JSON array). The
status code is unchanged. Done in one place, as ASGI middleware over every answer, so each
error of the sandbox (handlers, faults, controls) takes the same shape.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reconciler.sandbox.problems import PROBLEM_JSON
from reconciler.sandbox.timestamps import iso_us, now_ns


def spring_body(problem: dict[str, Any], path: str) -> dict[str, Any]:
    """The Spring Boot error body for a problem+json body."""
    body: dict[str, Any] = {
        "timestamp": iso_us(now_ns()),
        "status": problem.get("status"),
        "error": problem.get("title"),
        "message": problem.get("detail"),
        "path": path,
    }
    errors = problem.get("errors")
    if isinstance(errors, list) and errors:
        body["errors"] = [
            {"field": _binder_path(error), "defaultMessage": error.get("message")}
            for error in errors
            if isinstance(error, dict)
        ]
    return body


def _binder_path(error: dict[str, Any]) -> str | None:
    index, field = error.get("index"), error.get("field")
    if index is None:
        return field if isinstance(field, str) else None
    return f"[{index}].{field}" if isinstance(field, str) else f"[{index}]"


class SpringErrors:
    """Rewrites every problem+json answer into Spring Boot's shape."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        chunks: list[bytes] = []

        async def rewriting(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers", []))
                if headers.get(b"content-type", b"").startswith(PROBLEM_JSON.encode()):
                    start = message
                    return
            elif start is not None and message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if message.get("more_body"):
                    return
                await self._send_spring(start, b"".join(chunks), scope, send)
                return
            await send(message)

        await self.app(scope, receive, rewriting)

    @staticmethod
    async def _send_spring(start: Message, raw: bytes, scope: Scope, send: Send) -> None:
        try:
            problem = json.loads(raw)
        except ValueError:
            problem = {"status": start["status"], "detail": raw.decode("utf-8", "replace")}
        body = json.dumps(spring_body(problem, scope.get("path", "")), ensure_ascii=False)
        content = body.encode("utf-8")
        headers = [
            (name, value)
            for name, value in start.get("headers", [])
            if name not in (b"content-type", b"content-length")
        ]
        headers += [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(content)).encode()),
        ]
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": content, "more_body": False})
