"""The probe traffic filter's stage in the compiled core (native/src/probe.rs), held to the Python it replaced (kept
here as the definition) on generated events: the same envelopes dropped, the same counts by source."""

from __future__ import annotations

import pytest
from helpers.events import envelope
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Envelope, FeedbackEvent, TraceEvent
from ragpulse.probes.marker import PROBE_ATTRIBUTE, ProbeTrafficFilter, is_probe

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

KEYS = st.sampled_from([PROBE_ATTRIBUTE, "ragpulse.probes", "channel", "", "Ragpulse.probe"])
VALUES = st.one_of(st.none(), st.booleans(), st.text(max_size=3), st.integers(), st.dictionaries(KEYS, st.none()))


def python_filter(envelope: Envelope, counts: dict[str, int]) -> Envelope | None:
    """The Python the core replaced."""
    if is_probe(envelope):
        counts[envelope.source] = counts.get(envelope.source, 0) + 1
        return None
    return envelope


@st.composite
def envelopes(draw: st.DrawFn) -> Envelope:
    attributes = draw(st.dictionaries(KEYS, VALUES, max_size=4))
    source = draw(st.sampled_from(["http", "otlp", "kafka"]))
    if draw(st.booleans()):
        event: TraceEvent | FeedbackEvent = TraceEvent(trace_id="t", query="q", attributes=attributes)
    else:
        event = FeedbackEvent(trace_id="t", kind="thumbs", value="up", attributes=attributes)
    return envelope(event, 0, source=source)


@settings(max_examples=300, deadline=None)
@given(st.lists(envelopes(), max_size=12))
def test_the_stage_drops_and_counts_what_the_python_did(batch: list[Envelope]) -> None:
    registry = CollectorRegistry()
    stage, counts = ProbeTrafficFilter(registry), {}
    for item in batch:
        expected = python_filter(item, counts)
        assert stage.direct(item) is expected
        assert stage(item) is expected
    for source in ("http", "otlp", "kafka"):
        counted = registry.get_sample_value("ragpulse_probe_events_ingested_total", {"source": source})
        assert counted == (2 * counts[source] if source in counts else None)


def test_a_probe_event_is_dropped_and_counted_by_its_source() -> None:
    registry = CollectorRegistry()
    stage = ProbeTrafficFilter(registry)
    marked = envelope(TraceEvent(trace_id="t", query="q", attributes={PROBE_ATTRIBUTE: "run-1"}), 0, source="otlp")
    plain = envelope(TraceEvent(trace_id="u", query="q", attributes={"channel": "web"}), 0, source="otlp")
    assert (stage.direct(marked), stage.direct(plain)) == (None, plain)
    assert registry.get_sample_value("ragpulse_probe_events_ingested_total", {"source": "otlp"}) == 1.0
