"""A session's turns in the order they were asked, not the order they arrived: a short, bounded hold.

The two tiers of docs/scaling-out.md forward each trace as its own replica finishes assembling it, so two turns of a
session a second apart can reach the analysing replica in the wrong order; classified as they came, a repeat of a
question became its original and a follow-up went unseen. So the feedback join hands each turn of a session to this
hold (what the classification needs: route, question and the answer's turn, not the event), with the event's own
timestamp. An entry waits `satisfaction.reorder_seconds` from its arrival for earlier turns still on their way, then
goes back to the join together with every entry of its session that sorts before it, in timestamp order (arrival
order for equal timestamps). Feedback addressed to a session (no trace id) while turns of it are held waits behind
them: it is about the session's last answer so far, and it sorts after the turns held when it came, not by its own
timestamp, which may be the time it reached a replica rather than the app's clock.

Bounded in entries and bytes (`reorder_max_entries`, `reorder_max_bytes`): past either, the oldest entry goes back at
once with what sorts before it, counted as `full`. A turn that arrives after a later turn of its session went back
(later than the hold, or after a `full`) is classified where it lands, counted as `late` (the join keeps the last
timestamp that went back with the session, in its session table). Turns the hold put
before one that arrived earlier are counted as `reordered`. Traces without a session never come here: the fast path
pays nothing for the hold (a session's turn about 4 µs, measured on the join alone: docs/satisfaction.md).

The hold is in the compiled core (native/src/reorder.rs, held to this module's former Python by
tests/test_native_reorder.py's snapshot); here it is wired to the join's metrics.
"""

from __future__ import annotations

from collections.abc import Callable

from ragpulse import _native
from ragpulse.config import SatisfactionConfig
from ragpulse.feedback.tables import JoinMetrics


def reorder_hold(options: SatisfactionConfig, metrics: JoinMetrics, on_turn: Callable[..., None],
                 on_feedback: Callable[..., None]) -> _native.ReorderHold:
    """The hold in the compiled core (native/src/reorder.rs), its counters and gauges on the join's metrics."""
    hold = _native.ReorderHold(options.reorder_seconds, options.reorder_max_entries, options.reorder_max_bytes, on_turn,
                               on_feedback, *(metrics.reordered.labels(outcome) for outcome in ("reordered", "late", "full")))
    metrics.entries.labels(table="reorder").set_function(lambda: hold.entries)
    metrics.bytes.labels(table="reorder").set_function(lambda: hold.bytes)
    return hold
