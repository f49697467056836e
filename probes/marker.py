"""Probe traffic that comes back as traces: the service, asked by a probe, may report that request's
trace to ragpulse like any other (over OTLP, HTTP or Kafka). It must not count as a user's.

Every probe request carries the probe header and W3C baggage `ragpulse.probe=<run id>`. An app that
copies the baggage to its spans (OpenTelemetry's BaggageSpanProcessor does) marks the trace with the
span attribute `ragpulse.probe`; an app that posts events sets `attributes: {"ragpulse.probe": ...}`.
This stage, first in the pipeline, takes marked events out before anything counts them, and counts
them apart. A probe trace the app does not mark cannot be told from a user's.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter

from ragpulse._native import ProbeCore
from ragpulse.collector.events import Envelope

PROBE_ATTRIBUTE = "ragpulse.probe"


class ProbeTrafficFilter:
    def __init__(self, registry: CollectorRegistry) -> None:
        self._dropped = Counter("ragpulse_probe_events_ingested_total", "Events marked as probe traffic (the "
                                "ragpulse.probe attribute), kept out of every production metric.", ["source"],
                                registry=registry)
        # The test in the compiled core (native/src/probe.rs): the pipeline's loop calls it without this class's call.
        self._core = ProbeCore(PROBE_ATTRIBUTE, self._count)
        self.direct = self._core.process

    def __call__(self, envelope: Envelope) -> Envelope | None:
        return self._core.process(envelope)

    def _count(self, envelope: Envelope) -> None:
        self._dropped.labels(source=envelope.source).inc()


def is_probe(envelope: Envelope) -> bool:
    attributes = envelope.event.attributes
    return bool(attributes) and PROBE_ATTRIBUTE in attributes
