"""A bounded hand-over from the event loop to a worker thread (the result writer's sinks, the embedding model),
capped in items and in bytes.

offer() never blocks: past either cap it says no, and the caller counts the drop. What the thread took stays
counted in bytes until it releases it (written, embedded, or failed), so the cap covers what is being worked on too.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

Item = TypeVar("Item")


class Handover(Generic[Item]):
    def __init__(self, capacity: int, max_bytes: int) -> None:
        self._queue: queue.Queue[tuple[Item, int] | None] = queue.Queue(capacity)
        self._max_bytes = max_bytes
        self._lock = threading.Lock()  # offer() adds on the event loop, release() takes away on the thread
        self.bytes = 0

    def offer(self, item: Item, size: int) -> bool:
        """Queued, or False when it would pass either cap."""
        with self._lock:
            if self.bytes + size > self._max_bytes:
                return False
            self.bytes += size
        try:
            self._queue.put_nowait((item, size))
        except queue.Full:
            self.release(size)
            return False
        return True

    def release(self, size: int) -> None:
        with self._lock:
            self.bytes -= size

    def qsize(self) -> int:
        return self._queue.qsize()

    def end(self, timeout: float) -> bool:
        """After what is queued, take() says the end; False when no room came within `timeout` (a thread stuck
        in a sink or a model: what is queued is abandoned with it)."""
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:
            return False
        return True

    def take(self, limit: int) -> tuple[list[tuple[Item, int]], bool]:
        """Up to `limit` items with their sizes, waiting for the first; and whether the end came."""
        taken: list[tuple[Item, int]] = []
        queued = self._queue.get()
        while queued is not None:
            taken.append(queued)
            if len(taken) >= limit:
                break
            try:
                queued = self._queue.get_nowait()
            except queue.Empty:
                break
        return taken, queued is None

    def serve(self, limit: int, work: Callable[[list[Item]], None]) -> None:
        """The worker thread's loop, until the end: up to `limit` items at a time to `work`, their bytes released
        after it, done or failed."""
        ended = False
        while not ended:
            taken, ended = self.take(limit)
            if taken:
                try:
                    work([item for item, _ in taken])
                finally:
                    self.release(sum(size for _, size in taken))

    def close(self, thread: threading.Thread, timeout: float) -> bool:
        """Ends the hand-over and waits, within `timeout` in all, for `thread` to finish what is queued; False when
        the end could not even be queued (the thread stuck behind a full queue)."""
        deadline = time.monotonic() + timeout
        if not self.end(timeout):
            return False
        thread.join(max(0.0, deadline - time.monotonic()))
        return True
