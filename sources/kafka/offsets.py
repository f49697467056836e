"""The Kafka source's offset book: what is assigned, in flight, processed and committed, per partition.

Offsets have Kafka's "next offset to read" meaning. The consumer thread, the event loop (acks) and the
client's rebalance callbacks all touch the book, so every read and write goes through one condition
lock; a revoke waits on it for the batches in flight.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from ragpulse.sources.kafka.client import Partition, Record


class OffsetBook:
    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._assigned: set[Partition] = set()
        self._processed: dict[Partition, int] = {}
        self._committed: dict[Partition, int] = {}
        self._in_flight = 0
        self._newly_assigned: set[Partition] = set()
        # What this process processed, kept across reconnects: where to resume a partition.
        self._resume: dict[Partition, int] = {}
        # Of those, what left the assignment (revoked, lost, the consumer closed) processed and not committed: a
        # scrape would count events the partition's next reader counts again, so none is answered until settled.
        self._unsettled: dict[Partition, int] = {}
        self._revoke_commit: dict[Partition, int] = {}  # what a revoke is committing, for revoke_committed()

    def take_in_flight(self, records: Mapping[Partition, list[Record]]) -> dict[Partition, list[Record]]:
        """The records of partitions still assigned, counted as one batch in flight when there are any.

        Records of a partition revoked since poll returned belong to the next owner now. Counting the batch in
        flight under the same lock makes a revoke that comes later wait for it (and commit it), so no record is
        counted by two members."""
        with self._lock:
            kept = {tp: messages for tp, messages in records.items() if tp in self._assigned}
            if kept:
                self._in_flight += 1
            return kept

    def add_in_flight(self, parts: int) -> None:
        with self._lock:
            self._in_flight += parts

    def release(self, parts: int) -> None:
        """Parts never queued (shutdown): never acked, their offsets stay uncommitted for the next owner."""
        with self._lock:
            self._in_flight -= parts
            self._lock.notify_all()

    def processed_at(self, partition: Partition) -> int:
        return self._processed.get(partition, -1)

    def processed(self) -> dict[Partition, int]:
        with self._lock:
            return dict(self._processed)

    def ack_callback(self, offsets: dict[Partition, int]) -> Callable[[], None]:
        def ack() -> None:  # on the event loop, once the pipeline processed the batch
            with self._lock:
                for tp, offset in offsets.items():
                    if tp in self._assigned and offset > self._processed.get(tp, -1):
                        self._processed[tp] = offset
                self._in_flight -= 1
                self._lock.notify_all()

        return ack

    def due(self, offsets: Mapping[Partition, int]) -> dict[Partition, int]:
        """Of `offsets`, what is assigned and beyond what was committed."""
        with self._lock:
            return {tp: offset for tp, offset in offsets.items()
                    if tp in self._assigned and offset > self._committed.get(tp, -1)}

    def committed(self, offsets: Mapping[Partition, int]) -> None:
        with self._lock:
            self._committed.update(offsets)

    def due_on_revoke(self, revoked: set[Partition], wait_seconds: float) -> tuple[dict[Partition, int], float]:
        """Waits (up to `wait_seconds`) for the batches in flight, then what of `revoked` is processed and not
        committed; and how long it waited."""
        started = time.monotonic()
        with self._lock:
            self._lock.wait_for(lambda: self._in_flight == 0, wait_seconds)
            waited = time.monotonic() - started
            self._revoke_commit = {tp: offset for tp, offset in self._processed.items()
                                   if tp in revoked and offset > self._committed.get(tp, -1)}
            return dict(self._revoke_commit), waited

    def revoke_committed(self) -> None:
        """The revoke's commit went through."""
        with self._lock:
            self._committed.update(self._revoke_commit)
            self._revoke_commit = {}

    def unsettled(self) -> dict[Partition, int]:
        with self._lock:
            return dict(self._unsettled)

    def _leave(self, partition: Partition) -> None:
        """`partition` is no longer read here (the lock is held): keep its position for resuming, and as unsettled
        when it is ahead of the commit."""
        position = self._processed.pop(partition, None)
        if position is None:
            return
        self._resume[partition] = max(position, self._resume.get(partition, -1))
        if position > self._committed.get(partition, -1):
            self._unsettled[partition] = position

    def forget(self, revoked: set[Partition]) -> int:
        """Drops revoked partitions, keeping where this process got to (a consumer being closed revokes first:
        the rebuilt one resumes from there unless the group committed past it); returns how many stay assigned."""
        with self._lock:
            for tp in revoked:
                self._assigned.discard(tp)
                self._leave(tp)
                self._committed.pop(tp, None)
            self._revoke_commit = {}
            return len(self._assigned)

    def assign(self, assigned: set[Partition]) -> int:
        """Notes a new assignment (settled after poll returns); returns how many are assigned."""
        with self._lock:
            self._assigned.update(assigned)
            self._newly_assigned.update(assigned)
            return len(self._assigned)

    def owned(self) -> int:
        """How many partitions are assigned here now."""
        with self._lock:
            return len(self._assigned)

    def take_newly_assigned(self) -> set[Partition]:
        with self._lock:
            assigned, self._newly_assigned = self._newly_assigned, set()
            return assigned

    def settle(self, assigned: set[Partition], committed: Mapping[Partition, int]) -> tuple[dict[Partition, int], set[Partition]]:
        """Takes the group's committed offsets of new partitions. Returns where to resume those this process
        processed before it lost them and nobody committed past since (not counted twice; the next commit covers
        them), and the unsettled partitions that went to another member: their uncommitted events are counted
        here and by the new owner, which no scrape can undo (they are dropped from the book, to be reported)."""
        resumed = {}
        with self._lock:
            self._committed.update(committed)
            for tp in assigned:
                position = self._resume.pop(tp, None)
                self._unsettled.pop(tp, None)
                if position is not None and position > committed.get(tp, -1):
                    self._processed[tp] = resumed[tp] = position
            lost = set(self._unsettled) - self._assigned
            for tp in lost:
                del self._unsettled[tp]
        return resumed, lost

    def disconnected(self) -> None:
        """The consumer closed: keep what was processed for resuming, forget the assignment."""
        with self._lock:
            for tp in list(self._processed):
                self._leave(tp)
            self._assigned.clear()
            self._committed.clear()
            self._newly_assigned.clear()
