"""The feedback join on the compiled core's trace table (native/src/traces.rs): what it does is held by a snapshot taken
when it was shown equal to the Python join it replaced (tests/helpers/join_snapshot.py says how it was shown and how to
rewrite it after a deliberate change); on generated traffic the table keeps its caps in entries and bytes, its bytes
are its turns' sizes, and what it evicted is counted; its turns stay out of the garbage collector."""

from __future__ import annotations

import gc
import json

import pytest
from helpers.clocks import Clock
from helpers.events import envelope, feedback_join
from helpers.join_snapshot import (IDS, SEED, SNAPSHOT, STREAMS, Op, Recorder, apply, digest, feedback_op, outputs,
                                   streams, trace_op)
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import TraceEvent

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


def test_the_join_does_what_it_did_when_parity_was_shown() -> None:
    stored = json.loads(SNAPSHOT.read_text())
    drawn = streams()
    assert (stored["seed"], stored["streams"], len(stored["digests"])) == (SEED, STREAMS, len(drawn))
    changed = [number for number, (stream, expected) in enumerate(zip(drawn, stored["digests"], strict=True))
               if digest(*stream) != expected]
    assert not changed, (f"{len(changed)} of {len(drawn)} streams went otherwise ({changed[:20]}); the first, its "
                         f"outputs after each operation:\n{drawn[changed[0]]!r}\n{outputs(*drawn[changed[0]])}\n"
                         "after a deliberate change: PYTHONPATH=tests python -m helpers.join_snapshot --write")


_op = st.one_of(
    st.randoms(use_true_random=False).map(trace_op), st.randoms(use_true_random=False).map(feedback_op),
    st.tuples(st.just("clock"), st.sampled_from((1.0, 20.0, 400.0))),
    st.tuples(st.sampled_from(("keep", "take")), st.sampled_from((*IDS, "")), st.just(("low",))),
    st.tuples(st.just("drop"), st.frozensets(st.sampled_from((-1, 0, 1)))),
)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 12), st.integers(300, 6000), st.lists(_op, max_size=60))
def test_the_trace_table_keeps_its_caps_and_counts_what_it_evicts(max_traces: int, max_bytes: int,
                                                                  ops: list[Op]) -> None:
    clock, registry, recorder = Clock(0.0), CollectorRegistry(), Recorder()
    # Nothing leaves by its window here: what leaves is evicted or revoked, and counted.
    join = feedback_join(registry, clock, max_traces=max_traces, max_bytes=max_bytes, window_seconds=1e9)
    join.listeners.append(recorder)
    table, sent, fresh = join._traces, {}, 0  # noqa: SLF001
    for number, op in enumerate(ops):
        fresh += op[0] == "trace" and op[1] not in table
        apply(join, recorder, clock, sent, op, number)
        turns = [table[trace_id] for trace_id in table]
        assert len(turns) <= max_traces and join.traces_bytes <= max_bytes and table.tombstones <= max_traces
        assert join.traces_bytes == sum(turn.size for turn in turns)
        assert all(turn.size == 240 + len(turn.trace_id) + turn.payload_size
                   and (turn.payload is None) == (turn.payload_size == 0) for turn in turns)
    left = [registry.get_sample_value(f"ragpulse_feedback_join_{name}_total", {"table": "traces"})
            for name in ("evicted", "revoked")]
    assert fresh == len(table) + sum(left)  # type: ignore[arg-type]


def test_turns_and_tuples_of_them_stay_out_of_the_garbage_collector() -> None:
    """As the msgspec struct (gc=False) they replaced: tracked, tens of thousands of them and every tuple holding one
    (a session's turns, the reorder hold's entries) made each of the collector's passes walk them all."""
    join = feedback_join(CollectorRegistry(), reorder_seconds=0.0)
    join(envelope(TraceEvent(trace_id="t1", query="q", answer="a", session_id="s", app="shop")))
    turn = join._traces["t1"]  # noqa: SLF001
    held = join._sessions["s"].turns  # noqa: SLF001
    gc.collect()
    assert held == (turn,) and not gc.is_tracked(turn) and not gc.is_tracked(held)
