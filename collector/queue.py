"""A bounded queue of event batches, sized in events and in bytes, between sources and the pipeline."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter

from prometheus_client import CollectorRegistry, Gauge

from ragpulse.collector.events import Envelope
from ragpulse.collector.telemetry.shared import shared
from ragpulse.errors import ShuttingDown

Ack = Callable[[], None]


@dataclass(slots=True)
class Batch:
    envelopes: list[Envelope]
    # Called once every event of the batch went through the pipeline (at-least-once sources
    # commit their offsets from it). Batches are processed in order, so acks come in order.
    ack: Ack | None = None


class QueueMetrics:
    """The gauges of the queues between sources and the pipeline, by queue name: one set per registry (`shared`)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.depth = Gauge("ragpulse_queue_depth_events", "Events waiting in a queue.", ["queue"], registry=registry)
        self.depth_bytes = Gauge("ragpulse_queue_depth_bytes", "Bytes of the events waiting in a queue (their encoded size).",
                                 ["queue"], registry=registry)
        self.capacity = Gauge("ragpulse_queue_capacity_events", "Capacity of a queue in events.", ["queue"], registry=registry)
        self.capacity_bytes = Gauge("ragpulse_queue_capacity_bytes", "Capacity of a queue in bytes.", ["queue"],
                                    registry=registry)


_size = attrgetter("size")


def batch_bytes(envelopes: list[Envelope]) -> int:
    return sum(map(_size, envelopes))


class EventQueue:
    """FIFO of batches whose total size never exceeds `capacity` events nor `capacity_bytes` bytes.

    `offer` is all-or-nothing and never waits (HTTP answers 429 when it fails);
    `put` waits for room (pull sources such as Kafka pause fetching meanwhile).
    Everything runs on one event loop, so a check and the state change after
    it cannot interleave with another task.
    """

    def __init__(self, name: str, capacity: int, capacity_bytes: int, registry: CollectorRegistry) -> None:
        metrics = shared(registry, QueueMetrics)
        self.name = name
        self.capacity = capacity
        self.capacity_bytes = capacity_bytes
        self._batches: deque[Batch] = deque()
        self._depth = 0
        self._bytes = 0
        self._not_empty = asyncio.Event()
        self._has_room = asyncio.Event()
        self._closed = False
        metrics.depth.labels(queue=name).set_function(lambda: self._depth)
        metrics.depth_bytes.labels(queue=name).set_function(lambda: self._bytes)
        metrics.capacity.labels(queue=name).set(capacity)
        metrics.capacity_bytes.labels(queue=name).set(capacity_bytes)

    @property
    def depth(self) -> int:
        return self._depth

    @property
    def full(self) -> bool:
        return self._depth >= self.capacity or self._bytes >= self.capacity_bytes

    def has_room(self, events: int, size: int = 0) -> bool:
        return self._depth + events <= self.capacity and self._bytes + size <= self.capacity_bytes

    def offer(self, envelopes: list[Envelope]) -> bool:
        size = batch_bytes(envelopes)
        if self._closed or not self.has_room(len(envelopes), size):
            return False
        self._append(Batch(envelopes), size)
        return True

    async def put(self, envelopes: list[Envelope], ack: Ack | None = None) -> None:
        """Wait for room, then append; raises ShuttingDown once the queue is closed."""
        size = batch_bytes(envelopes)
        # A batch larger than the whole capacity goes in alone, once the queue is empty.
        while self._depth and not self.has_room(len(envelopes), size) and not self._closed:
            self._has_room.clear()
            await self._has_room.wait()
        if self._closed:
            raise ShuttingDown()
        self._append(Batch(envelopes, ack), size)

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
            # A batch's ack covers all of it: sources that ack (Kafka) hand batches of at most
            # max_events, so that what a scrape exports is always what their acks commit.
            self._batches.appendleft(Batch(batch.envelopes[max_events:], batch.ack))
            batch = Batch(batch.envelopes[:max_events])
        self._depth -= len(batch.envelopes)
        self._bytes -= batch_bytes(batch.envelopes)
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
        self._depth = self._bytes = 0
        self._has_room.set()
        return lost

    def _append(self, batch: Batch, size: int) -> None:
        self._batches.append(batch)
        self._depth += len(batch.envelopes)
        self._bytes += size
        self._not_empty.set()
