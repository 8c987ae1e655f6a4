"""What every handler reaches through `request.app.state.sandbox`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from starlette.requests import Request

from reconciler.sandbox.faults import Faults, spend_cpu
from reconciler.sandbox.paging import Paging
from reconciler.sandbox.ratelimit import FailedLogins
from reconciler.sandbox.requestlog import RequestLog
from reconciler.sandbox.store import Store


class Background(Protocol):
    """What the handlers and controls ask of the work that runs beside them (settling
    paylists, delivering events): `background.Background` is it. Named here, not imported,
    so the context every handler reads imports none of the handlers' modules."""

    def wake(self) -> None: ...

    async def forget(self) -> None: ...

    async def process_now(self) -> None: ...

    def stop(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Timing:
    """The sandbox's clock settings, short in tests."""

    process_delay_ms: int = 500
    event_retry_base_ms: int = 250


@dataclass
class Sandbox:
    """The state of one running sandbox."""

    store: Store
    timing: Timing = field(default_factory=Timing)
    faults: Faults = field(default_factory=Faults)
    requests: RequestLog = field(default_factory=RequestLog)
    #: Settles paylists and delivers events; None only when nothing runs it (no server).
    background: Background | None = None
    #: How long a login token lives (`--token-ttl-s`).
    token_ttl_s: int = 3600
    failed_logins: FailedLogins = field(default_factory=FailedLogins)
    #: `page` counts from 1 as the real service's does (0 is the first page too); False:
    #: `--zero-based-pages`, where page n is the (n+1)-th.
    one_based_pages: bool = True
    #: "problem" (RFC 9457) or "spring" (Spring Boot's default error body).
    error_style: str = "problem"

    def paging(self, request: Request) -> Paging:
        """The page a list request asks for; answering it costs the CPU the faults set
        (`page_cost_ms`), spent here on the event loop as a CPU-bound server would."""
        paging = Paging.from_query(request.query_params, one_based=self.one_based_pages)
        spend_cpu(self.faults.settings.page_cost_ms)
        return paging


def sandbox_of(request: Request) -> Sandbox:
    sandbox: Sandbox = request.app.state.sandbox
    return sandbox
