"""Kafka -> metrics: `ragpulse run` on each Kafka client against bare consume loops and the in-process fast path.

    scripts/kafka.sh start   # then
    KAFKA_BOOTSTRAP=127.0.0.1:PORT python bench/bench_kafka.py [--events 200000] [--partitions 4] [--rounds 2]

Each round, on the same topic: a bare kafka-python loop, ragpulse with kafka.client kafka-python, a bare
confluent-kafka loop, ragpulse with kafka.client confluent-kafka, and the in-process fast path
(bench_fastpath.measure, shipped defaults) on the same event bytes: the ceiling a Kafka source can reach.

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

from bench_fastpath import measure
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


def confluent_loop(bootstrap: str, topic: str, count: int) -> float:
    """The same bare loop on confluent-kafka (librdkafka does fetching in C)."""
    from confluent_kafka import Consumer

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


def ragpulse_loop(bootstrap: str, topic: str, count: int, client: str, extra: list[str]) -> float:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    exe = shutil.which("ragpulse", path=str(Path(sys.executable).parent)) or "ragpulse"
    server = subprocess.Popen(
        [exe, "run", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--set", "otlp.enabled=false",
         "--set", f"kafka.bootstrap_servers={bootstrap}", "--set", f"kafka.group_id=rp-{uuid.uuid4().hex[:6]}",
         "--set", f"kafka.topics=[{{name: {topic}}}]", "--set", "kafka.dedup_restore_seconds=0",
         "--set", f"kafka.client={client}", *extra,
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
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--stages", choices=["default", "no_judge"], default="default",
                        help="no_judge: judge.mode off for ragpulse and the in-process fast path alike")
    args = parser.parse_args()
    bootstrap = os.environ["KAFKA_BOOTSTRAP"]
    topic = f"bench-{uuid.uuid4().hex[:8]}"
    payload = sized_events(args.events)
    produce(bootstrap, topic, payload, args.partitions)
    n = args.events
    print(f"python {platform.python_version()}, {n} events of 2048 B on {args.partitions} partitions, stages {args.stages}")
    print("round | bare kafka-python | ragpulse on kafka-python | bare confluent-kafka | ragpulse on confluent-kafka"
          " | in-process fast path | kafka-python / fast path | confluent / fast path")
    for round_ in range(1, args.rounds + 1):
        bare = bare_loop(bootstrap, topic, n)
        extra = ["--set", "judge.mode=off"] if args.stages == "no_judge" else []
        on_kafka_python = ragpulse_loop(bootstrap, topic, n, "kafka-python", extra)
        confluent = confluent_loop(bootstrap, topic, n)
        on_confluent = ragpulse_loop(bootstrap, topic, n, "confluent-kafka", extra)
        decode, process = measure(payload, 500, 1, args.stages)
        fast_path = decode + process
        print(f"{round_} | {n / bare:,.0f} msg/s | {n / on_kafka_python:,.0f} events/s | "
              f"{n / confluent:,.0f} msg/s | {n / on_confluent:,.0f} events/s | {n / fast_path:,.0f} events/s | "
              f"{fast_path / on_kafka_python:.2f}x | {fast_path / on_confluent:.2f}x", flush=True)


if __name__ == "__main__":
    main()
