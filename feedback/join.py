"""The feedback join: every answer meets what users did about it, in one bounded state.

A pipeline stage that holds, for `window_seconds`, every trace it has seen (its labels, whether
it fell back, the signals it got, its judgment once judged, and for judgeable traces the
serialized event the judge sampler kept), every session's open turns, and the feedback that
came before its trace. Feedback names its answer by `trace_id`, or by `session_id` (the
session's last answer). Either may come first:

- trace first: feedback within the window is joined; after it (the trace left the window) it is
  `late`, recognised by a tombstone of the trace's id, and attributed to nothing;
- feedback first: it waits (`pending_window_seconds`) for its trace: `joined_after_wait`, or an
  `orphan` (its trace never came: another replica's, or lost upstream).

Whoever needs the join asks it: the satisfaction signals are counted here (feedback/satisfaction.py),
the judge sampler gets the negative ones (late evidence: the answer is judged), the judge workers
read a trace's signals into its judgment record and report the verdict back (the joined views),
and calibration's reviews wait here for their judgment. Each table is capped in entries and bytes;
the least recently used goes first, counted by table. A session's turns are classified in the order
they were asked, not the order they came: each waits a few seconds for earlier ones (feedback/reorder.py).
The trace table (its caps, tombstones and the events kept for the sampler), the answers' record, Turn, and the
sessions (their open turns, caps, settling and what a turn is to the one before, native/src/questions.rs) are in the
compiled core (native/src/traces.rs, native/src/sessions.rs); waiting feedback and the counting are here.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from prometheus_client import CollectorRegistry

from ragpulse import _native
from ragpulse.collector.events import Envelope, FeedbackEvent, TraceEvent
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.config import SatisfactionConfig
from ragpulse.feedback.kept import Kept, KeptEvents, unpack
from ragpulse.feedback.reorder import reorder_hold
from ragpulse.feedback.satisfaction import NEGATIVE, PRIORITY_OF, SignalCounter, explicit_signal, rating_of
from ragpulse.scorers.text import analyser
from ragpulse.feedback.tables import (MAX_SIGNALS_PER_TURN, MAX_TURNS_PER_SESSION, OUTCOMES, PENDING_BYTES,
                                      SESSION_BYTES, TABLES, TURN_BYTES, UNCOUNTED, JoinMetrics, Listener, Turn, Waiting,
                                      crossed)

_EXPIRY_STEP_SECONDS = 0.05


class FeedbackJoin:
    """Pipeline stage (before the judge sampler), and the store the sampler and the judge use."""

    def __init__(self, options: SatisfactionConfig, registry: CollectorRegistry, counter: SignalCounter,
                 guard: LabelGuard, clock: Callable[[], float] = time.monotonic) -> None:
        self._options = options
        self._max_traces, self._max_bytes = options.max_traces, options.max_bytes
        self._escalation_routes = frozenset(options.escalation_routes)
        self._turn_counts = counter.turn_counters
        self._metrics = metrics = JoinMetrics(registry)
        self._counter = counter
        self._clock = clock
        # trace id -> (arrival of the first, [(waiting feedback, its bytes, its partition)])
        self._pending: OrderedDict[str, tuple[float, list[Waiting]]] = OrderedDict()
        self.listeners: list[Listener] = []
        self.pending_bytes = 0
        self.pending_reviews = 0
        self._replaying = False  # replay(): state is rebuilt, nothing counted
        self._outcome = {outcome: metrics.outcomes.labels(outcome) for outcome in OUTCOMES}
        self._evicted = {table: metrics.evicted.labels(table) for table in TABLES}
        # The sessions, their open turns and caps, in the compiled core (native/src/sessions.rs); what it counts comes
        # back through _signal and _close (an answer closed without a signal and no silent accept to count is closed
        # there, its kind counted in _turn_counts, as _close counts it). It classifies a session's turns (first, repeat,
        # rephrase, follow_up, new_topic: feedback/satisfaction.py) with the analyses of recent questions, cached there
        # (capped, counted).
        self._sessions = _native.SessionTable(
            options.max_sessions, options.max_sessions_bytes, SESSION_BYTES, MAX_TURNS_PER_SESSION, options.idle_seconds,
            options.rephrase_window_seconds, self._escalation_routes, self._evicted["sessions"], self._evicted["turns"],
            analyser(), options.question_cache_entries, options.question_cache_max_bytes, options.rephrase_similarity,
            self._evicted["questions"], self._signal, self._close, kinds=self._turn_counts)
        # A session's turns in the order they were asked (feedback/reorder.py); None: as they arrive.
        self._reorder = (reorder_hold(options, metrics, self._sessions.turn, self._session_feedback)
                         if options.reorder_seconds > 0 else None)
        # The answers by trace id, their caps and tombstones, in the compiled core (native/src/traces.rs).
        self._traces = _native.TraceTable(self._max_traces, self._max_bytes, TURN_BYTES, self._evicted["traces"])
        # The kept events' form, their chunks' texts held once (feedback/kept.py).
        self._kept = KeptEvents(self._evicted["texts"])
        # The stage and a trace's way in (its answer, its turn), in the compiled core (native/src/join.rs).
        self._core = _native.JoinCore(
            TraceEvent, self._traces, self._sessions, self._reorder, list(guard.names), self._escalation_routes,
            counter.answered_labels, self._pending, clock=clock, expire=self.expire, feedback=self._feedback,
            answered=counter.answered, met=self._met)
        self.direct = self._core.process  # what the pipeline's loop calls (collector/pipeline.py)
        for table, entries, held in (("traces", lambda: len(self._traces), lambda: self.traces_bytes),
                                     ("sessions", lambda: len(self._sessions), lambda: self.sessions_bytes),
                                     ("pending", lambda: len(self._pending), lambda: self.pending_bytes),
                                     ("texts", lambda: len(self._kept), lambda: self._kept.bytes)):
            metrics.entries.labels(table=table).set_function(entries)
            metrics.bytes.labels(table=table).set_function(held)

    @property
    def traces_bytes(self) -> int:
        return self._traces.bytes

    @property
    def sessions_bytes(self) -> int:
        return self._sessions.bytes

    # -- the stage ---------------------------------------------------------------------------------

    def __call__(self, envelope: Envelope) -> Envelope:
        """Ends what is over once every 50 ms (not a walk of three tables per event), then meets the trace or the
        feedback (native/src/join.rs)."""
        return self._core.process(envelope)

    def expire(self, now: float | None = None) -> None:
        """Ends what is over: traces past the window, waiting feedback past its wait, sessions gone idle
        (their unsignalled answers are silently accepted). Also called on a timer, for quiet streams."""
        now = self._clock() if now is None else now
        self._core.next_expiry = now + _EXPIRY_STEP_SECONDS
        if self._reorder is not None:  # first: a turn held until now may keep its session from going idle
            self._reorder.expire(now)
        self._traces.expire(now, self._options.window_seconds)
        pending, wait = self._pending, self._options.pending_window_seconds
        while pending:
            arrived = next(iter(pending.values()))[0]
            if now - arrived < wait:
                break
            self._drop_pending(pending.popitem(last=False)[1][1], "orphan")
        self._sessions.expire(now)

    def drop_partitions(self, partitions: frozenset[int]) -> None:
        """Kafka partitions went to another replica: their answers, sessions and waiting feedback leave this replica,
        counted as entries only. Their new owner reads them back (replay) and counts what is still to count (a session's
        signals as it settles, waiting feedback as it meets its answer), so counting any of it here would count it twice."""
        if self._reorder is not None:  # their held turns first: the judge hears of their rephrases, as it would have
            self._reorder.flush(partitions)
        revoked = self._metrics.revoked
        revoked.labels("traces").inc(self._traces.revoke(partitions))
        revoked.labels("sessions").inc(self._sessions.revoke(partitions))
        left = 0
        for trace_id, (arrived, waiting) in list(self._pending.items()):
            kept = [item for item in waiting if item[2] not in partitions]  # keyed otherwise, items may differ
            for event, size, _, _ in (item for item in waiting if item[2] in partitions):
                left += 1
                self.pending_bytes -= size
                if event.kind == "review":  # reviews are not read back: this is their one count
                    self.pending_reviews -= 1
                    for listener in self.listeners:
                        listener.review_expired("revoked")
            if not kept:
                del self._pending[trace_id]
            elif len(kept) < len(waiting):
                self._pending[trace_id] = (arrived, kept)
        revoked.labels("pending").inc(left)

    def replay(self, events: list[tuple[Envelope, bool]]) -> None:
        """Events of Kafka partitions this replica was just given, read back from before their committed offsets (with
        whether each trace is a fallback): their previous owner counted them, so they rebuild the join's state here
        (answers, sessions, signals so far, waiting feedback) without counting anything or telling a listener; what
        comes next is counted as if this replica had seen it all. A session's answers are counted when they settle,
        here; their previous owner counted none of it (it lets go of a partition's entries uncounted). Replayed
        feedback whose answer was not read back waits for it as usual and is counted if it comes, but not when it
        never does (orphan, pending_full): its answer may be older than the read-back and the feedback counted."""
        outcome, listeners = self._outcome, self.listeners
        self._outcome, self.listeners, self._replaying = dict.fromkeys(outcome, UNCOUNTED), [], True
        self._sessions.counting = False  # its quiet closes, which _close does not see
        try:
            now, seen = self._clock(), set()
            for envelope, fallback in events:
                if envelope.identity in seen:
                    continue  # a duplicate the previous owner's dedup window dropped
                seen.add(envelope.identity)
                event = envelope.event
                partition = -1 if envelope.partition is None else envelope.partition
                if isinstance(event, FeedbackEvent):
                    self._feedback(event, now, partition)
                elif event.trace_id not in self._traces:
                    self._core.trace(event, fallback, now, partition)
            if self._reorder is not None:  # the sessions rebuilt in the order their turns were asked
                self._reorder.flush({-1 if e.partition is None else e.partition for e, _ in events})
        finally:
            self._outcome, self.listeners, self._replaying = outcome, listeners, False
            self._sessions.counting = True

    # -- traces and sessions -----------------------------------------------------------------------

    def _met(self, trace_id: str, entry: tuple[float, list[Waiting]], turn: Turn, partition: int) -> None:
        """Feedback that waited for this trace (its entry in the pending table) meets its answer."""
        # Reviews go on waiting, for the judgment (the judge is asynchronous); the rest meet their answer.
        reviews = [item for item in entry[1] if item[0].kind == "review"]
        if reviews:
            self._pending[trace_id] = (entry[0], reviews)
        else:
            del self._pending[trace_id]
        for feedback, size, feedback_partition, _ in entry[1]:
            if feedback.kind != "review":
                self.pending_bytes -= size
                if crossed(feedback_partition, partition):
                    self._outcome["key_mismatch"].inc()
                    continue
                self._outcome["joined_after_wait"].inc()
                self._apply(turn, feedback)

    def _close(self, turn: Turn, settled: bool) -> None:
        """The answer leaves its session: its signals, and what its question was to the one before, are counted now.
        Settled (the session moved on or went idle), no signal at all on a real answer is a silent accept; evicted
        (caps), silence says nothing.

        Counted here and not as they came, so that every answer of a session is counted at the same delay
        whatever its signal: a rephrase comes in seconds, a silent accept only after idle_seconds, and
        counting each as it came biased the proxy low wherever answers were recent (a new app, a rise in
        traffic, the first idle_seconds after a start)."""
        turn.open = False
        if self._replaying:
            return  # closed as its previous owner closed it, and counted there
        if turn.kind is not None:
            self._turn_counts[turn.kind].inc()
        count = self._counter.count
        for signal in turn.signals:
            count(turn.labels, turn.fallback, signal)
        if settled and not turn.signals and not turn.fallback:
            self._signal(turn, "silent_accept")

    # -- feedback ----------------------------------------------------------------------------------

    def _feedback(self, event: FeedbackEvent, now: float, partition: int) -> None:
        if event.kind == "review":
            handled = all([listener.review(event) for listener in self.listeners])  # every listener hears it
            if not handled and event.trace_id:
                self._hold(event.trace_id, event, now, partition)
            return
        if explicit_signal(event) is None and rating_of(event) is None:
            return  # a rating of 3 with nothing else to say is counted by the fast path only
        trace_id = event.trace_id
        if trace_id:
            turn = self._traces.get(trace_id)
            if turn is not None and crossed(partition, turn.partition):
                self._outcome["key_mismatch"].inc()
            elif turn is not None:
                self._outcome["joined"].inc()
                self._apply(turn, event)
            elif self._traces.buried(trace_id):
                self._outcome["late"].inc()
            else:
                self._hold(trace_id, event, now, partition)
            return
        session_id = event.session_id
        if session_id and self._reorder is not None and self._reorder.holds(session_id):  # about the turns held: after them
            self._reorder.feedback(session_id, partition, len(event.comment or ""), now, (session_id, event, partition))
        else:
            self._session_feedback(session_id, event, partition)

    def _session_feedback(self, session_id: str | None, event: FeedbackEvent, partition: int) -> None:
        last = self._sessions.last(session_id) if session_id else None
        if last is not None and crossed(partition, last[1]):
            self._outcome["key_mismatch"].inc()
        elif last is not None:
            self._outcome["session"].inc()
            self._apply(last[0], event)
        else:
            self._outcome["session_unknown" if session_id else "unreferenced"].inc()

    def _apply(self, turn: Turn, event: FeedbackEvent) -> None:
        rating = rating_of(event)
        if rating is not None and not self._replaying:
            self._counter.rating(turn.labels, rating)
        signal = explicit_signal(event)
        if signal is not None:
            self._signal(turn, signal)

    def _signal(self, turn: Turn, signal: str) -> None:
        if len(turn.signals) < MAX_SIGNALS_PER_TURN:
            turn.signals = (*turn.signals, signal)
            if not turn.open and not self._replaying:
                self._counter.count(turn.labels, turn.fallback, signal)
        elif not self._replaying:  # beyond what a turn holds: counted at once (a session's answer with this many is rare)
            self._counter.count(turn.labels, turn.fallback, signal)
        for listener in self.listeners:
            listener.signal(turn, signal)
        if turn.judgment is not None and not self._replaying:
            sample, verdict, stage = turn.judgment
            self._counter.judged(turn.labels, signal, sample, verdict, stage)
            for listener in self.listeners:
                listener.signal_after_judgment(turn.trace_id, signal)
        if signal in NEGATIVE:
            priority = PRIORITY_OF[signal]
            for listener in self.listeners:
                listener.negative(priority, turn)

    def _hold(self, trace_id: str, event: FeedbackEvent, now: float, partition: int) -> None:
        size = PENDING_BYTES + len(trace_id) + 4 * len(event.comment or "")
        entry = self._pending.get(trace_id)
        if entry is None:
            self._pending[trace_id] = (now, [(event, size, partition, self._replaying)])
        elif len(entry[1]) < MAX_SIGNALS_PER_TURN:
            entry[1].append((event, size, partition, self._replaying))
        else:
            self._drop_pending([(event, 0, partition, self._replaying)], "pending_full")
            return
        self.pending_bytes += size
        if event.kind == "review":
            self.pending_reviews += 1
        options = self._options
        while len(self._pending) > options.max_pending or self.pending_bytes > options.max_pending_bytes:
            self._drop_pending(self._pending.popitem(last=False)[1][1], "pending_full")
            self._evicted["pending"].inc()

    def _drop_pending(self, waiting: list[Waiting], reason: str) -> None:
        for event, size, _, replayed in waiting:
            self.pending_bytes -= size
            if event.kind == "review":
                self.pending_reviews -= 1
                for listener in self.listeners:
                    listener.review_expired(reason)
            elif not replayed:  # a replayed one's answer may have met it on the previous owner, before the read-back
                self._outcome[reason].inc()

    # -- for the judge sampler and the judge workers ----------------------------------------------

    def keep(self, event: TraceEvent, fallback: bool, sampled_by: tuple[str, ...]) -> Turn | None:
        """The sampler saw this (judgeable) trace: keep it, without its attributes and its chunks' texts held once
        (feedback/kept.py), for late signals (None: the trace left already). The turn's `raised` are the priorities
        that signals raised before it got here (feedback that came first). The sampler's core keeps through the table
        itself (`kept_in`)."""
        return self._traces.keep_event(event, sampled_by, self._kept.pack)

    @property
    def kept_in(self) -> tuple[_native.TraceTable, Callable[[TraceEvent], tuple[Kept, int]]]:
        """Where keep() keeps a trace's event, and how: the judge sampler's core keeps there directly."""
        return self._traces, self._kept.pack

    def passed(self, trace_id: str) -> None:
        """The sampler saw this trace and did not keep it (nothing to judge it against)."""
        self._traces.passed(trace_id)

    def peek(self, turn: Turn) -> TraceEvent | None:
        """The kept event of an answer, left where it is (None when it was not kept or is gone)."""
        return None if turn.payload is None else unpack(turn.payload)

    def take(self, turn: Turn) -> tuple[TraceEvent, int] | None:
        """The kept event of an answer a late signal is about, and its size (once: it is evidence now)."""
        taken = self.take_kept(turn)
        return None if taken is None else (unpack(taken[0]), taken[1])

    def take_kept(self, turn: Turn) -> tuple[Kept, int] | None:
        """As take, the event still packed (feedback/kept.py `unpack` makes it): the sampler unpacks it only when the
        judge queue has room for it."""
        return self._traces.take(turn)

    def judged(self, trace_id: str, sample: str, verdict: str, stage: str) -> list[str]:
        """The judge's verdict on a trace: signals so far meet it (the joined views), later ones will.
        Returns the trace's signals, for its judgment record."""
        turn = self._traces.get(trace_id)
        signals: list[str] = []
        if turn is not None:
            signals = list(turn.signals)
            # The views count an answer once, against its sample's judgment when it was sampled (a complaint
            # about a sampled answer has it judged again as evidence: that one waits for the sample's).
            if turn.judgment is None and not (sample == "feedback" and turn.sampled_by):
                turn.judgment = (sample, verdict, stage)
                for signal in signals:
                    self._counter.judged(turn.labels, signal, sample, verdict, stage)
        return signals

    def release_reviews(self, trace_id: str) -> None:
        """Reviews that waited for this trace's judgment go to calibration, now that it is recorded."""
        entry = self._pending.get(trace_id)
        if entry is not None:
            reviews = [item for item in entry[1] if item[0].kind == "review"]
            if reviews:
                rest = [item for item in entry[1] if item[0].kind != "review"]
                if rest:
                    self._pending[trace_id] = (entry[0], rest)
                else:
                    del self._pending[trace_id]
                self.pending_reviews -= len(reviews)
                self.pending_bytes -= sum(item[1] for item in reviews)
                for listener in self.listeners:
                    listener.reviews_judged(trace_id, [item[0] for item in reviews])
