"""The interop outputs, wired: which are built (config interop), the judging exit's consumers they add,
and their lifecycle. Each is off by default."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Awaitable

import structlog
from opentelemetry.sdk.resources import Resource
from prometheus_client import CollectorRegistry

import ragpulse
from ragpulse.config import Config
from ragpulse.interop.evaluation_events import EvaluationEvents
from ragpulse.interop.otlp_exporters import DROP_REASONS
from ragpulse.interop.otlp_metrics import OtlpMetricsPush
from ragpulse.interop.phoenix import PhoenixAnnotations
from ragpulse.judging import Consumer

log = structlog.get_logger("ragpulse.interop")


def resource(config: Config) -> Resource:
    """Who sends: ragpulse, and which replica (host and HTTP port), so a backend keeps replicas' series apart."""
    return Resource.create({"service.name": "ragpulse", "service.version": ragpulse.__version__,
                            "service.instance.id": f"{socket.gethostname()}:{config.http.port}"})


class Interop:
    def __init__(self, config: Config, registry: CollectorRegistry) -> None:
        options = config.interop
        self._registry = registry
        self._shutdown_seconds = options.shutdown_timeout_seconds
        self.events: EvaluationEvents | None = None
        self.metrics_push: OtlpMetricsPush | None = None
        self.phoenix: PhoenixAnnotations | None = None
        sender = resource(config)  # each output makes the interop series it counts: none when all are off
        if options.evaluation_events.enabled:
            self.events = EvaluationEvents(options, registry, sender)
        if options.otlp_metrics.enabled:
            self.metrics_push = OtlpMetricsPush(options.otlp_metrics, registry, sender)
        if options.phoenix.enabled:
            self.phoenix = PhoenixAnnotations(options, registry)

    def judgment_consumers(self) -> list[tuple[str, Consumer]]:
        """The judging exit's consumers (judging/exit.py), in the order they run."""
        consumers: list[tuple[str, Consumer]] = []
        if self.events is not None:
            events = self.events
            consumers.append(("evaluation_events", lambda judged: events(judged.record)))
        if self.phoenix is not None:
            phoenix = self.phoenix
            consumers.append(("phoenix", lambda judged: phoenix.add(judged.record)))
        return consumers

    async def start(self) -> None:
        if self.metrics_push is not None:
            await self.metrics_push.start()
        if self.phoenix is not None:
            await self.phoenix.start()

    def _totals(self) -> tuple[dict[str, int], dict[str, int]]:
        """Each output's items sent, and dropped (every reason), so far."""
        value = self._registry.get_sample_value
        outputs = [name for name, output in (("evaluation_events", self.events), ("otlp_metrics", self.metrics_push),
                                             ("phoenix", self.phoenix)) if output is not None]
        sent = {output: int(value("ragpulse_interop_sent_total", {"output": output}) or 0) for output in outputs}
        dropped = {output: int(sum(value("ragpulse_interop_dropped_total", {"output": output, "reason": reason}) or 0
                                   for reason in DROP_REASONS[output])) for output in outputs}
        return sent, dropped

    async def shutdown(self) -> None:
        """After judging has stopped: what its last judgments made is sent, the outputs at once and all within
        one deadline (interop.shutdown_timeout_seconds), whatever their endpoints do; what is not delivered by
        then is counted dropped, and logged in one line."""
        deadline = time.monotonic() + self._shutdown_seconds
        _, before = self._totals()
        waits: list[Awaitable[None]] = []
        if self.phoenix is not None:
            waits.append(self.phoenix.shutdown(deadline))
        if self.events is not None:
            waits.append(asyncio.to_thread(self.events.shutdown, deadline))  # returns by the deadline
        if self.metrics_push is not None:
            waits.append(self.metrics_push.shutdown(deadline))
        await asyncio.gather(*waits)
        sent, dropped = self._totals()
        if dropped != before:
            log.warning("interop: not delivered at shutdown", deadline_seconds=self._shutdown_seconds,
                        not_delivered={output: dropped[output] - before[output] for output in dropped},
                        sent_total=sent, dropped_total=dropped)
