"""A bounded queue of event batches, sized in events, between sources and the pipeline."""

from __future__ import annotations

import asyncio
from collections import deque

from prometheus_client import Gauge

from ragpulse.collector.events import Envelope


class EventQueue:
    """FIFO of batches whose total size in events never exceeds `capacity`.

    `offer` is all-or-nothing and never waits (HTTP answers 503 when it fails);
    `put` waits for room (pull sources such as Kafka stop fetching meanwhile).
    Everything runs on one event loop, so a check and the state change after
    it cannot interleave with another task.
    """

    def __init__(self, name: str, capacity: int, depth_gauge: Gauge) -> None:
        self.name = name
        self.capacity = capacity
        self._batches: deque[list[Envelope]] = deque()
        self._depth = 0
        self._not_empty = asyncio.Event()
        self._has_room = asyncio.Event()
        self._closed = False
        depth_gauge.labels(queue=name).set_function(lambda: self._depth)

    @property
    def depth(self) -> int:
        return self._depth

    def offer(self, batch: list[Envelope]) -> bool:
        if self._closed or self._depth + len(batch) > self.capacity:
            return False
        self._append(batch)
        return True

    async def put(self, batch: list[Envelope]) -> None:
        # A batch larger than the whole capacity goes in alone, once the queue is empty.
        while self._depth and self._depth + len(batch) > self.capacity:
            self._has_room.clear()
            await self._has_room.wait()
        self._append(batch)

    async def get(self, max_events: int) -> list[Envelope] | None:
        """Up to `max_events` events (a larger batch is split); None once closed and empty."""
        while not self._depth:
            if self._closed:
                return None
            self._not_empty.clear()
            await self._not_empty.wait()
        batch = self._batches.popleft()
        if len(batch) > max_events:
            self._batches.appendleft(batch[max_events:])
            batch = batch[:max_events]
        self._depth -= len(batch)
        self._has_room.set()
        return batch

    def close(self) -> None:
        """Refuse new batches; `get` returns None once the rest is consumed."""
        self._closed = True
        self._not_empty.set()

    def discard_remaining(self) -> int:
        """Drop what is left (the shutdown deadline passed); returns how many events."""
        lost = self._depth
        self._batches.clear()
        self._depth = 0
        self._has_room.set()
        return lost

    def _append(self, batch: list[Envelope]) -> None:
        self._batches.append(batch)
        self._depth += len(batch)
        self._not_empty.set()
