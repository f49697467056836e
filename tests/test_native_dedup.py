"""The dedup window and its stage in the compiled core (native/src/dedup.rs), held to the Python they replaced (kept
here as the definition: an OrderedDict of identity -> expiry) on generated identities and clock steps: the same
answers, the same window (identities and expiries, in order), the same evictions and duplicates counted."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest
from helpers.clocks import Clock
from helpers.events import envelope
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from ragpulse.collector.dedup import DedupStage, DedupWindow
from ragpulse.collector.events import FeedbackEvent, TraceEvent

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


def python_seen_before(expiry: OrderedDict[Any, float], key: Any, now: float, window: float, max_entries: int) -> int:
    """The Python the core replaced: 1 seen, 0 remembered, -1 remembered with the oldest evicted."""
    if key in expiry:
        if expiry[key] > now:
            return 1
        del expiry[key]
    while expiry:
        oldest = next(iter(expiry))
        if expiry[oldest] > now:
            break
        del expiry[oldest]
    evicted = len(expiry) >= max_entries
    if evicted:
        expiry.popitem(last=False)
    expiry[key] = now + window
    return -1 if evicted else 0


_steps = st.lists(st.tuples(st.sampled_from((0, 1, 2, 3, 4, 5, -(2**63), 2**63 - 1)), st.sampled_from((0.0, 0.5, 1.0, 7.0))),
                  max_size=40)


@settings(max_examples=2000, deadline=None)
@given(_steps, st.integers(1, 5), st.sampled_from((1.0, 2.0, 10.0)))
def test_the_window_and_its_stage_are_the_pythons(steps: list[tuple[Any, float]], max_entries: int,
                                                   window: float) -> None:
    clock, registry = Clock(), CollectorRegistry()
    dedup = DedupWindow(max_entries, window, registry, clock=clock)
    stage = DedupStage(dedup, registry)
    expected: OrderedDict[Any, float] = OrderedDict()
    evicted = 0
    duplicates = {"trace": 0, "feedback": 0}
    for n, (key, step) in enumerate(steps):
        clock.now += step
        answer = python_seen_before(expected, key, clock(), window, max_entries)
        evicted += answer == -1
        if n % 2:  # the stage, half the time: on an envelope of that identity
            kind = "trace" if n % 4 == 1 else "feedback"
            event = TraceEvent(trace_id="t", query="q", answer="a") if kind == "trace" else FeedbackEvent(kind="copy")
            passed = stage(envelope(event, identity=key))  # type: ignore[arg-type]
            assert (passed is None) == (answer == 1)
            duplicates[kind] += answer == 1
        else:
            assert dedup.seen_before(key) == (answer == 1)
        assert dedup.items() == list(expected.items())
        assert len(dedup) == len(expected)
    assert registry.get_sample_value("ragpulse_dedup_evicted_total") == evicted
    assert {kind: registry.get_sample_value("ragpulse_events_duplicate_total", {"type": kind})
            for kind in duplicates} == duplicates
