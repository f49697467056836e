"""The feedback join's session table in the compiled core (native/src/sessions.rs): what the join does is held by the
join's snapshot (tests/test_native_traces.py, taken before the sessions moved and unchanged by it); here, on generated
traffic, the table keeps its caps in sessions and bytes, its bytes are its sessions' sizes, and what it evicted or
revoked is counted."""

from __future__ import annotations

import pytest
from helpers.clocks import Clock
from helpers.join_snapshot import Op, Recorder, apply, feedback_op, trace_op
from helpers.events import feedback_join
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

_op = st.one_of(
    st.randoms(use_true_random=False).map(trace_op), st.randoms(use_true_random=False).map(feedback_op),
    st.tuples(st.just("clock"), st.sampled_from((1.0, 20.0, 400.0))), st.just(("expire",)),
    st.tuples(st.just("drop"), st.frozensets(st.sampled_from((-1, 0, 1)))),
)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4), st.integers(300, 3000), st.lists(_op, max_size=60))
def test_the_session_table_keeps_its_caps_and_counts_what_it_evicts(max_sessions: int, max_bytes: int,
                                                                    ops: list[Op]) -> None:
    clock, registry, recorder = Clock(0.0), CollectorRegistry(), Recorder()
    join = feedback_join(registry, clock, max_sessions=max_sessions, max_sessions_bytes=max_bytes, idle_seconds=1e9,
                         reorder_seconds=0.0)
    join.listeners.append(recorder)
    table, sent, fresh = join._sessions, {}, 0  # noqa: SLF001
    for number, op in enumerate(ops):
        # A new session: a turn of one not held that is not a handoff (a handoff opens none).
        fresh += op[0] == "trace" and op[2] is not None and op[4] != "human_handoff" and op[2] not in dict(table.items())
        apply(join, recorder, clock, sent, op, number)
        sessions = [session for _, session in table.items()]
        assert len(sessions) <= max_sessions and join.sessions_bytes <= max_bytes
        assert join.sessions_bytes == sum(session.size for session in sessions)
        assert all(len(session.turns) <= 16 and all(turn.open for turn in session.turns) for session in sessions)
    left = [registry.get_sample_value(f"ragpulse_feedback_join_{name}_total", {"table": "sessions"})
            for name in ("evicted", "revoked")]
    assert fresh == len(table) + sum(left)  # type: ignore[arg-type]
