"""Kafka -> metrics: one `ragpulse run` process against a bare kafka-python consume loop, same topic, same run.

    scripts/kafka.sh start   # then
    KAFKA_BOOTSTRAP=127.0.0.1:PORT python bench/bench_kafka.py [--events 200000] [--partitions 4]

SCRAPE_EVERY (seconds, default 0.2) sets the scraper's period; BENCH_RAGPULSE_ARGS adds flags to
`ragpulse run` (e.g. "--set kafka.max_poll_records=500").

The bare loop polls and touches every message value, nothing else; ragpulse decodes,
validates, dedups, detects fallbacks, updates metrics and commits at each scrape. The
clock stops when every record is consumed (bare) or processed (ragpulse, read from /metrics).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

from common import free_port, processed_total, sized_events
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic


def produce(bootstrap: str, topic: str, payload: list[bytes], partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=20, batch_size=256 * 1024, acks=1)
    for i, value in enumerate(payload):
        producer.send(topic, value=value, key=str(i % 97).encode())
    producer.flush()
    producer.close()


def bare_loop(bootstrap: str, topic: str, count: int) -> float:
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"bare-{uuid.uuid4().hex[:6]}",
                             auto_offset_reset="earliest", enable_auto_commit=False, max_poll_records=500)
    seen = size = 0
    started = time.perf_counter()
    while seen < count:
        for messages in consumer.poll(timeout_ms=200).values():
            for message in messages:
                size += len(message.value)
            seen += len(messages)
    elapsed = time.perf_counter() - started
    consumer.close(autocommit=False)
    return elapsed


SCRAPE_EVERY = float(os.environ.get("SCRAPE_EVERY", "0.2"))


def confluent_loop(bootstrap: str, topic: str, count: int) -> float | None:
    """The same bare loop on confluent-kafka (librdkafka does fetching in C), when it is installed."""
    try:
        from confluent_kafka import Consumer
    except ImportError:
        return None
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"confluent-{uuid.uuid4().hex[:6]}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    seen = size = 0
    started = time.perf_counter()
    while seen < count:
        for message in consumer.consume(num_messages=500, timeout=0.2):
            if message.error() is None:
                size += len(message.value())
                seen += 1
    elapsed = time.perf_counter() - started
    consumer.close()
    return elapsed


def ragpulse_loop(bootstrap: str, topic: str, count: int) -> float:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    exe = shutil.which("ragpulse", path=str(Path(sys.executable).parent)) or "ragpulse"
    server = subprocess.Popen(
        [exe, "run", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--set", "otlp.enabled=false",
         "--set", f"kafka.bootstrap_servers={bootstrap}", "--set", f"kafka.group_id=rp-{uuid.uuid4().hex[:6]}",
         "--set", f"kafka.topics=[{{name: {topic}}}]", "--set", "kafka.dedup_restore_seconds=0",
         *os.environ.get("BENCH_RAGPULSE_ARGS", "").split()],
        env={**os.environ, "RAGPULSE_LOGGING__FORMAT": "json"},
    )
    try:
        while True:
            try:
                urllib.request.urlopen(url + "/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.05)
        started = time.perf_counter()
        while processed_total(url) < count:
            time.sleep(SCRAPE_EVERY)  # also the scraper: each scrape commits offsets
        return time.perf_counter() - started
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=4)
    args = parser.parse_args()
    bootstrap = os.environ["KAFKA_BOOTSTRAP"]
    topic = f"bench-{uuid.uuid4().hex[:8]}"
    payload = sized_events(args.events)
    produce(bootstrap, topic, payload, args.partitions)

    bare = bare_loop(bootstrap, topic, args.events)
    ours = ragpulse_loop(bootstrap, topic, args.events)
    confluent = confluent_loop(bootstrap, topic, args.events)
    print(f"python {platform.python_version()}, {args.events} events of 2048 B on {args.partitions} partitions")
    print(f"bare kafka-python loop : {args.events / bare:>9,.0f} msg/s ({1e6 * bare / args.events:.1f} us/msg)")
    print(f"ragpulse (to /metrics) : {args.events / ours:>9,.0f} events/s ({1e6 * ours / args.events:.1f} us/event)")
    print(f"ratio                  : {bare / ours:.2f}x of the bare loop")
    if confluent is not None:
        print(f"bare confluent-kafka   : {args.events / confluent:>9,.0f} msg/s ({1e6 * confluent / args.events:.1f} us/msg)")


if __name__ == "__main__":
    main()
