"""The reorder hold in the crate (native/src/reorder.rs) against the Python one it replaces (feedback/reorder.py's
ReorderHold), on generated operations and on generated traffic through the whole join: the same entries back in the
same order, the same counters, entries and bytes after every step."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.clocks import Clock
from helpers.events import envelope, feedback_join
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import FeedbackEvent, TraceEvent
from ragpulse.config import SatisfactionConfig
from ragpulse.feedback.reorder import ReorderHold, reorder_hold
from ragpulse.feedback.tables import JoinMetrics, Listener, Turn

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

SESSIONS = ("s0", "s1", "s2", "s3")
OUTCOMES = ("reordered", "late", "full")
_op = st.one_of(
    st.tuples(st.just("turn"), st.sampled_from(SESSIONS), st.none() | st.integers(0, 8).map(float),
              st.integers(-1, 2), st.integers(0, 300), st.sampled_from((0.0, 0.0, 0.5, 1.0, 3.0))),
    st.tuples(st.just("feedback"), st.sampled_from(SESSIONS), st.integers(-1, 2), st.integers(0, 300),
              st.sampled_from((0.0, 0.5))),
    st.tuples(st.just("expire"), st.sampled_from((0.0, 0.5, 1.0, 2.0, 6.0))),
    st.tuples(st.just("flush"), st.frozensets(st.integers(-1, 2))),
    st.tuples(st.just("late")),
)


def holds(seconds: float, entries: int, held_bytes: int) -> tuple[Any, Any, list[list[Any]], list[JoinMetrics]]:
    options = SatisfactionConfig(reorder_seconds=seconds, reorder_max_entries=entries, reorder_max_bytes=held_bytes)
    calls: list[list[Any]] = [[], []]
    metrics = [JoinMetrics(CollectorRegistry()) for _ in range(2)]
    made = []
    for maker, seen, metric in zip((ReorderHold, reorder_hold), calls, metrics, strict=True):
        made.append(maker(options, metric, lambda *args, seen=seen: seen.append(("turn", *args)),
                          lambda *args, seen=seen: seen.append(("feedback", *args))))
    return made[0], made[1], calls, metrics


def state(hold: Any, metrics: JoinMetrics) -> tuple[Any, ...]:
    return (hold.entries, hold.bytes, [hold.holds(s) for s in SESSIONS],
            [metrics.reordered.labels(o).value for o in OUTCOMES])


@settings(max_examples=3000, deadline=None)
@given(st.sampled_from((0.5, 2.0, 5.0)), st.integers(1, 8), st.integers(300, 3000), st.lists(_op, max_size=40))
def test_the_hold_gives_back_what_the_python_one_gave(seconds: float, entries: int, held_bytes: int,
                                                     ops: list[tuple[Any, ...]]) -> None:
    python, native, calls, metrics = holds(seconds, entries, held_bytes)
    now, seq = 0.0, 0
    for op in ops:
        seq += 1
        for hold in (python, native):
            if op[0] == "turn":
                _, session, timestamp, partition, chars, step = op
                if timestamp is None and not hold.holds(session):
                    timestamp = 4.0
                hold.turn(session, timestamp, partition, chars, now + step, (session, seq))
            elif op[0] == "feedback":
                _, session, partition, chars, step = op
                if hold.holds(session):
                    hold.feedback(session, partition, chars, now + step, (session, -seq))
            elif op[0] == "expire":
                hold.expire(now + op[1])
            elif op[0] == "flush":
                hold.flush(op[1])
            else:
                hold.late()
        now += op[-1] if op[0] in ("turn", "feedback", "expire") else 0.0
        assert calls[1] == calls[0]
        assert state(native, metrics[1]) == state(python, metrics[0])


class Recorder(Listener):
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def negative(self, priority: str, turn: Turn) -> None:
        self.calls.append(("negative", priority, turn.trace_id))

    def signal(self, turn: Turn, signal: str) -> None:
        self.calls.append(("signal", turn.trace_id, signal, turn.kind))


QUESTIONS = ("How do I return shoes?", "How can I return my shoes?", "And for boots?", "Do you ship to Canada?",
             "How do I return shoes?")
_trace = st.tuples(st.just("trace"), st.integers(0, 30), st.sampled_from(SESSIONS[:2]) | st.none(),
                   st.sampled_from(QUESTIONS), st.sampled_from(("returns", "returns", "human_handoff")),
                   st.none() | st.integers(0, 12).map(float), st.none() | st.integers(0, 1))
_traffic = st.lists(st.one_of(
    _trace, _trace, _trace,
    st.tuples(st.just("feedback"), st.sampled_from(SESSIONS[:2]), st.sampled_from(("thumbs", "copy", "abandon")),
              st.none() | st.integers(0, 1)),
    st.tuples(st.just("clock"), st.sampled_from((0.5, 0.5, 1.0, 1.0, 3.0, 6.0, 70.0, 400.0))),
    st.tuples(st.just("drop"), st.frozensets(st.integers(-1, 2))),
), max_size=60)


def samples(registry: CollectorRegistry) -> dict[tuple[Any, ...], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for m in registry.collect() for s in m.samples}


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from((2.0, 5.0)), st.integers(1, 6), _traffic)
def test_the_join_counts_with_the_hold_as_with_the_python_one(seconds: float, entries: int,
                                                              traffic: list[tuple[Any, ...]]) -> None:
    clock = Clock(0.0)
    joins, registries, recorders = [], [], []
    for python in (True, False):
        registry = CollectorRegistry()
        join = feedback_join(registry, clock, reorder_seconds=seconds, reorder_max_entries=entries, idle_seconds=60.0)
        if python:
            join._reorder = ReorderHold(join._options, join._metrics, join._turn, join._session_feedback)  # noqa: SLF001
        recorder = Recorder()
        join.listeners.append(recorder)
        joins.append(join)
        registries.append(registry)
        recorders.append(recorder)
    for number, item in enumerate(traffic):
        if item[0] == "clock":
            clock.now += item[1]
            continue
        for join in joins:
            if item[0] == "trace":
                _, trace, session, query, route, timestamp, partition = item
                join(envelope(TraceEvent(trace_id=f"t{trace}", query=query, answer="a", session_id=session, app="shop",
                                         route=route, timestamp=timestamp), partition=partition))
            elif item[0] == "feedback":
                _, session, kind, partition = item
                value = "down" if kind == "thumbs" else None
                join(envelope(FeedbackEvent(kind=kind, session_id=session, value=value, feedback_id=str(number)),
                              partition=partition))
            else:
                join.drop_partitions(item[1])
        assert recorders[1].calls == recorders[0].calls
    clock.now += 1000
    for join in joins:
        join.expire()
    assert recorders[1].calls == recorders[0].calls
    assert samples(registries[1]) == samples(registries[0])
