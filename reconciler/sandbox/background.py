"""The work the service does by itself: settling due paylists and delivering events.

It runs on a thread of its own with its own asyncio loop, so a slow webhook receiver never holds
up the API. Request handlers (on uvicorn's loop) `wake()` it after a change, and
`/_sandbox/process` runs `process_now()` on it and waits until that is done.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Coroutine
from typing import Any

import httpx

from reconciler.sandbox import events, processing
from reconciler.sandbox.store import Store
from reconciler.sandbox.timestamps import now_ns

#: At most this many deliveries at once (connections to receivers).
MAX_CONCURRENT_DELIVERIES = 16
#: The longest it sleeps without looking at the database (a change a handler forgot to wake it
#: for is still picked up).
_MAX_SLEEP_S = 1.0
_START_TIMEOUT_S = 10.0
_log = logging.getLogger(__name__)


class Background:
    """The sandbox's own clockwork; `start()` it once, `stop()` it once."""

    def __init__(self, store: Store, *, process_delay_ms: int, event_retry_base_ms: int) -> None:
        self.store = store
        self.process_delay_ms = process_delay_ms
        self.event_retry_base_ms = event_retry_base_ms
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._wake: asyncio.Event | None = None
        self._stopping = False
        self._http: httpx.AsyncClient | None = None
        self._slots: asyncio.Semaphore | None = None
        self._in_flight: dict[int, asyncio.Task[None]] = {}
        # Bumped by `forget()`: an attempt started before a reset is not recorded after it.
        self._generation = 0

    # --- from other threads -----------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="sandbox-background", daemon=True)
        self._thread.start()
        if not self._ready.wait(_START_TIMEOUT_S):
            raise RuntimeError("the sandbox's background worker did not start")

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop_soon)
            self._thread.join(timeout=10)

    def wake(self) -> None:
        """Look at the database now (something may have fallen due)."""
        if self._loop is not None and self._wake is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._wake.set)

    async def process_now(self) -> None:
        """Settle every pending paylist and attempt every undelivered event; returns when done."""
        await self._on_loop(self._process_now())

    async def forget(self) -> None:
        """Drop every attempt under way (after a reset emptied the tables)."""
        await self._on_loop(self._forget())

    async def _on_loop(self, work: Coroutine[Any, Any, None]) -> None:
        if self._loop is None:
            work.close()
            raise RuntimeError("the sandbox's background worker is not running")
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self._loop))

    # --- on the background loop -------------------------------------------------------------

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        finally:
            loop.close()

    def _stop_soon(self) -> None:
        self._stopping = True
        if self._wake is not None:
            self._wake.set()

    async def _main(self) -> None:
        self._wake = asyncio.Event()
        self._slots = asyncio.Semaphore(MAX_CONCURRENT_DELIVERIES)
        limits = httpx.Limits(max_connections=MAX_CONCURRENT_DELIVERIES)
        async with httpx.AsyncClient(
            timeout=events.TIMEOUT_S, follow_redirects=False, trust_env=False, limits=limits
        ) as http:
            self._http = http
            self._ready.set()
            while not self._stopping:
                self._wake.clear()
                try:
                    self._run_due()
                    sleep_s = self._sleep_s()
                except Exception:  # a sandbox bug: say so, and keep the clockwork going
                    _log.exception("the sandbox's background worker failed; retrying")
                    sleep_s = _MAX_SLEEP_S
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), sleep_s)
            await self._forget()

    def _run_due(self) -> None:
        with self.store.write() as conn:
            processing.settle_due(conn)
        with self.store.read() as conn:
            due = events.waiting(conn, due_by=now_ns())
        for event in due:
            if event["id"] not in self._in_flight:
                self._start_attempt(event)

    def _sleep_s(self) -> float:
        """Until the next paylist or event (not one under way) falls due."""
        with self.store.read() as conn:
            due = [
                processing.next_due_ns(conn),
                events.next_attempt_ns(conn, excluding=self._in_flight.keys()),
            ]
        soonest = min((at for at in due if at is not None), default=None)
        if soonest is None:
            return _MAX_SLEEP_S
        return min(_MAX_SLEEP_S, max(0.0, (soonest - now_ns()) / 1e9))

    def _start_attempt(self, event: Any) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(self._deliver(event, self._generation))
        self._in_flight[event["id"]] = task
        return task

    async def _deliver(self, event: Any, generation: int) -> None:
        assert self._slots is not None and self._http is not None and self._wake is not None
        try:
            async with self._slots:
                outcome = await events.attempt(self._http, event)
            if generation == self._generation:
                with self.store.write() as conn:
                    events.note_outcome(conn, event["id"], outcome, self.event_retry_base_ms)
        finally:
            if self._in_flight.get(event["id"]) is asyncio.current_task():
                del self._in_flight[event["id"]]
            self._wake.set()

    async def _process_now(self) -> None:
        with self.store.write() as conn:
            processing.settle_due(conn, everything=True)
        with self.store.read() as conn:
            waiting = events.waiting(conn, due_by=None)
        attempts = [
            self._in_flight.get(event["id"]) or self._start_attempt(event) for event in waiting
        ]
        await asyncio.gather(*attempts, return_exceptions=True)

    async def _forget(self) -> None:
        self._generation += 1
        under_way = list(self._in_flight.values())
        self._in_flight.clear()
        for task in under_way:
            task.cancel()
        await asyncio.gather(*under_way, return_exceptions=True)
