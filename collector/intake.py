"""What every source reports at the pipeline's door: events accepted, rejected, cut, refused, and whether it is up.

One instance a registry for all sources (they share the families, labelled by source: `shared(registry,
IntakeMetrics)`); each source names itself with `precreate(source)` when it is built, so its series exist at zero
from the first scrape.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge

from ragpulse.collector.events import Envelope, TraceEvent
from ragpulse.errors import RejectReason


class IntakeMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        def counter(name: str, doc: str, *labelnames: str) -> Counter:
            return Counter(name, doc, labelnames, registry=registry)

        self.events_received = counter("ragpulse_events_received_total", "Valid events accepted from a source.", "source", "type")
        self.events_invalid = counter("ragpulse_events_invalid_total", "Events rejected by validation, by reason.", "source", "reason")
        self.events_truncated = counter(
            "ragpulse_events_truncated_total", "Accepted events with a field cut to its limit.", "source", "field"
        )
        self.events_refused = counter(
            "ragpulse_events_refused_total",
            "Valid events not taken in: backpressure (the pipeline was full), unauthorized or unprotected (no token "
            "of their scope).", "source", "reason"
        )
        self.source_up = Gauge("ragpulse_source_up", "1 when a source is running and connected.", ["source"], registry=registry)

    def precreate(self, source: str) -> None:
        """Rules and dashboards divide by these: a series that does not exist yet is no data, not zero."""
        for reason in RejectReason:
            self.events_invalid.labels(source=source, reason=reason.value)
        self.events_refused.labels(source=source, reason="backpressure")
        for kind in ("trace", "feedback"):
            self.events_received.labels(source=source, type=kind)

    def count_accepted(self, source: str, envelopes: Sequence[Envelope]) -> None:
        """Count events a source accepted, by type, and the fields cut to their limits."""
        traces = sum(1 for e in envelopes if isinstance(e.event, TraceEvent))
        if traces:
            self.events_received.labels(source=source, type="trace").inc(traces)
        if len(envelopes) > traces:
            self.events_received.labels(source=source, type="feedback").inc(len(envelopes) - traces)
        for path, count in Tally(p for e in envelopes for p in e.truncated).items():
            # "chunks[3].text" -> "chunks.text": the label must stay bounded.
            field = "chunks.text" if path.startswith("chunks[") else path
            self.events_truncated.labels(source=source, field=field).inc(count)
