"""The sandbox's ASGI application: the route table, errors as problem+json, faults and the log.

A resource is a module with `ROUTES` (and `SCHEMA` when it has tables); adding one means adding
it to `RESOURCES` below.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reconciler.sandbox import (
    clients,
    controls,
    events,
    login,
    lookups,
    paylists,
    payments,
    wallet,
    webhook_test,
    webhooks,
    workers,
)
from reconciler.sandbox.context import Sandbox
from reconciler.sandbox.faults import apply_faults
from reconciler.sandbox.problems import Problem, problem_response
from reconciler.sandbox.requestlog import RequestRecord
from reconciler.sandbox.springerrors import SpringErrors
from reconciler.sandbox.timestamps import iso_us, now_ns

#: Service resources, each a module with `ROUTES` and `SCHEMA`.
RESOURCES = (
    clients,
    login,
    workers,
    webhooks,
    webhook_test,
    paylists,
    payments,
    lookups,
    wallet,
    events,
)
SCHEMA = tuple(statement for module in RESOURCES for statement in module.SCHEMA)
#: SQL functions the resources' queries call, registered on the store's connection.
FUNCTIONS = {**workers.FUNCTIONS, **payments.FUNCTIONS}
CONTROLS_PREFIX = "/_sandbox/"


class ServiceGate:
    """ASGI middleware for service requests (not `/_sandbox/`): injects faults, logs each one."""

    def __init__(self, app: ASGIApp, sandbox: Sandbox) -> None:
        self.app = app
        self.sandbox = sandbox

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or f"{path}/".startswith(CONTROLS_PREFIX):
            await self.app(scope, receive, send)
            return
        generation = self.sandbox.requests.generation
        record = RequestRecord(
            at=iso_us(now_ns()),
            method=scope["method"],
            path=path,
            query=scope.get("query_string", b"").decode("latin-1"),
            generation=generation,
        )
        scope["sandbox.record"] = record

        async def unless_reset(scope: Scope, receive: Receive, send: Send) -> None:
            """A request held (by a fault's latency) across a reset touches nothing of the
            fresh sandbox: it is answered 503, and not logged."""
            if self.sandbox.requests.generation != generation:
                gone = problem_response(503, "the sandbox was reset while this request waited")
                await gone(scope, receive, send)
                return
            await self.app(scope, receive, send)

        async def send_noting_status(message: Message) -> None:
            if message["type"] == "http.response.start":
                record.status = message["status"]
            await send(message)

        try:
            decision = self.sandbox.faults.decide(scope["method"])
            await apply_faults(decision, unless_reset, scope, receive, send_noting_status)
        except ClientDisconnect:
            record.status = record.status or 499  # the client left: nobody to answer
        except Exception:
            record.status = record.status or 500  # the error middleware outside answers 500
            raise
        finally:
            self.sandbox.requests.append(record)


async def _on_problem(_request: Request, error: Exception) -> Response:
    assert isinstance(error, Problem)
    return problem_response(error.status, error.detail, errors=error.errors, headers=error.headers)


async def _on_http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    detail = {
        404: f"no such endpoint: {request.url.path}",
        405: f"{request.method} is not allowed on {request.url.path}",
    }.get(error.status_code, str(error.detail))
    return problem_response(error.status_code, detail, headers=error.headers)


async def _on_bug(_request: Request, error: Exception) -> Response:
    # A bug in the sandbox, never bad input: still a problem+json, with what happened.
    return problem_response(500, f"internal sandbox error: {type(error).__name__}: {error}")


def create_app(sandbox: Sandbox) -> Starlette:
    """The ASGI app serving `sandbox`."""
    routes = [route for module in (*RESOURCES, controls) for route in module.ROUTES]
    app = Starlette(
        routes=routes,
        exception_handlers={
            Problem: _on_problem,
            HTTPException: _on_http_error,
            Exception: _on_bug,
        },
    )
    # The service has no trailing-slash variants: `/x/` is an unknown path, not a redirect.
    app.router.redirect_slashes = False
    app.state.sandbox = sandbox
    app.add_middleware(ServiceGate, sandbox=sandbox)
    if sandbox.error_style == "spring":
        app.add_middleware(SpringErrors)  # outermost: it sees every answer, faults included
    return app
