"""Kafka: the real broker scripts/test starts (scripts/kafka.sh), and what the tests do with it."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

KAFKA_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "kafka.sh"
# The client libraries a Kafka test runs on (kafka.client); conftest's kafka_client fixture gives one a run.
KAFKA_CLIENTS = ("kafka-python", "confluent-kafka")
# kafka_args with the client given: what conftest's `kafka_args` fixture is.
KafkaArgs = Callable[..., list[str]]


def kafka_bootstrap() -> str:
    bootstrap = os.environ.get("KAFKA_BOOTSTRAP")
    if not bootstrap:
        raise AssertionError("KAFKA_BOOTSTRAP is not set: run the suite with scripts/test, which starts the broker")
    return bootstrap


def create_topic(name: str, partitions: int = 1) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap())
    try:
        admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])
    finally:
        admin.close()


def produce(topic: str, values: list[bytes], keys: list[bytes | None] | None = None) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap(), acks="all", linger_ms=5)
    try:
        for i, value in enumerate(values):
            producer.send(topic, value=value, key=keys[i] if keys else None)
        producer.flush(timeout=30)
    finally:
        producer.close()


def consume_all(topic: str, count: int, timeout: float = 30.0) -> list[Any]:
    """Read `count` messages from the start of every partition of `topic` (no group)."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(topic, bootstrap_servers=kafka_bootstrap(), auto_offset_reset="earliest",
                             enable_auto_commit=False, group_id=None)
    messages: list[Any] = []
    deadline = time.monotonic() + timeout
    try:
        while len(messages) < count and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=200).values():
                messages.extend(batch)
        # Anything beyond `count` would be a defect too: read a little longer.
        for batch in consumer.poll(timeout_ms=500).values():
            messages.extend(batch)
    finally:
        consumer.close()
    return messages


def kafka_args(topic: str, group: str, dead_letters: str | None = None, *, client: str = KAFKA_CLIENTS[0],
               **options: object) -> list[str]:
    """--set flags that point `ragpulse run` at the test broker through the `client` library; `options` are more
    kafka.* options. A test run once per client takes conftest's `kafka_args` fixture, which passes its client."""
    args = ["--set", f"kafka.bootstrap_servers={kafka_bootstrap()}", "--set", f"kafka.group_id={group}",
            "--set", f"kafka.client={client}",
            "--set", f"kafka.topics=[{{name: {topic}}}]",
            "--set", f"kafka.dead_letter_topic={dead_letters or topic + '-dlq'}"]
    for name, value in options.items():
        args += ["--set", f"kafka.{name}={value}"]
    return args


def kafka_control(command: str) -> None:
    subprocess.run([str(KAFKA_SCRIPT), command], check=True, capture_output=True, timeout=180)
