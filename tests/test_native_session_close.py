"""An answer leaving its session without a signal and with no silent accept to count (evicted by the caps, or a
fallback) is closed by the session table itself (native/src/sessions.rs `close_turn`), its kind counted where the join's
_close counts it. Held on generated streams to the join whose every close goes back through _close, as all did before:
the same returns, listener calls, tables, turns and registry after every operation (replays included)."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any
from unittest import mock

import pytest
from helpers.clocks import Clock
from helpers.events import envelope, feedback_join
from helpers.join_snapshot import operation, options, outputs
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from ragpulse import _native
from ragpulse.collector.events import TraceEvent
from ragpulse.feedback import join as join_module
from ragpulse.feedback.join import FeedbackJoin

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

TOPICS = ("Apples", "Boots", "Canada", "Delivery", "Earrings", "Furniture", "Gardening", "Hats", "Insurance", "Jackets",
          "Kettles", "Lamps", "Mattresses", "Notebooks", "Ovens", "Pillows", "Quilts")


def closing_in_python(registry: Any, clock: Any, **config: Any) -> Any:
    """A join whose session table counts no kind itself: none is in its `kinds`, so every close goes to _close."""
    def table(*args: Any, kinds: dict[str, Any]) -> Any:
        return _native.SessionTable(*args, kinds={})

    with mock.patch.object(join_module, "_native", SimpleNamespace(**{**vars(_native), "SessionTable": table})):
        return feedback_join(registry, clock, **config)


def test_the_join_closes_quiet_answers_in_the_crate() -> None:
    """A session of 17 answers to unrelated questions: the 17th evicts the first (16 turns a session), whose kind is
    counted without a trip through _close."""
    closed: list[str] = []
    close = FeedbackJoin._close  # noqa: SLF001

    def recorded(join: FeedbackJoin, turn: Any, settled: bool) -> None:
        closed.append(turn.trace_id)
        close(join, turn, settled)

    registry = CollectorRegistry()
    with mock.patch.object(FeedbackJoin, "_close", recorded):
        join = feedback_join(registry, Clock(0.0), reorder_seconds=0.0)
    for number, topic in enumerate(TOPICS):
        join(envelope(TraceEvent(trace_id=f"t{number}", query=f"{topic}?", answer="a", session_id="s")))
    assert closed == []
    assert [registry.get_sample_value("ragpulse_session_turns_total", {"kind": kind})
            for kind in ("first", "new_topic")] == [1.0, 0.0]
    assert [join._traces[f"t{number}"].open for number in range(17)] == [False] + [True] * 16  # noqa: SLF001


@settings(max_examples=400, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(0, 60))
def test_quiet_closes_in_the_crate_do_what_the_join_did(rnd: random.Random, length: int) -> None:
    config, ops = options(rnd), [operation(rnd) for _ in range(length)]
    assert outputs(config, ops) == outputs(config, ops, make=closing_in_python)
