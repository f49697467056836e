"""The compiled core's reorder hold (native/src/reorder.rs): what it does is held by a snapshot taken when it was shown
equal to the Python it replaced (tests/helpers/reorder_snapshot.py says how it was shown and how to rewrite it after a
deliberate change); on generated operations it gives every entry back exactly once, in its session's timestamp order,
and holds what its entries and bytes say."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.reorder_snapshot import SEED, SEQUENCES, SESSIONS, SNAPSHOT, Op, apply, digest, outputs, sequences
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from ragpulse.config import SatisfactionConfig
from ragpulse.feedback.reorder import reorder_hold
from ragpulse.feedback.tables import JoinMetrics

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


def test_the_hold_does_what_it_did_when_parity_was_shown() -> None:
    stored = json.loads(SNAPSHOT.read_text())
    drawn = sequences()
    assert (stored["seed"], stored["sequences"], len(stored["digests"])) == (SEED, SEQUENCES, len(drawn))
    changed = [sequence for sequence, expected in zip(drawn, stored["digests"], strict=True) if digest(*sequence) != expected]
    assert not changed, (f"{len(changed)} of {len(drawn)} sequences went otherwise; the first:\n"
                         + "\n".join(f"{sequence!r}: {outputs(*sequence)}" for sequence in changed[:3])
                         + "\nafter a deliberate change: PYTHONPATH=tests python -m helpers.reorder_snapshot --write")


_op = st.one_of(
    st.tuples(st.just("turn"), st.sampled_from(SESSIONS), st.none() | st.integers(0, 8).map(float),
              st.integers(-1, 2), st.integers(0, 300), st.sampled_from((0.0, 0.5, 3.0))),
    st.tuples(st.just("feedback"), st.sampled_from(SESSIONS), st.integers(-1, 2), st.integers(0, 300), st.just(0.0)),
    st.tuples(st.just("expire"), st.sampled_from((0.0, 1.0, 6.0))),
    st.tuples(st.just("flush"), st.frozensets(st.integers(-1, 2))),
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from((0.5, 5.0)), st.integers(1, 8), st.integers(300, 3000), st.lists(_op, max_size=40))
def test_every_entry_goes_back_once_and_the_caps_hold(seconds: float, entries: int, held_bytes: int,
                                                       ops: list[Op]) -> None:
    metrics = JoinMetrics(CollectorRegistry())
    back: list[tuple[Any, ...]] = []
    config = SatisfactionConfig(reorder_seconds=seconds, reorder_max_entries=entries, reorder_max_bytes=held_bytes)
    hold = reorder_hold(config, metrics, lambda *args: back.append(args), lambda *args: back.append(args))
    now, added = 0.0, []
    for seq, op in enumerate(ops, 1):
        if op[0] == "turn" or (op[0] == "feedback" and hold.holds(op[1])):
            added.append((op[1], seq if op[0] == "turn" else -seq))
        now = apply(hold, op, now, seq)
        assert hold.entries <= entries and 300 * hold.entries <= hold.bytes <= held_bytes
        assert hold.entries == len(added) - len(back)
    hold.expire(now + seconds)
    assert (hold.entries, hold.bytes, [hold.holds(s) for s in SESSIONS]) == (0, 0, [False] * 4)
    assert sorted(back) == sorted(added)
