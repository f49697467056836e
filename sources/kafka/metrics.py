"""The Kafka source's telemetry: messages and bytes consumed, lag, commits, rebalances, pauses, dead letters."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge

from ragpulse.collector.intake import IntakeMetrics
from ragpulse.collector.telemetry.shared import shared
from ragpulse.sources.kafka.client import Partition
from ragpulse.sources.otlp.metrics import OtlpMetrics, otlp_metrics


class KafkaMetrics:
    """`intake` and `otlp` are the families the Kafka source shares with the other sources (events by source;
    OTLP spans, which also arrive on Kafka topics)."""

    def __init__(self, registry: CollectorRegistry, intake: IntakeMetrics, otlp: OtlpMetrics) -> None:
        def counter(name: str, doc: str, *labelnames: str) -> Counter:
            return Counter(name, doc, labelnames, registry=registry)

        def gauge(name: str, doc: str, *labelnames: str) -> Gauge:
            return Gauge(name, doc, labelnames, registry=registry)

        self.intake = intake
        self.otlp = otlp
        self.records = counter("ragpulse_kafka_records_consumed_total",
                               "Kafka messages consumed (each once: see ragpulse_kafka_records_refetched_total).", "topic")
        self.refetched = counter(
            "ragpulse_kafka_records_refetched_total",
            "Kafka messages fetched again after a reconnect or a rebalance and skipped: this process had processed "
            "them already.", "topic")
        self.bytes = counter("ragpulse_kafka_bytes_consumed_total", "Bytes of Kafka message values consumed.", "topic")
        self.lag = gauge("ragpulse_kafka_consumer_lag_records",
                         "Messages between the consumer's position and the partition's high watermark.", "topic", "partition")
        self.partition_lag = PartitionLag(self.lag)  # the only writer of `lag`
        self.dead_letters = counter("ragpulse_kafka_dead_letters_total",
                                    "Malformed messages produced to the dead-letter topic.", "topic")
        self.commits = counter("ragpulse_kafka_commits_total", "Offset commits, by what triggered them.", "trigger")
        self.commit_failures = counter("ragpulse_kafka_commit_failures_total",
                                       "Offset commits that failed (the next one covers them).")
        self.rebalances = counter("ragpulse_kafka_rebalances_total", "Partition assignments received from the group.")
        self.assigned = gauge("ragpulse_kafka_assigned_partitions", "Partitions assigned to this consumer.")
        self.pauses = counter("ragpulse_kafka_backpressure_pauses_total",
                              "Times fetching was paused because the pipeline queue was full.")
        self.scrapes_refused = counter(
            "ragpulse_kafka_scrapes_refused_total",
            "Scrapes answered 503 because the offsets of events they would count could not be committed.")
        self.dedup_restored = counter("ragpulse_kafka_dedup_restored_total",
                                      "Identities read back into the dedup window on partition assignment.")
        self.replayed = counter(
            "ragpulse_kafka_join_replayed_total",
            "Events of partitions new to this process read back (the same window) for the feedback join to replay, by "
            "outcome: replayed, over_budget (past the read-back's byte cap: the oldest left out).", "outcome")
        for outcome in ("replayed", "over_budget"):
            self.replayed.labels(outcome=outcome)


class PartitionLag:
    """The lag series of the partitions this consumer owns, and of no other.

    The consumer thread measures lag while the client's rebalance callbacks (on kafka-python's IO thread) give
    partitions away, and kafka-python still lists revoked partitions as assigned until the group's join completes.
    So a measurement covers what this class says is owned, and is recorded only if no assignment change came
    meanwhile (the generation), checked under the lock that a release takes to remove the series: a partition
    given away never has its series set again, here or by a late measurement."""

    def __init__(self, gauge: Gauge) -> None:
        self._gauge = gauge
        self._lock = threading.Lock()
        self._owned: frozenset[Partition] = frozenset()
        self._generation = 0

    def owned(self) -> tuple[int, frozenset[Partition]]:
        """The generation a measurement is taken under, and the partitions to measure."""
        with self._lock:
            return self._generation, self._owned

    def assign(self, partitions: Iterable[Partition]) -> None:
        with self._lock:
            self._generation += 1
            self._owned |= frozenset(partitions)

    def release(self, partitions: Iterable[Partition] | None = None) -> None:
        """Partitions revoked or lost (all of them when None: the consumer closed): their series go."""
        with self._lock:
            self._generation += 1
            gone = self._owned if partitions is None else frozenset(partitions)
            self._owned -= gone
            for tp in gone:
                with contextlib.suppress(KeyError):  # not measured yet
                    self._gauge.remove(tp.topic, str(tp.partition))

    def record(self, generation: int, lags: Mapping[Partition, int]) -> None:
        """Sets the lag measured under `generation`, unless the assignment changed since (the next check measures
        afresh)."""
        with self._lock:
            if generation != self._generation:
                return
            for tp, lag in lags.items():
                if tp in self._owned:
                    self._gauge.labels(topic=tp.topic, partition=str(tp.partition)).set(lag)


def kafka_metrics(registry: CollectorRegistry) -> KafkaMetrics:
    """The Kafka source's telemetry on `registry`, reporting into the registry's one IntakeMetrics and OtlpMetrics."""
    return KafkaMetrics(registry, shared(registry, IntakeMetrics), otlp_metrics(registry))
