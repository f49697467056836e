"""The kafka-python backend (the default dependency): pure Python, its IO on a thread of its own."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

import structlog
from kafka import KafkaConsumer, KafkaProducer
from kafka.consumer.subscription_state import AsyncConsumerRebalanceListener
from kafka.errors import (
    CoordinatorNotAvailableError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    NodeNotReadyError,
    RequestTimedOutError,
)
from kafka.future import Future
from kafka.structs import OffsetAndMetadata, TopicPartition

from ragpulse.config import KafkaConfig
from ragpulse.sources.kafka.client import BrokerUnreachable, ClientError, LostConnection, Partition, RebalanceHandler, Record

BOOTSTRAP_TIMEOUT_MS = 10_000
PRODUCER_MAX_BLOCK_MS = 10_000
# The reads done on an assignment (committed offsets, offsets by time): bounded, where kafka-python waits on.
REQUEST_TIMEOUT_MS = 10_000
# kafka-python's reconnect backoff grows to 30 s by default: a broker back from an outage waited up to that for the
# next attempt (resumes took 22-52 s). 1 s keeps the resume within about a second of the broker's return.
RECONNECT_BACKOFF_MAX_MS = 1000
# Errors that say the broker cannot be reached (rather than refusing the request): the source is down at once.
UNREACHABLE = (KafkaConnectionError, NodeNotReadyError, KafkaTimeoutError, RequestTimedOutError, CoordinatorNotAvailableError)

log = structlog.get_logger("ragpulse.kafka")


def client_settings(config: KafkaConfig) -> dict[str, Any]:
    """Connection and security settings shared by the consumer, the producer and the restore reader."""
    settings: dict[str, Any] = {
        "bootstrap_servers": [s.strip() for s in (config.bootstrap_servers or "").split(",") if s.strip()],
        "client_id": config.client_id,
        "security_protocol": config.security_protocol,
        "reconnect_backoff_max_ms": RECONNECT_BACKOFF_MAX_MS,
    }
    if config.security_protocol in ("SSL", "SASL_SSL"):
        settings.update(
            ssl_cafile=config.ssl_cafile,
            ssl_certfile=config.ssl_certfile,
            ssl_keyfile=config.ssl_keyfile,
            ssl_password=config.secret("ssl_password"),
            ssl_check_hostname=config.ssl_check_hostname,
        )
    if config.sasl_mechanism is not None:
        settings.update(
            sasl_mechanism=config.sasl_mechanism,
            sasl_plain_username=config.sasl_username,
            sasl_plain_password=config.secret("sasl_password"),
        )
    return settings


def _error(exc: BaseException) -> ClientError:
    return (BrokerUnreachable if isinstance(exc, UNREACHABLE) else ClientError)(f"{type(exc).__name__}: {exc}")


def _finished(future: Future, timeout_s: float) -> bool:
    """Whether kafka-python's `future` (completed on its IO thread) is done within `timeout_s`."""
    done = threading.Event()
    future.add_both(lambda _: done.set())
    return done.wait(timeout_s)


def _records(polled: dict[TopicPartition, list[Any]]) -> dict[Partition, list[Record]]:
    records = {}
    for tp, messages in polled.items():
        partition = Partition(tp.topic, tp.partition)
        records[partition] = [Record(partition, m.offset, m.key, m.value or b"") for m in messages]
    return records


class _Consumer:
    def __init__(self, config: KafkaConfig, settings: dict[str, Any], topics: list[str], handler: RebalanceHandler) -> None:
        try:
            self._consumer = KafkaConsumer(
                group_id=config.group_id,
                enable_auto_commit=False,
                auto_offset_reset=config.auto_offset_reset,
                max_poll_records=config.max_poll_records,
                session_timeout_ms=int(config.session_timeout_seconds * 1000),
                bootstrap_timeout_ms=BOOTSTRAP_TIMEOUT_MS,
                # Members learn of a rebalance from heartbeats: keep them frequent (the Java default, 3 s).
                heartbeat_interval_ms=int(min(3.0, config.session_timeout_seconds / 3) * 1000),
                **settings,
            )
        except KafkaError as exc:
            raise _error(exc) from exc
        self._consumer.subscribe(topics, listener=_RebalanceListener(self._consumer, handler))
        self._lost = LostConnection()

    def poll(self, timeout_s: float, max_records: int) -> dict[Partition, list[Record]]:
        try:
            return _records(self._consumer.poll(timeout_ms=int(timeout_s * 1000), max_records=max_records))
        except UNREACHABLE as exc:
            # kafka-python 3 raises here when the group coordinator cannot be looked up (the broker is away). The
            # consumer lives on and reconnects by itself: a new one would join the group as a new member, whose join
            # waits up to the session timeout for the old member to expire (resumes took 45 s).
            self._lost.report(f"{type(exc).__name__}: {exc}")
            return {}

    def assignment(self) -> set[Partition]:
        return {Partition(tp.topic, tp.partition) for tp in self._consumer.assignment()}

    def pause(self, partitions: Iterable[Partition]) -> None:
        tps = [TopicPartition(*p) for p in partitions]
        if tps:
            self._consumer.pause(*tps)

    def resume_all(self) -> None:
        self._consumer.resume(*self._consumer.paused())

    def seek(self, partition: Partition, offset: int) -> None:
        self._consumer.seek(TopicPartition(*partition), offset)

    def commit(self, offsets: dict[Partition, int], timeout_s: float) -> None:
        # commit_async, not commit: with the broker gone commit() retries for all of its timeout, where the request
        # fails at once (connection refused) and the source is down before the next scrape comes.
        outcome: list[Any] = []  # the commit's response or exception, once kafka-python hands it to the callback
        sent = self._consumer.commit_async({TopicPartition(*p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()},
                                           callback=lambda _offsets, result: outcome.append(result))
        if not _finished(sent, timeout_s):
            raise BrokerUnreachable(f"no answer to the offset commit within {timeout_s:g} s")
        if sent.failed():
            raise _error(sent.exception)
        # `sent` is the commit's own future, or (no coordinator known) the coordinator lookup's, the commit going out
        # after it. A commit that finished has its outcome queued by now: commit_async({}) hands it to the callback
        # (and sends nothing).
        self._consumer.commit_async({})
        if not outcome:
            raise ClientError("the group coordinator was found again: this commit is not confirmed yet")
        if isinstance(outcome[0], BaseException):
            raise _error(outcome[0])

    def committed(self, partitions: Iterable[Partition]) -> dict[Partition, int]:
        found = {}
        try:
            for partition in partitions:
                offset = self._consumer.committed(TopicPartition(*partition), timeout_ms=REQUEST_TIMEOUT_MS)
                if offset is not None:
                    found[partition] = offset
        except KafkaError as exc:
            raise _error(exc) from exc
        return found

    def lag(self, partitions: Iterable[Partition], timeout_s: float) -> dict[Partition, int]:
        tps = [TopicPartition(*p) for p in partitions]
        timeout_ms = int(timeout_s * 1000)
        started = time.monotonic()
        try:
            ends = self._consumer.end_offsets(tps, timeout_ms=timeout_ms)
        except KafkaError as exc:
            raise _error(exc) from exc
        lags = {}
        for tp, end in ends.items():
            try:
                lags[Partition(tp.topic, tp.partition)] = max(0, end - self._consumer.position(tp, timeout_ms=timeout_ms))
            except KafkaError:
                continue  # no position yet: no lag to tell
        self._lost.answered(started)
        return lags

    def ping(self, timeout_s: float) -> None:
        # To the partition leader, not the group coordinator: keeps the health check out of the group's
        # join (a suspect, not a proven cause, of the slow first assignment seen in CI).
        started = time.monotonic()
        try:
            topic = next(iter(self._consumer.subscription() or ()), None)
            if topic is not None:
                self._consumer.end_offsets([TopicPartition(topic, 0)], timeout_ms=int(timeout_s * 1000))
        except KafkaError as exc:
            raise _error(exc) from exc
        self._lost.answered(started)

    def connection_lost(self) -> str | None:
        return self._lost.current

    def offsets_for_times(self, times_ms: dict[Partition, int]) -> dict[Partition, int]:
        try:
            found = self._consumer.offsets_for_times({TopicPartition(*p): t for p, t in times_ms.items()},
                                                     timeout_ms=REQUEST_TIMEOUT_MS)
        except KafkaError as exc:
            raise _error(exc) from exc
        return {Partition(tp.topic, tp.partition): o.offset for tp, o in found.items() if o is not None}

    def partition_counts(self, topics: list[str], timeout_s: float) -> dict[str, int]:
        found = {}
        for topic in topics:
            try:  # the cluster metadata the client keeps (the group's assignment needed it)
                partitions = self._consumer.partitions_for_topic(topic)
            except KafkaError as exc:
                log.warning("kafka topic metadata failed", topic=topic, error=f"{type(exc).__name__}: {exc}")
                continue
            if partitions:
                found[topic] = len(partitions)
        return found

    def close(self) -> None:
        self._consumer.close(autocommit=False)


class _RebalanceListener(AsyncConsumerRebalanceListener):
    """Async, on kafka-python's IO thread, so the revoke commit is awaited before the group moves on."""

    def __init__(self, consumer: KafkaConsumer, handler: RebalanceHandler) -> None:
        self._consumer = consumer
        self._handler = handler

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        partitions = {Partition(tp.topic, tp.partition) for tp in revoked}
        offsets = self._handler.offsets_to_commit_on_revoke(partitions)
        if offsets:
            try:
                await self._consumer.commit_async({TopicPartition(*p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()})
                self._handler.revoke_commit_done(None)
            except KafkaError as exc:
                self._handler.revoke_commit_done(f"{type(exc).__name__}: {exc}")
        self._handler.forget(partitions)

    async def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        # Another member owns them already (this one was evicted): nothing to commit, nothing to wait for.
        self._handler.forget({Partition(tp.topic, tp.partition) for tp in lost})

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self._handler.note_assigned({Partition(tp.topic, tp.partition) for tp in assigned})


class _Producer:
    def __init__(self, settings: dict[str, Any]) -> None:
        # max_block_ms: send() waits this long at most for metadata or buffer space while the broker is away.
        self._producer = KafkaProducer(acks="all", linger_ms=5, max_block_ms=PRODUCER_MAX_BLOCK_MS,
                                       bootstrap_timeout_ms=BOOTSTRAP_TIMEOUT_MS, **settings)
        self._failures: list[str] = []

    def _failed(self, exc: BaseException) -> None:
        self._failures.append(f"{type(exc).__name__}: {exc}")

    def send(self, topic: str, value: bytes, key: bytes | None, headers: list[tuple[str, bytes]]) -> None:
        try:
            self._producer.send(topic, value=value, key=key, headers=headers).add_errback(self._failed)
        except KafkaError as exc:
            raise ClientError(f"{type(exc).__name__}: {exc}") from exc

    def flush(self, timeout_s: float) -> None:
        # flush() returns when every send is done, delivered or failed: the failures come from the sends' futures.
        try:
            self._producer.flush(timeout=timeout_s)
        except KafkaError as exc:
            raise ClientError(f"{type(exc).__name__}: {exc}") from exc
        failures, self._failures = self._failures, []
        if failures:
            raise ClientError(f"{len(failures)} messages not delivered ({failures[0]})")

    def close(self) -> None:
        self._producer.close(timeout=5)


class KafkaPythonBackend:
    name = "kafka-python"

    def __init__(self, config: KafkaConfig) -> None:
        self._config = config
        self._settings = client_settings(config)

    def consumer(self, topics: list[str], handler: RebalanceHandler) -> _Consumer:
        return _Consumer(self._config, self._settings, topics, handler)

    def producer(self) -> _Producer:
        return _Producer(self._settings)

    def read(self, ranges: dict[Partition, tuple[int, int]], timeout_s: float) -> Iterator[Record]:
        reader = KafkaConsumer(group_id=None, enable_auto_commit=False, **self._settings)
        try:
            reader.assign([TopicPartition(*p) for p in ranges])
            for partition, (start, _) in ranges.items():
                reader.seek(TopicPartition(*partition), start)
            remaining = set(ranges)
            deadline = time.monotonic() + timeout_s
            while remaining and time.monotonic() < deadline:
                for partition, records in _records(reader.poll(timeout_ms=200, max_records=5000)).items():
                    end = ranges[partition][1]
                    yield from (r for r in records if r.offset < end)
                    if records[-1].offset >= end - 1:
                        remaining.discard(partition)
                        reader.pause(TopicPartition(*partition))
        finally:
            reader.close(autocommit=False)
