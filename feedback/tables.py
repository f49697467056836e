"""The feedback join's tables and what it tells the rest: the entries it holds (an answer's turn, a session), its
telemetry, and the listener interface the judge sampler, calibration and the result sinks implement."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Gauge

from ragpulse import _native
from ragpulse.collector.events import FeedbackEvent
from ragpulse.collector.telemetry.fast_metrics import CounterFamily

OUTCOMES = ("joined", "joined_after_wait", "session", "late", "orphan", "pending_full", "session_unknown", "unreferenced",
            "key_mismatch")
TABLES = ("traces", "sessions", "pending", "turns", "questions", "texts")
MAX_SIGNALS_PER_TURN = 16
MAX_TURNS_PER_SESSION = 16
# What an entry costs besides its strings (object, slots, dict slot), for the byte budgets.
TURN_BYTES = 240
SESSION_BYTES = 200
PENDING_BYTES = 256


class Uncounted:
    """What the join's replay counts with: nothing (the events were counted by the partition's previous owner)."""

    def inc(self, amount: float = 1) -> None:
        pass


UNCOUNTED = Uncounted()
# Feedback waiting for its answer: the event, the bytes it counts for, the Kafka partition it came from (-1: none),
# and whether a replay put it there (its previous owner may have counted it already: see FeedbackJoin.replay()).
Waiting = tuple[FeedbackEvent, int, int, bool]


def crossed(partition: int, other: int) -> bool:
    """Feedback and its answer came from different Kafka partitions: keyed otherwise, they meet on one replica only by
    chance (and none after a rebalance), so they never meet, on one replica as on many."""
    return partition >= 0 and other >= 0 and partition != other


class JoinMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        # Lock-free (collector/telemetry/fast_metrics.py): updated from the event loop only, per event.
        self.outcomes = CounterFamily(
            "ragpulse_feedback_joins_total",
            "Feedback by how it met its answer: joined (trace held), joined_after_wait (feedback first, trace came), "
            "session (by session id, to its last answer), late (the trace left the window), orphan (the trace never "
            "came within pending_window_seconds), pending_full (evicted while waiting), session_unknown, unreferenced "
            "(neither trace nor session id), key_mismatch (from another Kafka partition than its answer: keyed otherwise, "
            "so not joined).",
            ["outcome"], registry,
        )
        self.evicted = CounterFamily(
            "ragpulse_feedback_join_evicted_total",
            "Entries the join dropped before their window ended (caps in entries or bytes), by table: traces, "
            "sessions (their open turns get no silent accept), pending (counted as pending_full too), turns "
            "(a session past its turn cap), questions (the cache of analysed questions), texts (the chunks' texts shared "
            "by the kept events: one recurring now is held again by each event it is in).",
            ["table"], registry,
        )
        self.revoked = CounterFamily(
            "ragpulse_feedback_join_revoked_total",
            "Entries let go because their Kafka partition went to another replica (which reads them back and counts "
            "what is left to count), by table: traces, sessions, pending.",
            ["table"], registry,
        )
        self.reordered = CounterFamily(
            "ragpulse_session_reorder_total",
            "Session turns the join's reorder hold (satisfaction.reorder_seconds) dealt with out of arrival order, by "
            "outcome: reordered (classified ahead of a turn that arrived before it, as its timestamp says), late (came "
            "after a later turn of its session was classified: classified where it landed), full (let go before its "
            "hold ended: the hold was at reorder_max_entries or reorder_max_bytes).",
            ["outcome"], registry,
        )
        self.entries = Gauge("ragpulse_feedback_join_entries", "Entries held by the feedback join, by table (reorder: "
                             "session turns and feedback in the reorder hold).", ["table"], registry=registry)
        self.bytes = Gauge("ragpulse_feedback_join_bytes", "Bytes held by the feedback join (estimated), by table.",
                           ["table"], registry=registry)
        for outcome in OUTCOMES:
            self.outcomes.labels(outcome)
        for table in TABLES:
            self.evicted.labels(table)
        for table in ("traces", "sessions", "pending"):
            self.revoked.labels(table)
        for outcome in ("reordered", "late", "full"):
            self.reordered.labels(outcome)


# One answer the join holds (ragpulse._native.Turn, native/src/traces/bindings.rs), shared by the trace table and its
# session's open turns; its attributes, all readable and writable:
#   trace_id, at (its arrival, the join's clock), labels (raw label values), fallback, size (its bytes in the budgets);
#   signals (tuple of str); judgment: (sample, verdict, stage) of its first judgment, or None;
#   payload: the event while the judge sampler keeps it (feedback/kept.py's Kept), or None; payload_size: its bytes;
#   kept: the sampler has seen the trace; evidence: a signal had it queued for judging (once is enough); sampled_by:
#   the sampler's reasons; raised: priorities raised before the sampler saw the trace; open: its session holds it (its
#   signals are counted when it settles); kind: what its question is to its session's previous one (first, repeat...),
#   counted then too, or None; partition: the Kafka partition it came from (-1: another source).
Turn = _native.Turn


class Listener:
    """What the join tells the rest: overridden by whoever needs it (the defaults ignore)."""

    def negative(self, priority: str, turn: Turn) -> None:
        """A negative signal on an answer (the judge sampler)."""

    def signal_after_judgment(self, trace_id: str, signal: str) -> None:
        """A signal on an answer already judged: its record gets it (the result sinks)."""

    def signal(self, turn: Turn, signal: str) -> None:
        """Any signal on an answer (golden-set candidates)."""

    def review(self, event: FeedbackEvent) -> bool:
        """A review event (calibration); False: it waits here for its trace's judgment."""
        return True

    def review_expired(self, reason: str) -> None:
        """A waiting review was dropped: orphan or pending_full."""

    def reviews_judged(self, trace_id: str, reviews: list[FeedbackEvent]) -> None:
        """Reviews that waited for this trace's judgment, now that it is judged."""
