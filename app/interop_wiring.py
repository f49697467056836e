"""The interop outputs, wired: which are built (config interop), the judging exit's consumers they add,
and their lifecycle. Each is off by default."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable

from opentelemetry.sdk.resources import Resource
from prometheus_client import CollectorRegistry

import ragpulse
from ragpulse.config import Config
from ragpulse.interop.evaluation_events import EvaluationEvents
from ragpulse.interop.otlp_metrics import OtlpMetricsPush
from ragpulse.interop.phoenix import PhoenixAnnotations
from ragpulse.judging import Consumer


def resource(config: Config) -> Resource:
    """Who sends: ragpulse, and which replica (host and HTTP port), so a backend keeps replicas' series apart."""
    return Resource.create({"service.name": "ragpulse", "service.version": ragpulse.__version__,
                            "service.instance.id": f"{socket.gethostname()}:{config.http.port}"})


class Interop:
    def __init__(self, config: Config, registry: CollectorRegistry) -> None:
        options = config.interop
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

    async def shutdown(self) -> None:
        """After judging has stopped: what its last judgments made is sent, each output within its own timeout,
        the three at once (one endpoint away must not add its wait to the others' in a pod's grace period)."""
        waits: list[Awaitable[None]] = []
        if self.phoenix is not None:
            waits.append(self.phoenix.shutdown())
        if self.events is not None:
            waits.append(asyncio.to_thread(self.events.shutdown))
        if self.metrics_push is not None:
            waits.append(self.metrics_push.shutdown())
        await asyncio.gather(*waits)
