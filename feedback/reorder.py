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
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Sequence
from typing import Any

import msgspec

from ragpulse import _native
from ragpulse.config import SatisfactionConfig
from ragpulse.feedback.tables import JoinMetrics

# An entry besides its text's characters (4 bytes each at most): the entry, its arguments back to the join, a list
# and a deque slot.
ENTRY_BYTES = 300
TURN, FEEDBACK = 0, 1  # what an entry is: which of the join's callbacks it goes back through


def reorder_hold(options: SatisfactionConfig, metrics: JoinMetrics, on_turn: Callable[..., None],
                 on_feedback: Callable[..., None]) -> _native.ReorderHold:
    """The hold in the compiled core (native/src/reorder.rs), its counters and gauges on the join's metrics."""
    hold = _native.ReorderHold(options.reorder_seconds, options.reorder_max_entries, options.reorder_max_bytes, on_turn,
                               on_feedback, *(metrics.reordered.labels(outcome) for outcome in ("reordered", "late", "full")))
    metrics.entries.labels(table="reorder").set_function(lambda: hold.entries)
    metrics.bytes.labels(table="reorder").set_function(lambda: hold.bytes)
    return hold


class Held(msgspec.Struct, gc=False):
    """Not tracked by the garbage collector (gc=False: strings, numbers and the join's gc=False turns only), so the
    thousands held cost the collector's passes nothing: with a callback object each, the hold cost a turn 4 us more."""

    key: float
    seq: int
    session_id: str
    partition: int
    size: int
    deadline: float
    kind: int  # TURN or FEEDBACK
    args: tuple[Any, ...] | None  # the callback's arguments; None once it went back


class ReorderHold:
    def __init__(self, options: SatisfactionConfig, metrics: JoinMetrics, on_turn: Callable[..., None],
                 on_feedback: Callable[..., None]) -> None:
        """`on_turn(*args)` and `on_feedback(*args)`: what the join does with an entry when it goes back."""
        self._back = (on_turn, on_feedback)
        self._seconds, self._max_entries, self._max_bytes = (options.reorder_seconds, options.reorder_max_entries,
                                                             options.reorder_max_bytes)
        self._sessions: dict[str, list[Held]] = {}  # each session's entries, in (timestamp, arrival) order
        self._arrivals: deque[Held] = deque()  # every entry in arrival order: their deadlines come in this order
        self._seq = 0
        self.entries = self.bytes = 0
        self._outcomes = {outcome: metrics.reordered.labels(outcome) for outcome in ("reordered", "late", "full")}
        metrics.entries.labels(table="reorder").set_function(lambda: self.entries)
        metrics.bytes.labels(table="reorder").set_function(lambda: self.bytes)

    def holds(self, session_id: str) -> bool:
        return session_id in self._sessions

    def turn(self, session_id: str, timestamp: float | None, partition: int, chars: int, now: float,
             args: tuple[Any, ...]) -> None:
        """A turn of the session (a question of `chars` characters), asked at `timestamp` (the event's own, epoch
        seconds; None only while turns of the session are held: it goes after them, in arrival order)."""
        if timestamp is None:
            timestamp = self._sessions[session_id][-1].key
        self._add(session_id, timestamp, partition, ENTRY_BYTES + 4 * chars, now, TURN, args)

    def late(self) -> None:
        """A turn came after a later turn of its session went back: the join classifies it where it lands."""
        self._outcomes["late"].inc()

    def feedback(self, session_id: str, partition: int, chars: int, now: float, args: tuple[Any, ...]) -> None:
        """Feedback on the session's last answer while turns of it are held (holds() is true): it goes after them."""
        self._add(session_id, self._sessions[session_id][-1].key, partition, ENTRY_BYTES + 4 * chars, now, FEEDBACK,
                  args)

    def _add(self, session_id: str, key: float, partition: int, size: int, now: float, kind: int,
             args: tuple[Any, ...]) -> None:
        self._seq += 1
        entry = Held(key, self._seq, session_id, partition, size, now + self._seconds, kind, args)
        held = self._sessions.get(session_id)
        if held is None:  # most turns: the session holds nothing else
            self._sessions[session_id] = [entry]
        else:
            at = len(held)
            while at and held[at - 1].key > key:  # sessions hold few entries, and most come in order
                at -= 1
            held.insert(at, entry)
        self._arrivals.append(entry)
        self.entries += 1
        self.bytes += size
        while self.entries > self._max_entries or self.bytes > self._max_bytes:
            oldest = self._arrivals.popleft()
            if oldest.args is not None:
                self._outcomes["full"].inc(self._through(oldest))

    def expire(self, now: float) -> None:
        """Every entry whose hold is over goes back, with what sorts before it in its session."""
        arrivals = self._arrivals
        while arrivals and arrivals[0].deadline <= now:
            entry = arrivals.popleft()
            if entry.args is not None:
                self._through(entry)

    def flush(self, partitions: Collection[int]) -> None:
        """The sessions of these Kafka partitions go back whole, now (they leave this replica, or were replayed)."""
        for held in [held for held in self._sessions.values() if held[0].partition in partitions]:
            self._through(held[-1])

    def _through(self, entry: Held) -> int:
        """Releases `entry` and every entry of its session before it, in order; returns how many."""
        session_id = entry.session_id
        held = self._sessions[session_id]
        going: Sequence[Held]
        if held[0] is entry:  # in order: most of the time
            going = (entry,)
            del held[0]
        else:
            at = held.index(entry) + 1
            going = held[:at]
            del held[:at]
            earliest = entry.seq
            for before in reversed(going[:-1]):  # classified ahead of an entry that arrived before it
                if before.seq > earliest:
                    self._outcomes["reordered"].inc()
                earliest = min(earliest, before.seq)
        if not held:
            del self._sessions[session_id]
        back = self._back
        for released in going:
            args, released.args = released.args, None  # its deadline may come later: it holds nothing then
            self.entries -= 1
            self.bytes -= released.size
            assert args is not None
            back[released.kind](*args)
        return len(going)
