"""A bounded queue of event batches, sized in events, between sources and the pipeline."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from prometheus_client import Gauge

from ragpulse.collector.errors import ShuttingDown
from ragpulse.collector.events import Envelope

Ack = Callable[[], None]


@dataclass(slots=True)
class Batch:
    envelopes: list[Envelope]
    # Called once every event of the batch went through the pipeline (at-least-once sources
    # commit their offsets from it). Batches are processed in order, so acks come in order.
    ack: Ack | None = None


class EventQueue:
    """FIFO of batches whose total size in events never exceeds `capacity`.

    `offer` is all-or-nothing and never waits (HTTP answers 429 when it fails);
    `put` waits for room (pull sources such as Kafka pause fetching meanwhile).
    Everything runs on one event loop, so a check and the state change after
    it cannot interleave with another task.
    """

    def __init__(self, name: str, capacity: int, depth_gauge: Gauge) -> None:
        self.name = name
        self.capacity = capacity
        self._batches: deque[Batch] = deque()
        self._depth = 0
        self._not_empty = asyncio.Event()
        self._has_room = asyncio.Event()
        self._closed = False
        depth_gauge.labels(queue=name).set_function(lambda: self._depth)

    @property
    def depth(self) -> int:
        return self._depth

    def has_room(self, events: int) -> bool:
        return self._depth + events <= self.capacity

    def offer(self, envelopes: list[Envelope]) -> bool:
        if self._closed or not self.has_room(len(envelopes)):
            return False
        self._append(Batch(envelopes))
        return True

    async def put(self, envelopes: list[Envelope], ack: Ack | None = None) -> None:
        """Wait for room, then append; raises ShuttingDown once the queue is closed."""
        # A batch larger than the whole capacity goes in alone, once the queue is empty.
        while self._depth and not self.has_room(len(envelopes)) and not self._closed:
            self._has_room.clear()
            await self._has_room.wait()
        if self._closed:
            raise ShuttingDown()
        self._append(Batch(envelopes, ack))

    async def get(self, max_events: int) -> Batch | None:
        """Up to `max_events` events (a larger batch is split, its ack goes with the last part);
        None once closed and empty."""
        while not self._batches:
            if self._closed:
                return None
            self._not_empty.clear()
            await self._not_empty.wait()
        batch = self._batches.popleft()
        if len(batch.envelopes) > max_events:
            self._batches.appendleft(Batch(batch.envelopes[max_events:], batch.ack))
            batch = Batch(batch.envelopes[:max_events])
        self._depth -= len(batch.envelopes)
        self._has_room.set()
        return batch

    def close(self) -> None:
        """Refuse new batches; `get` returns None once the rest is consumed."""
        self._closed = True
        self._not_empty.set()
        self._has_room.set()

    def discard_remaining(self) -> int:
        """Drop what is left (the shutdown deadline passed); returns how many events."""
        lost = self._depth
        self._batches.clear()
        self._depth = 0
        self._has_room.set()
        return lost

    def _append(self, batch: Batch) -> None:
        self._batches.append(batch)
        self._depth += len(batch.envelopes)
        self._not_empty.set()
