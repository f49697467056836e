"""A Kafka sink of judgment records: one JSON message per judgment, keyed by trace id.

Runs on the result writer's thread (results/writer.py). The producer is made at the first
record and again after a failure, so a broker that is down at start only costs the records
written meanwhile, each counted as a sink error.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec
from kafka import KafkaProducer
from kafka.errors import KafkaError

from ragpulse.judging import Record, Select, judgments_only

CLOSE_SECONDS = 5.0


class KafkaResultsSink:
    def __init__(self, topic: str, settings: dict[str, Any], select: Select = judgments_only) -> None:
        self._select = select
        self._topic = topic
        self._settings = settings
        self._producer: KafkaProducer | None = None
        self._encode = msgspec.json.Encoder().encode

    def __call__(self, record: Record) -> None:
        message = self._select(record)
        if message is None:
            return
        try:
            if self._producer is None:
                # max_block_ms bounds how long send() may wait for metadata or buffer space.
                self._producer = KafkaProducer(acks="all", linger_ms=50, max_block_ms=2000, **self._settings)
            self._producer.send(self._topic, key=record.trace_id.encode(), value=self._encode(message))
        except KafkaError as exc:
            self.close()
            raise OSError(f"kafka results topic {self._topic}: {exc}") from exc

    def close(self) -> None:
        """Flushes and closes within CLOSE_SECONDS in all: a broker that is away holds a stop no longer."""
        if self._producer is not None:
            producer, self._producer = self._producer, None
            deadline = time.monotonic() + CLOSE_SECONDS
            try:
                producer.flush(timeout=CLOSE_SECONDS)  # a timeout raises: the writer logs the sink's failed close
            finally:
                producer.close(timeout=max(0.0, deadline - time.monotonic()))
