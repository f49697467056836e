"""A broker that stops and comes back, on both client libraries (docs/kafka.md, "Broker down"): the source knows within
the documented bound (readiness, one log line naming the broker), every scrape meanwhile is answered fast, consumption
resumes within seconds of the broker's return, and records fetched twice are consumed once."""

from __future__ import annotations

import asyncio
import json
import signal
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from helpers.events import trace
from helpers.kafka_broker import KafkaArgs, consume_all, create_topic, kafka_bootstrap, kafka_control, produce
from helpers.metrics import Samples, ScrapeRefused, parse_metrics
from helpers.net import http
from helpers.sidecar import RagpulseProcess
from helpers.waiting import wait_until

Factory = Callable[..., RagpulseProcess]
# docs/kafka.md's bounds. Noticed: a round trip every second with a 2 s timeout (at once when the client reports its
# connection lost); SCHEDULING is what a loaded CI box adds to a thread's wake-up and to this test's own polling.
NOTICED_WITHIN_S = 3.0
SCHEDULING_S = 0.5
SCRAPE_WITHIN_S = 0.1
RESUMED_WITHIN_S = 5.0  # measured 0.2-1.1 s; room for CI, and well short of the 2.5-52 s of before
# How long the broker stays away: long enough for the clients' default reconnect backoffs (librdkafka's 10 s,
# kafka-python's 30 s) to grow past the resume bound, as they did when the sidecar resumed 22-52 s after the broker.
OUTAGE_S = 20.0

pytestmark = pytest.mark.usefixtures("kafka_client")


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def topic_records(topic: str) -> int:
    """The records the topic holds (its partitions' end offsets: nothing is ever deleted from a test topic)."""
    from kafka import KafkaConsumer
    from kafka.structs import TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap(), group_id=None)
    try:
        partitions = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
        return sum(consumer.end_offsets(partitions).values())
    finally:
        consumer.close()


def group_members(group: str) -> int:
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap())
    try:
        return len(admin.describe_groups([group])[group].get("members") or ())
    finally:
        admin.close()


class LiveProducer:
    """Traces produced without a pause until stopped, or until the broker goes (the last batch may be lost or not:
    the topic's record count, not this, is what was produced). No retries: no message is in the topic twice."""

    def __init__(self, topic: str) -> None:
        self._topic = topic
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from kafka import KafkaProducer

        from kafka.errors import KafkaError

        # Short timeouts: once the broker is gone, the records on their way fail within 1.5 s, and close() returns.
        producer = KafkaProducer(bootstrap_servers=kafka_bootstrap(), acks="all", linger_ms=5, retries=0, max_block_ms=1000,
                                 request_timeout_ms=1000, delivery_timeout_ms=1500)
        sent = 0
        try:
            while not self._stop.is_set():
                for _ in range(20):
                    producer.send(self._topic, json.dumps(trace(f"live-{sent}")).encode(), key=str(sent).encode())
                    sent += 1
                producer.flush(timeout=2)
                self._stop.wait(0.02)
        except KafkaError:
            pass  # the broker went away: the stream ends there
        producer.close(timeout=10)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


@dataclass
class Scrape:
    started: float
    seconds: float
    status: int


class TimedScraper:
    """Plays Prometheus: one scrape at a time, each timed; keeps the last 200 answer."""

    def __init__(self, rp: RagpulseProcess) -> None:
        self.rp = rp
        self.scrapes: list[Scrape] = []
        self.last = Samples()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set() and self.rp.process.poll() is None:
            started = time.monotonic()
            try:
                response = http("GET", self.rp.url + "/metrics")
            except OSError:
                continue
            self.scrapes.append(Scrape(started, time.monotonic() - started, response.status))
            if response.status == 200:
                self.last = parse_metrics(response.body.decode())
            self._stop.wait(0.02)

    def since(self, moment: float) -> list[Scrape]:
        return [s for s in list(self.scrapes) if s.started >= moment]

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def counted(s: Samples) -> float:
    return s.total("ragpulse_kafka_records_consumed_total")


def scraped(rp: RagpulseProcess) -> Samples:
    """A scrape, empty when refused (503: offsets not committed yet), as Prometheus would scrape again."""
    try:
        return rp.metrics()
    except ScrapeRefused:
        return Samples()


def test_a_stopped_broker_is_known_at_once_scrapes_stay_fast_and_consumption_resumes_in_seconds(
    ragpulse_factory: Factory, kafka_args: KafkaArgs
) -> None:
    """A live stream and a scraper, the broker stopped for 20 s and started again. Before: confluent-kafka's commit
    waited for the lost coordinator (readiness 200 through the outage, each scrape 2 s, 1 run in 4); kafka-python
    rebuilt its consumer and resumed 22-52 s after the broker's return, after librdkafka's up to 18 s."""
    topic, group = unique("outage"), unique("group")
    create_topic(topic, partitions=2)
    rp = ragpulse_factory(*kafka_args(topic, group, max_poll_records=20), "--set", "otlp.grpc_enabled=false")
    producer = LiveProducer(topic)
    scraper = TimedScraper(rp)
    wait_until(lambda: counted(scraper.last) >= 300, timeout=60, what="the sidecar counting the live stream")
    kafka_control("stop")
    stopped = time.monotonic()
    try:
        wait_until(lambda: rp.get("/readyz").status == 503, timeout=NOTICED_WITHIN_S + SCHEDULING_S,
                   what=f"/readyz 503 within {NOTICED_WITHIN_S:g} s of the broker stopping")
        down = [line for line in rp.log_lines() if line.get("event") == "kafka source is down"]
        assert len(down) == 1, down
        assert kafka_bootstrap() in down[0]["reason"], down[0]
        # The outage goes on, scraped all along (the scraper's measurements cover it).
        wait_until(lambda: bool(scraper.scrapes) and scraper.scrapes[-1].started - stopped >= OUTAGE_S,
                   timeout=OUTAGE_S + 30, what=f"{OUTAGE_S:g} s of the outage scraped")
        during = scraper.since(stopped)
        slow = [(round(s.started - stopped, 2), round(s.seconds * 1000), s.status) for s in during if s.seconds >= SCRAPE_WITHIN_S]
        said = f"of {len(during)} scrapes, these took {SCRAPE_WITHIN_S * 1000:g} ms or more (s after the stop, ms, status): {slow}"
        # Each scrape is measured: under 100 ms at p99, and none waits for the broker (a commit waited on took 2 s).
        # An outlier up to SCHEDULING_S is the shared box's, seen on scrapes refused at once (103-220 ms at load 2.5).
        assert len(slow) <= len(during) // 100, said
        assert all(ms < (SCRAPE_WITHIN_S + SCHEDULING_S) * 1000 for _, ms, _ in slow), said
        assert {s.status for s in during} <= {200, 503}
        assert len([line for line in rp.log_lines() if line.get("event") == "kafka source is down"]) == 1
    finally:
        producer.stop()  # it stopped itself when the broker went
        kafka_control("start")
    back = time.monotonic()
    produce(topic, [json.dumps(trace(f"after-{i}")).encode() for i in range(100)], [str(i).encode() for i in range(100)])
    total = topic_records(topic)
    wait_until(lambda: counted(scraper.last) >= total, timeout=90, what=f"all {total} records counted after the restart")
    resumed = time.monotonic() - back
    assert resumed <= RESUMED_WITHIN_S, f"consumption resumed {resumed:.1f} s after the broker was back"
    scraper.stop()
    s = rp.metrics()
    assert s.get_value("ragpulse_source_up", source="kafka") == 1
    assert s.total("ragpulse_traces_total") == total  # every trace once: none lost, none counted twice
    assert s.total("ragpulse_events_duplicate_total") == 0
    assert counted(s) == total


def test_after_an_eviction_every_record_of_the_topic_is_consumed_once(
    ragpulse_factory: Factory, kafka_args: KafkaArgs
) -> None:
    """The sidecar processes records no scrape has committed, then stalls (SIGSTOP) past the session timeout: the
    group evicts it, and on its return it is assigned the partition again at the older committed offset, and resumes
    from its own position. When the poll that assigns it already returned records from the committed offset (often
    on confluent-kafka, not seen on kafka-python) they are skipped; before, ragpulse_kafka_records_consumed_total
    counted them again (24,500 for a topic of 22,500). The unit test below fetches again every time."""
    topic, group = unique("refetch"), unique("group")
    dead_letters = topic + "-dlq"
    create_topic(topic, partitions=1)  # one partition: the dead letter below marks how far the sidecar got
    rp = ragpulse_factory(*kafka_args(topic, group, dead_letters, max_poll_records=20, session_timeout_seconds=6,
                                      commit_without_scrape_seconds=3600, dedup_restore_seconds=0),
                          "--set", "otlp.grpc_enabled=false")
    produce(topic, [json.dumps(trace(f"first-{i}")).encode() for i in range(300)])
    wait_until(lambda: scraped(rp).total("ragpulse_traces_total") == 300, timeout=60, what="300 traces counted")
    # Processed, not scraped, so not committed: 200 traces and a malformed record, whose dead letter says the
    # sidecar went through all of them.
    produce(topic, [json.dumps(trace(f"then-{i}")).encode() for i in range(200)] + [b"not json"])
    assert len(consume_all(dead_letters, 1)) == 1
    rp.process.send_signal(signal.SIGSTOP)
    try:
        wait_until(lambda: group_members(group) == 0, timeout=60, what="the stalled sidecar evicted from the group")
    finally:
        rp.process.send_signal(signal.SIGCONT)
    total = topic_records(topic)
    assert total == 501
    wait_until(lambda: rp.get("/readyz").status == 200 and counted(scraped(rp)) >= total, timeout=90,
               what=f"the {total} records of the topic consumed")
    s = rp.metrics()
    assert counted(s) == total  # with or without records fetched again (refetched: not consumed)
    assert s.total("ragpulse_traces_total") == 500
    assert s.total("ragpulse_events_duplicate_total") == 0


@pytest.mark.unit
def test_a_batch_fetched_again_is_counted_as_refetched_and_only_the_rest_as_consumed() -> None:
    """The source's hand-over, as after a reconnect: offsets 2-7 fetched, 2-4 processed here before."""
    from prometheus_client import CollectorRegistry

    from ragpulse.collector.decode import EventDecoder
    from ragpulse.collector.dedup import DedupWindow
    from ragpulse.collector.queue import EventQueue
    from ragpulse.config import Config, KafkaConfig, KafkaTopic, LimitsConfig
    from ragpulse.sources.kafka import KafkaSource
    from ragpulse.sources.kafka.client import Partition, Record
    from ragpulse.sources.otlp.intake import SpanIntake

    registry = CollectorRegistry()
    queue = EventQueue("pipeline", 100, 1 << 20, registry)
    spans = SpanIntake(Config().otlp, EventDecoder(LimitsConfig(), "otlp"), queue, registry,
                       max_event_bytes=LimitsConfig().max_event_bytes)
    config = KafkaConfig(bootstrap_servers="127.0.0.1:9", group_id="g", topics=[KafkaTopic(name="again")])
    source = KafkaSource(config, EventDecoder(LimitsConfig(), "kafka"), queue, registry, DedupWindow(100, 60, registry),
                         spans, max_batch_events=512)
    tp = Partition("again", 0)
    book = source._offsets
    book.assign({tp})
    book.take_in_flight({tp: [Record(tp, 4, None, b"")]})
    book.ack_callback({tp: 5})()  # offsets 0-4 processed here
    book.forget({tp})  # the connection lost, then the partition assigned back from the older committed offset
    book.assign({tp})
    assert book.settle({tp}, {tp: 2}) == ({tp: 5}, set())
    values = {offset: json.dumps(trace(f"again-{offset}")).encode() for offset in range(2, 8)}
    loop = asyncio.new_event_loop()
    running = threading.Thread(target=loop.run_forever, daemon=True)
    running.start()
    try:
        source._loop = loop
        source._hand_over(None, {tp: [Record(tp, offset, None, value) for offset, value in values.items()]})
        assert source._handed is not None
        source._handed.result(timeout=10)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        running.join()
    sample = lambda name: registry.get_sample_value(name, {"topic": "again"})  # noqa: E731
    assert sample("ragpulse_kafka_records_consumed_total") == 3
    assert sample("ragpulse_kafka_records_refetched_total") == 3
    assert sample("ragpulse_kafka_bytes_consumed_total") == sum(len(values[offset]) for offset in (5, 6, 7))
    assert queue.depth == 3


@pytest.mark.unit
def test_an_outage_is_logged_once_naming_the_broker_and_its_end_once() -> None:
    """However many ways the broker is found away meanwhile (a lost connection, then round trips timing out)."""
    from prometheus_client import CollectorRegistry, Gauge
    from structlog.testing import capture_logs

    from ragpulse.sources.kafka.health import Health

    up = Gauge("up", "up", registry=CollectorRegistry())
    health = Health("broker-1:9092", up)
    assert health.reason == "kafka: connecting to broker-1:9092" and up._value.get() == 0
    with capture_logs() as logs:
        health.up()
        health.down("lost the connection to", "1/1 brokers are down")
        health.down("no answer from", "Local: Timed out")
        assert health.reason == "kafka: no answer from broker-1:9092: Local: Timed out" and up._value.get() == 0
        health.up()
    assert [(line["event"], line.get("reason")) for line in logs] == [
        ("kafka source is up", None),
        ("kafka source is down", "kafka: lost the connection to broker-1:9092: 1/1 brokers are down"),
        ("kafka source is up", None)]
    assert all(line["broker"] == "broker-1:9092" for line in logs)
    assert health.reason is None and up._value.get() == 1
