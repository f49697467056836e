"""The raw label values the pipeline's loop reads once for an envelope's components (native/src/series.rs `raw_labels`):
they are the values of the event each component is given. A stage that swaps the envelope's event has the next ones read
the new event's labels, and an event sent again after its labels changed is read anew (the memo holds for one
envelope, for the event object itself)."""

from __future__ import annotations

import msgspec
import pytest
from helpers.events import envelope
from prometheus_client import CollectorRegistry

from ragpulse.app.service import Service
from ragpulse.collector.events import Envelope, TraceEvent
from ragpulse.config import Config, parse_config

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


def service() -> Service:
    data = msgspec.to_builtins(Config())
    data["results"]["sqlite_path"] = None
    return Service(parse_config(data), CollectorRegistry())


def trace(trace_id: str, app: str) -> TraceEvent:
    return TraceEvent(trace_id=trace_id, query="q", answer="a", app=app, session_id="s")


def counted(service: Service, app: str) -> float | None:
    samples = [sample for metric in service.registry.collect() if metric.name == "ragpulse_traces"
               for sample in metric.samples if sample.name == "ragpulse_traces_total"]
    return sum(sample.value for sample in samples if sample.labels.get("app") == app) or None


def test_the_components_after_a_stage_that_swaps_the_event_read_the_new_events_labels() -> None:
    running = service()
    pipeline = running.pipeline

    def swap(item: Envelope) -> Envelope:
        item.event = trace(item.event.trace_id + "-b", "swapped")  # type: ignore[union-attr]
        return item

    at = [name for name, _ in pipeline._stages].index("feedback_join")  # noqa: SLF001
    pipeline._stages.insert(at, ("swap", swap))  # noqa: SLF001 - after the stages before the join read the labels
    pipeline.process([envelope(trace("t1", "first"))])
    assert (counted(running, "first"), counted(running, "swapped")) == (None, 1.0)


def test_an_event_whose_labels_changed_is_read_anew() -> None:
    running = service()
    event = trace("t2", "before")
    running.pipeline.process([envelope(event, 1)])
    event.app = "after"
    running.pipeline.process([envelope(event, 2)])
    assert (counted(running, "before"), counted(running, "after")) == (1.0, 1.0)
