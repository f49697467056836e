"""The confluent-kafka backend (the `confluent` extra): librdkafka fetches and parses in C, off the GIL."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

import structlog
from confluent_kafka import OFFSET_STORED, Consumer, KafkaError, KafkaException, Producer, TopicPartition

from ragpulse.config import KafkaConfig
from ragpulse.sources.kafka.client import BrokerUnreachable, ClientError, LostConnection, Partition, RebalanceHandler, Record

# librdkafka pre-fetches into a local queue; this caps it in bytes (its default is 64 MiB).
PREFETCH_MAX_KIB = 16 * 1024
FETCH_QUEUE_BACKOFF_MS = 20
MAX_CONSUME_BATCH = 1_000_000  # librdkafka's limit for one consume()
ERROR_LOG_EVERY_SECONDS = 60.0
# librdkafka's reconnect backoff grows to 10 s by default: a broker back from an outage waited up to that for the
# next attempt (resumes took 2.5-18 s). 1 s keeps the resume within about a second of the broker's return.
RECONNECT_BACKOFF_MAX_MS = 1000
# Errors that say the broker cannot be reached (rather than refusing the request): the source is down at once.
UNREACHABLE = frozenset({KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN, KafkaError._WAIT_COORD,
                         KafkaError._TIMED_OUT, KafkaError._RESOLVE})

log = structlog.get_logger("ragpulse.kafka")


def client_settings(config: KafkaConfig) -> dict[str, Any]:
    """librdkafka's names for the connection and security settings of kafka.* ."""
    settings: dict[str, Any] = {
        "bootstrap.servers": ",".join(s.strip() for s in (config.bootstrap_servers or "").split(",") if s.strip()),
        "client.id": config.client_id,
        "security.protocol": config.security_protocol,
        "reconnect.backoff.max.ms": RECONNECT_BACKOFF_MAX_MS,
        # Errors reach error_cb (logged once a minute each); librdkafka's own log stays quiet.
        "log_level": 2,
        "error_cb": _ErrorLog(),
    }
    if config.security_protocol in ("SSL", "SASL_SSL"):
        optional = {
            "ssl.ca.location": config.ssl_cafile,
            "ssl.certificate.location": config.ssl_certfile,
            "ssl.key.location": config.ssl_keyfile,
            "ssl.key.password": config.secret("ssl_password"),
        }
        settings.update({k: v for k, v in optional.items() if v is not None})
        settings["ssl.endpoint.identification.algorithm"] = "https" if config.ssl_check_hostname else "none"
    if config.sasl_mechanism is not None:
        settings.update({
            "sasl.mechanism": config.sasl_mechanism,
            "sasl.username": config.sasl_username,
            "sasl.password": config.secret("sasl_password"),
        })
    return settings


class _ErrorLog:
    """librdkafka repeats an error (all brokers down) on every retry: log each once a minute. Called from inside
    consume(), on the consumer thread, as soon as the client sees its connections go."""

    def __init__(self) -> None:
        self._last: dict[str, float] = {}
        self.latest: str | None = None  # for the not-ready reason: "transport failure" alone hides a refused login
        self.lost = LostConnection()  # librdkafka's "every broker is down"

    def __call__(self, error: KafkaError) -> None:
        text, now = str(error), time.monotonic()
        self.latest = error.str()
        if error.code() == KafkaError._ALL_BROKERS_DOWN:
            self.lost.report(error.str())
        if now - self._last.get(text, -ERROR_LOG_EVERY_SECONDS) >= ERROR_LOG_EVERY_SECONDS:
            self._last[text] = now
            log.warning("kafka client error", error=text)


def _error(exc: KafkaException) -> ClientError:
    error = exc.args[0] if exc.args else None
    kind = BrokerUnreachable if isinstance(error, KafkaError) and error.code() in UNREACHABLE else ClientError
    return kind(f"KafkaException: {error if error is not None else exc}")


def _partitions(tps: Iterable[TopicPartition]) -> set[Partition]:
    return {Partition(tp.topic, tp.partition) for tp in tps}


class _Consumer:
    def __init__(self, config: KafkaConfig, settings: dict[str, Any], topics: list[str], handler: RebalanceHandler) -> None:
        self._handler = handler
        self._topics = topics
        self._errors = _ErrorLog()  # this consumer's own: what the producer or a reader saw is not its news
        self._paused: set[Partition] = set()
        self._reset_to_end = config.auto_offset_reset == "latest"
        self._consumer = Consumer({
            **settings,
            "error_cb": self._errors,
            "group.id": config.group_id,
            "enable.auto.commit": False,
            "auto.offset.reset": config.auto_offset_reset,
            "session.timeout.ms": int(config.session_timeout_seconds * 1000),
            "heartbeat.interval.ms": int(min(3.0, config.session_timeout_seconds / 3) * 1000),
            "queued.max.messages.kbytes": PREFETCH_MAX_KIB,
            # Once the queue is at its cap librdkafka waits this long before fetching again (1 s by
            # default): the pipeline drains 16 MiB in about that, and then sat idle (docs/benchmarks-log.md).
            "fetch.queue.backoff.ms": FETCH_QUEUE_BACKOFF_MS,
        })
        self._consumer.subscribe(topics, on_assign=self._on_assign, on_revoke=self._on_revoke, on_lost=self._on_lost)

    # Rebalance callbacks run inside consume(), on the consumer thread: blocking calls are allowed.
    def _on_assign(self, consumer: Consumer, tps: list[TopicPartition]) -> None:
        consumer.assign(tps)  # now, so that note_assigned can pause them
        self._handler.note_assigned(_partitions(tps))

    def _on_revoke(self, consumer: Consumer, tps: list[TopicPartition]) -> None:
        revoked = _partitions(tps)
        offsets = self._handler.offsets_to_commit_on_revoke(revoked)
        if offsets:
            try:
                self._commit(offsets)
                self._handler.revoke_commit_done(None)
            except ClientError as exc:
                self._handler.revoke_commit_done(str(exc))
        self._paused -= revoked
        self._handler.forget(revoked)
        consumer.unassign()

    def _on_lost(self, consumer: Consumer, tps: list[TopicPartition]) -> None:
        lost = _partitions(tps)  # another member owns them already: nothing to commit
        self._paused -= lost
        self._handler.forget(lost)
        consumer.unassign()

    def poll(self, timeout_s: float, max_records: int) -> dict[Partition, list[Record]]:
        try:
            messages = self._consumer.consume(num_messages=min(max_records, MAX_CONSUME_BATCH), timeout=timeout_s)
        except KafkaException as exc:
            raise _error(exc) from exc
        records: dict[Partition, list[Record]] = {}
        for message in messages:
            error = message.error()
            if error is not None:
                if error.code() != KafkaError._PARTITION_EOF:
                    log.warning("kafka fetch error", topic=message.topic(), partition=message.partition(), error=str(error))
                continue
            partition = Partition(message.topic(), message.partition())
            batch = records.get(partition)
            if batch is None:
                batch = records[partition] = []
            batch.append(Record(partition, message.offset(), message.key(), message.value() or b""))
        return records

    def assignment(self) -> set[Partition]:
        return _partitions(self._consumer.assignment())

    def pause(self, partitions: Iterable[Partition]) -> None:
        partitions = set(partitions)
        if partitions:
            self._consumer.pause([TopicPartition(*p) for p in partitions])
            self._paused |= partitions

    def resume_all(self) -> None:
        if self._paused:
            self._consumer.resume([TopicPartition(*p) for p in self._paused])
            self._paused.clear()

    def seek(self, partition: Partition, offset: int) -> None:
        try:
            self._consumer.seek(TopicPartition(partition.topic, partition.partition, offset))
        except KafkaException:
            # Not fetching yet (just assigned): set its start in the assignment instead.
            assignment = self._consumer.assignment()
            positions = {Partition(tp.topic, tp.partition): tp.offset for tp in self._consumer.position(assignment)}
            positions[partition] = offset
            self._consumer.assign([TopicPartition(p.topic, p.partition, o if o >= 0 else OFFSET_STORED)
                                   for p, o in positions.items()])
            if self._paused:
                self._consumer.pause([TopicPartition(*p) for p in self._paused])

    def commit(self, offsets: dict[Partition, int], timeout_s: float) -> None:
        self._commit(offsets)  # librdkafka's commit takes no timeout: see _commit

    def _commit(self, offsets: dict[Partition, int]) -> None:
        # A commit sent once the group coordinator is gone waits for it up to the session timeout, and every other
        # call on this consumer waits behind it (seen for 23 s: readiness stayed 200, each scrape waited 2 s). So
        # none is sent after the client said its brokers are down, until a round trip succeeds again.
        if (lost := self.connection_lost()) is not None:
            raise BrokerUnreachable(f"not sent: {lost}")
        try:
            results = self._consumer.commit(offsets=[TopicPartition(p.topic, p.partition, o) for p, o in offsets.items()],
                                            asynchronous=False)
        except KafkaException as exc:
            raise _error(exc) from exc
        failed = [f"{tp.topic}/{tp.partition}: {tp.error}" for tp in results or () if tp.error is not None]
        if failed:
            raise ClientError("commit failed for " + ", ".join(failed))

    def committed(self, partitions: Iterable[Partition]) -> dict[Partition, int]:
        try:
            found = self._consumer.committed([TopicPartition(*p) for p in partitions], timeout=10)
        except KafkaException as exc:
            raise _error(exc) from exc
        return {Partition(tp.topic, tp.partition): tp.offset for tp in found if tp.offset >= 0}

    def lag(self, partitions: Iterable[Partition], timeout_s: float) -> dict[Partition, int]:
        tps = [TopicPartition(*p) for p in partitions]
        started = time.monotonic()
        try:
            # The round trip goes to the group coordinator: a query to the partition leader would
            # queue behind a long-polling fetch on the same connection (up to fetch.wait.max.ms each).
            committed = {(tp.topic, tp.partition): tp.offset for tp in self._consumer.committed(tps, timeout=timeout_s)
                         if tp.offset >= 0}
        except KafkaException as exc:
            raise self._unreachable(exc) from exc
        lags = {}
        for tp in self._consumer.position(tps):
            # The offsets as of the last fetch response (librdkafka keeps them per partition).
            start, end = self._consumer.get_watermark_offsets(tp, cached=True)
            # Until its first message after an assignment a partition has no position: it starts at the committed
            # offset, or where auto_offset_reset puts it (else an idle or a stuck partition has no lag series).
            reset = end if self._reset_to_end else start
            position = tp.offset if tp.offset >= 0 else committed.get((tp.topic, tp.partition), reset)
            if position >= 0 and end >= 0:
                lags[Partition(tp.topic, tp.partition)] = max(0, end - position)
        self._errors.lost.answered(started)
        return lags

    def ping(self, timeout_s: float) -> None:
        started = time.monotonic()
        try:
            self._consumer.list_topics(self._topics[0], timeout=timeout_s)
        except KafkaException as exc:
            raise self._unreachable(exc) from exc
        self._errors.lost.answered(started)

    def connection_lost(self) -> str | None:
        return self._errors.lost.current

    def _unreachable(self, exc: KafkaException) -> ClientError:
        error = _error(exc)
        if self._errors.latest is not None:
            error.args = (f"{error.args[0]} (the client's latest error: {self._errors.latest})",)
        return error

    def offsets_for_times(self, times_ms: dict[Partition, int]) -> dict[Partition, int]:
        try:
            found = self._consumer.offsets_for_times([TopicPartition(p.topic, p.partition, t) for p, t in times_ms.items()],
                                                     timeout=10)
        except KafkaException as exc:
            raise _error(exc) from exc
        return {Partition(tp.topic, tp.partition): tp.offset for tp in found if tp.offset >= 0}

    def partition_counts(self, topics: list[str], timeout_s: float) -> dict[str, int]:
        found = {}
        for topic in topics:
            try:
                metadata = self._consumer.list_topics(topic, timeout=timeout_s).topics.get(topic)
            except KafkaException as exc:
                log.warning("kafka topic metadata failed", topic=topic, error=str(_error(exc)))
                continue
            if metadata is not None and metadata.error is None and metadata.partitions:
                found[topic] = len(metadata.partitions)
        return found

    def close(self) -> None:
        self._consumer.close()


class _Producer:
    def __init__(self, settings: dict[str, Any]) -> None:
        self._producer = Producer({**settings, "acks": "all", "linger.ms": 5})
        self._failures: list[str] = []

    def _delivered(self, error: KafkaError | None, _message: Any) -> None:
        if error is not None:
            self._failures.append(str(error))

    def send(self, topic: str, value: bytes, key: bytes | None, headers: list[tuple[str, bytes]]) -> None:
        try:
            self._producer.produce(topic, value=value, key=key, headers=headers, on_delivery=self._delivered)
        except BufferError:
            self._producer.flush(10)  # the local queue is full: let it drain once
            self._producer.produce(topic, value=value, key=key, headers=headers, on_delivery=self._delivered)
        self._producer.poll(0)

    def flush(self, timeout_s: float) -> None:
        left = self._producer.flush(timeout_s)
        failures, self._failures = self._failures, []
        if left or failures:
            raise ClientError(f"messages not delivered: {left} still queued, {len(failures)} failed"
                              + (f" ({failures[0]})" if failures else ""))

    def close(self) -> None:
        self._producer.flush(5)


class ConfluentBackend:
    name = "confluent-kafka"

    def __init__(self, config: KafkaConfig) -> None:
        self._config = config
        self._settings = client_settings(config)

    def consumer(self, topics: list[str], handler: RebalanceHandler) -> _Consumer:
        return _Consumer(self._config, self._settings, topics, handler)

    def producer(self) -> _Producer:
        return _Producer(self._settings)

    def read(self, ranges: dict[Partition, tuple[int, int]], timeout_s: float) -> Iterator[Record]:
        # assign() without subscribe never joins a group; the id is required and never committed to.
        reader = Consumer({**self._settings, "group.id": f"{self._config.group_id}-restore-{uuid.uuid4().hex[:8]}",
                           "enable.auto.commit": False, "queued.max.messages.kbytes": PREFETCH_MAX_KIB})
        try:
            reader.assign([TopicPartition(p.topic, p.partition, start) for p, (start, _) in ranges.items()])
            remaining = set(ranges)
            deadline = time.monotonic() + timeout_s
            while remaining and time.monotonic() < deadline:
                for message in reader.consume(num_messages=5000, timeout=0.2):
                    if message.error() is not None:
                        continue
                    partition = Partition(message.topic(), message.partition())
                    end = ranges[partition][1]
                    if message.offset() < end:
                        yield Record(partition, message.offset(), message.key(), message.value() or b"")
                    if message.offset() >= end - 1 and partition in remaining:
                        remaining.discard(partition)
                        reader.pause([TopicPartition(*partition)])
        finally:
            reader.close()
