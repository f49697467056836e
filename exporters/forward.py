"""The forwarding role's exporter: assembled, checked events published to a Kafka topic for the analysing replicas.

The two-tier way of docs/scaling-out.md: replicas behind the Collector's trace-id load balancing assemble traces
and forward them, keyed by session id (else trace id), so that a consumer group of analysing replicas gets each
session whole on one replica (its feedback join, sampler and judge). Nothing here counts, joins or judges: a
forwarded event is counted once, by the replica that analyses it.

The pipeline hands events over on the event loop; a thread of its own sends them and waits for the broker's
acknowledgement (acks=all) a batch at a time. What waits is capped in count and bytes, also while the broker is
away; past a cap an event is dropped and counted. A batch the broker did not acknowledge is sent again after a
back-off: at least once (a message of it may arrive twice; the analysing replicas' dedup window drops the second).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

import msgspec
import structlog
from prometheus_client import CollectorRegistry, Counter, Gauge

from ragpulse.collector.events import Envelope, Event, TraceEvent
from ragpulse.config import ForwardConfig

FLUSH_TIMEOUT_SECONDS = 10.0
RETRY_BACKOFF_MAX_SECONDS = 10.0

log = structlog.get_logger("ragpulse.forward")


class Producer(Protocol):
    """What the forwarder needs of a Kafka producer (the Kafka source's client backends make one; the wiring
    hands the factory over, as exporters know no source)."""

    def send(self, topic: str, value: bytes, key: bytes | None, headers: list[tuple[str, bytes]]) -> None: ...

    def flush(self, timeout_s: float) -> None:
        """Until every message sent is acknowledged; raises when one was not."""

    def close(self) -> None: ...


class ForwardMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.sent = Counter("ragpulse_forward_sent_total",
                            "Events published to forward.topic and acknowledged by the broker, by type.",
                            ["type"], registry=registry)
        self.dropped = Counter("ragpulse_forward_dropped_total",
                               "Events not forwarded, by reason: queue_full (forward.max_queue_events or max_queue_bytes, "
                               "e.g. while the broker is away), too_large (encoded past limits.max_event_bytes, which the "
                               "analysing replicas would refuse), shutdown (still unacknowledged at the shutdown timeout).",
                               ["reason"], registry=registry)
        self.send_failures = Counter("ragpulse_forward_send_failures_total",
                                     "Batches the broker did not acknowledge; each is sent again after a back-off.",
                                     registry=registry)
        self.queued = Gauge("ragpulse_forward_queued_events", "Events waiting for the broker's acknowledgement.",
                            registry=registry)
        self.queued_bytes = Gauge("ragpulse_forward_queued_bytes", "Bytes of the events waiting for the broker.",
                                  registry=registry)
        for kind in ("trace", "feedback"):
            self.sent.labels(type=kind)
        for reason in ("queue_full", "too_large", "shutdown"):
            self.dropped.labels(reason=reason)


def as_contract(event: Event) -> Event:
    """The event as the v1 contract carries it: decoding made its timestamps epoch seconds, the contract's
    numbers are epoch milliseconds."""
    replace = msgspec.structs.replace
    if isinstance(event, TraceEvent) and event.chunks and any(chunk.updated_at is not None for chunk in event.chunks):
        event = replace(event, chunks=[chunk if chunk.updated_at is None else replace(chunk, updated_at=_ms(chunk.updated_at))
                                       for chunk in event.chunks])
    return event if event.timestamp is None else replace(event, timestamp=_ms(event.timestamp))


def _ms(seconds: float | datetime) -> float:
    return (seconds.timestamp() if isinstance(seconds, datetime) else seconds) * 1000.0


def partition_key(event: Event) -> bytes | None:
    """The key that puts a session's answers and its feedback on one partition: the session id, else the trace id."""
    key = event.session_id or event.trace_id
    return key.encode() if key else None


class KafkaForwarder:
    """A pipeline exporter (called on the event loop) with a sending thread behind a bounded queue."""

    def __init__(self, config: ForwardConfig, producer: Callable[[], Producer], registry: CollectorRegistry, *,
                 max_message_bytes: int) -> None:
        assert config.topic is not None
        # An event assembled from spans may encode past what the analysers' decoder takes (limits.max_event_bytes):
        # sent, it would stop at their dead letters; retried, at the broker's message size, forever.
        self._max_message_bytes = max_message_bytes
        self._topic = config.topic
        self._max_events = config.max_queue_events
        self._max_bytes = config.max_queue_bytes
        self._batch_events = config.batch_events
        self._shutdown_timeout = config.shutdown_timeout_seconds
        self._new_producer = producer
        self._metrics = ForwardMetrics(registry)
        self._encode = msgspec.json.Encoder().encode
        self._waiting: deque[tuple[str, bytes | None, bytes]] = deque()
        self._held_events = 0  # waiting, plus the batch being sent: what the caps count
        self._held_bytes = 0
        self._lock = threading.Condition()
        self._stopping = False
        self._abandoned = False  # shutdown's timeout passed: what is held was counted as dropped
        self._problem: str | None = None
        self._thread = threading.Thread(target=self._run, name="ragpulse-forward", daemon=True)

    def __call__(self, envelope: Envelope) -> None:
        event = envelope.event
        value = self._encode(as_contract(event))
        if len(value) > self._max_message_bytes:
            self._metrics.dropped.labels(reason="too_large").inc()
            return
        with self._lock:
            if self._held_events >= self._max_events or self._held_bytes + len(value) > self._max_bytes:
                self._metrics.dropped.labels(reason="queue_full").inc()
                return
            kind = "trace" if isinstance(event, TraceEvent) else "feedback"
            self._waiting.append((kind, partition_key(event), value))
            self._hold(1, len(value))
            self._lock.notify()

    def not_ready_reason(self) -> str | None:
        return self._problem

    async def start(self) -> None:
        self._thread.start()

    async def shutdown(self) -> None:
        """Sends what waits, for at most forward.shutdown_timeout_seconds; what is left is counted as dropped."""
        with self._lock:
            self._stopping = True
            self._lock.notify()
        await asyncio.to_thread(self._thread.join, self._shutdown_timeout)
        with self._lock:
            self._abandoned = True
            left, self._held_events = self._held_events, 0
            self._waiting.clear()
            self._hold(0, -self._held_bytes)
        if left:
            self._metrics.dropped.labels(reason="shutdown").inc(left)
            log.warning("forwarding stopped with events unacknowledged", dropped=left)

    def _hold(self, events: int, size: int) -> None:
        self._held_events += events
        self._held_bytes += size
        self._metrics.queued.set(self._held_events)
        self._metrics.queued_bytes.set(self._held_bytes)

    def _next_batch(self) -> list[tuple[str, bytes | None, bytes]] | None:
        with self._lock:
            while not self._waiting and not self._stopping:
                self._lock.wait()
            if not self._waiting:
                return None  # stopping, and everything is acknowledged
            count = min(self._batch_events, len(self._waiting))
            return [self._waiting.popleft() for _ in range(count)]

    def _run(self) -> None:
        producer: Producer | None = None
        backoff = 0.5
        while (batch := self._next_batch()) is not None:
            while True:
                try:
                    producer = producer or self._new_producer()
                    for _, key, value in batch:
                        producer.send(self._topic, value, key, [])
                    producer.flush(FLUSH_TIMEOUT_SECONDS)
                    break
                except Exception as exc:  # noqa: BLE001 - any failure of the client (ClientError or its library's) is retried
                    self._failed(f"{type(exc).__name__}: {exc}", backoff)
                    producer = self._close(producer)
                    if self._stopping_now(backoff):
                        return
                    backoff = min(backoff * 2, RETRY_BACKOFF_MAX_SECONDS)
            backoff = 0.5
            self._delivered(batch)
        self._close(producer)

    def _failed(self, error: str, backoff: float) -> None:
        self._metrics.send_failures.inc()
        if self._problem is None:
            log.warning("forwarding to kafka failed, sending again", topic=self._topic, error=error, retry_in_s=backoff)
        self._problem = f"forward: kafka topic {self._topic} does not take events: {error}"[:300]

    def _stopping_now(self, backoff: float) -> bool:
        """Waits out the back-off; whether shutdown came meanwhile (what is held is then dropped by shutdown)."""
        deadline = time.monotonic() + backoff
        with self._lock:
            while not self._stopping and (left := deadline - time.monotonic()) > 0:
                self._lock.wait(left)
            return self._stopping

    def _delivered(self, batch: list[tuple[str, bytes | None, bytes]]) -> None:
        if self._problem is not None:
            log.info("forwarding to kafka works again", topic=self._topic)
            self._problem = None
        traces = sum(kind == "trace" for kind, _, _ in batch)
        with self._lock:  # one step with shutdown's: an abandoned batch is counted dropped there, never also sent
            if self._abandoned:
                return
            self._metrics.sent.labels(type="trace").inc(traces)
            self._metrics.sent.labels(type="feedback").inc(len(batch) - traces)
            self._hold(-len(batch), -sum(len(value) for _, _, value in batch))

    @staticmethod
    def _close(producer: Producer | None) -> None:
        """Closes `producer` when there is one; returns None, the producer to use next (a new one)."""
        if producer is not None:
            try:
                producer.close()
            except Exception as exc:  # noqa: BLE001 - a producer that cannot close is dropped all the same
                log.warning("closing the forwarding producer failed", error=f"{type(exc).__name__}: {exc}")
        return None
