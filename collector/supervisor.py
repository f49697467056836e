"""Supervised background tasks: a loop that dies is logged, counted and restarted.

Each component's loop (the pipeline, the span assembler's flusher) catches what one item
can throw; this is the net under a bug nobody foresaw. While a task is down, /readyz says
so; `ragpulse_component_restarts_total` keeps the count.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import structlog
from prometheus_client import CollectorRegistry, Counter

from ragpulse.collector.telemetry.shared import shared

log = structlog.get_logger("ragpulse.supervisor")

FIRST_BACKOFF_SECONDS = 0.1
MAX_BACKOFF_SECONDS = 5.0
RECENT_SECONDS = 60.0  # a restart this recent is reported by /readyz (without making it fail)


class SupervisorMetrics:
    """Restarts by component: one family per registry (`shared`), every supervised loop counts into it."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.restarts = Counter(
            "ragpulse_component_restarts_total", "Background tasks restarted after they died of an unexpected error.",
            ["component"], registry=registry,
        )


class Supervised:
    """Runs `loop()` as a task until it returns; restarts it (with backoff) when it raises.

    `clock` dates the restarts /readyz reports and `sleep` waits out the backoff: tests drive both.
    """

    def __init__(self, component: str, loop: Callable[[], Awaitable[None]], registry: CollectorRegistry,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.component = component
        self._loop = loop
        self._restarts = shared(registry, SupervisorMetrics).restarts.labels(component=component)
        self._restarts.inc(0)
        self._clock = clock
        self._sleep = sleep
        self._down_since: float | None = None
        self._last_restart: float | None = None
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self._run(), name=f"ragpulse-{self.component}")

    def down_reason(self) -> str | None:
        """Why readiness fails: the task is dead and waiting to restart."""
        if self._down_since is not None:
            return f"{self.component} failed and is restarting"
        return None

    def recent_restart(self) -> str | None:
        """A restart in the last minute, for /readyz's body (it stays ready)."""
        if self._last_restart is not None and self._clock() - self._last_restart < RECENT_SECONDS:
            return f"{self.component} restarted {self._clock() - self._last_restart:.0f} s ago after a failure (see the log)"
        return None

    async def _run(self) -> None:
        backoff = FIRST_BACKOFF_SECONDS
        while True:
            try:
                await self._loop()
                return
            except asyncio.CancelledError:
                raise
            except Exception:
                self._down_since = self._clock()
                self._restarts.inc()
                log.exception("background task died; restarting", component=self.component, retry_in_s=backoff)
            await self._sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
            self._down_since = None
            self._last_restart = self._clock()
