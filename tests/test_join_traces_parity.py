"""PARITY (removed with the Python reference): the join on the crate's trace table against the Python join it replaces
(tests/helpers/join_python.py), on generated traffic and on the snapshot's seeded streams."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import join_python
from helpers.clocks import Clock
from helpers.join_snapshot import IDS, QUESTIONS, SESSIONS, Op, outputs, streams
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.config import SatisfactionConfig
from ragpulse.feedback.satisfaction import SignalCounter

pytestmark = pytest.mark.unit


def python_join(registry: CollectorRegistry, clock: Clock, **config: Any) -> Any:
    guard = LabelGuard(("app", "route", "model", "release"), 50, 2000, CollectorRegistry())
    counter = SignalCounter(registry, guard, max_cached=8000)
    return join_python.FeedbackJoin(SatisfactionConfig(**config), registry, counter, guard, clock=clock)


def python_outputs(config: dict[str, Any], ops: list[Op]) -> list[Any]:
    return outputs(config, ops, python_join, lambda join, key: hash(key) in join._tombstones)  # noqa: SLF001


_partition = st.sampled_from((None, None, 0, 1))
_trace = st.tuples(st.just("trace"), st.sampled_from(IDS), st.sampled_from((*SESSIONS, None)),
                   st.sampled_from(QUESTIONS), st.sampled_from(("returns", "returns", "human_handoff")),
                   st.none() | st.integers(0, 7).map(float), _partition, st.booleans(), st.booleans())
_feedback = st.builds(
    lambda kind, trace, session, partition, comment: ("feedback", *kind, trace, None if trace else session, partition,
                                                      comment),
    st.sampled_from((("thumbs", "down"), ("thumbs", "up"), ("rating", 1), ("rating", 5), ("rating", 3),
                     ("copy", None), ("abandon", None), ("regenerate", None))),
    st.none() | st.sampled_from(IDS), st.sampled_from(SESSIONS), _partition, st.integers(0, 40))
_op = st.one_of(
    _trace, _trace, _feedback, _feedback,
    st.tuples(st.just("review"), st.sampled_from(IDS), _partition),
    st.tuples(st.just("clock"), st.sampled_from((0.5, 1.0, 3.0, 6.0, 20.0, 70.0, 400.0))),
    st.tuples(st.just("keep"), st.sampled_from((*IDS, "", "", "")), st.sampled_from(((), ("low",)))),
    st.tuples(st.sampled_from(("passed", "release")), st.sampled_from(IDS), st.just(())),
    st.tuples(st.sampled_from(("take", "peek")), st.sampled_from((*IDS, "", "", "")), st.just(())),
    st.tuples(st.just("judged"), st.sampled_from(IDS), st.sampled_from(("sample", "feedback")),
              st.sampled_from(("ok", "bad"))),
    st.tuples(st.just("expire")),
    st.tuples(st.just("drop"), st.frozensets(st.sampled_from((-1, 0, 1)))),
    st.tuples(st.just("replay"), st.lists(_trace | _feedback, max_size=4)),
)
_options = st.fixed_dictionaries({
    "max_traces": st.integers(1, 12), "max_bytes": st.integers(500, 6000),
    "window_seconds": st.sampled_from((5.0, 30.0, 900.0)), "pending_window_seconds": st.sampled_from((5.0, 60.0)),
    "max_pending": st.integers(1, 4), "max_pending_bytes": st.integers(400, 3000),
    "idle_seconds": st.sampled_from((10.0, 60.0, 300.0)), "max_sessions": st.integers(1, 4),
    "max_sessions_bytes": st.integers(400, 4000), "reorder_seconds": st.sampled_from((0.0, 2.0)),
    "reorder_max_entries": st.integers(1, 6)})


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_options, st.lists(_op, max_size=60))
def test_the_crate_join_does_what_the_python_one_did(config: dict[str, Any], ops: list[Op]) -> None:
    assert outputs(config, ops) == python_outputs(config, ops)


def test_the_snapshot_streams_go_the_same_in_both() -> None:
    differ = [number for number, (config, ops) in enumerate(streams())
              if outputs(config, ops) != python_outputs(config, ops)]
    assert differ == []
