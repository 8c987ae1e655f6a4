"""Injected faults for service endpoints: latency, errors, rate limiting, dropped connections."""

from __future__ import annotations

import asyncio
import math
import random
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, field

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reconciler.sandbox.problems import problem_response
from reconciler.sandbox.requestlog import RequestRecord


@dataclass(frozen=True, slots=True)
class FaultSettings:
    """What `POST /_sandbox/faults` set; the defaults mean no fault at all."""

    latency_ms: int = 0
    error_rate: float = 0.0
    error_status: int = 503
    rate_limit_per_s: float | None = None
    drop_rate: float = 0.0
    seed: int | None = None
    methods: tuple[str, ...] | None = None  # only requests of these methods; None: every one

    def to_json(self) -> dict[str, object]:
        settings = asdict(self)
        settings["methods"] = None if self.methods is None else list(self.methods)
        return settings


@dataclass(frozen=True, slots=True)
class Decision:
    """What happens to one request."""

    retry_after_s: int | None = None  # set when rate limited
    latency_s: float = 0.0
    error_status: int | None = None
    drop: bool = False


@dataclass
class Faults:
    """The current fault settings, and the state they need (random draws, recent requests)."""

    settings: FaultSettings = field(default_factory=FaultSettings)
    _random: random.Random = field(default_factory=random.Random)
    _admitted: deque[float] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def configure(self, settings: FaultSettings) -> None:
        with self._lock:
            self.settings = settings
            self._random = random.Random(settings.seed)
            self._admitted.clear()

    def decide(self, method: str = "GET") -> Decision:
        """Draw the fate of one request (both draws always happen, so a seed replays exactly);
        a request of a method the faults leave alone passes untouched, and draws nothing."""
        with self._lock:
            settings = self.settings
            if settings.methods is not None and method not in settings.methods:
                return Decision()
            error_draw = self._random.random()
            drop_draw = self._random.random()
            if settings.rate_limit_per_s is not None:
                now = time.monotonic()
                while self._admitted and self._admitted[0] <= now - 1.0:
                    self._admitted.popleft()
                if len(self._admitted) >= settings.rate_limit_per_s:
                    wait = self._admitted[0] + 1.0 - now
                    return Decision(retry_after_s=max(1, math.ceil(wait)))
                self._admitted.append(now)
        return Decision(
            latency_s=settings.latency_ms / 1000,
            error_status=settings.error_status if error_draw < settings.error_rate else None,
            drop=drop_draw < settings.drop_rate,
        )


async def apply_faults(
    decision: Decision, app: ASGIApp, scope: Scope, receive: Receive, send: Send
) -> None:
    """Answer one service request as `decision` says, running `app` unless a fault prevents it."""
    record: RequestRecord = scope["sandbox.record"]
    if decision.retry_after_s is not None:
        response = problem_response(
            429,
            "rate limit exceeded (a sandbox fault); retry after the Retry-After delay",
            headers={"Retry-After": str(decision.retry_after_s)},
        )
        await response(scope, receive, send)
        return
    if decision.latency_s:
        await asyncio.sleep(decision.latency_s)
    if decision.error_status is not None:
        headers = {"Retry-After": "1"} if decision.error_status in (429, 503) else {}
        response = problem_response(
            decision.error_status, "an injected sandbox fault", headers=headers
        )
        await response(scope, receive, send)
        return
    if not decision.drop:
        await app(scope, receive, send)
        return
    # Drop: do the work (and commit it), then send the head and no body, and return. The
    # server closes a connection whose answer is incomplete, so the client sees a transport
    # error although the change took effect: the ambiguous outcome a retry must survive.
    start: Message | None = None

    async def hold(message: Message) -> None:
        nonlocal start
        if message["type"] == "http.response.start":
            start = message

    await app(scope, receive, hold)
    record.dropped = True
    if start is not None:
        await send(start)
