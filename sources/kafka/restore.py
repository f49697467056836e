"""The dedup window's restore on assignment: the identities of a partition's recently committed messages,
read back so that a duplicate across a restart or a rebalance is still caught."""

from __future__ import annotations

import time

from ragpulse.config import KafkaConfig, KafkaTopic
from ragpulse.sources.kafka.client import Backend, Consumer, Partition
from ragpulse.sources.kafka.codecs import Codec


def restore_ranges(consumer: Consumer, committed: dict[Partition, int],
                   config: KafkaConfig) -> dict[Partition, tuple[int, int]]:
    """Per partition, the offsets of the last `dedup_restore_seconds` before its committed offset (at most
    `dedup_restore_max_messages` of them)."""
    since_ms = int((time.time() - config.dedup_restore_seconds) * 1000)
    starts = consumer.offsets_for_times({tp: since_ms for tp in committed})
    ranges = {}
    for tp, end in committed.items():
        found = starts.get(tp)
        if found is None:
            continue  # nothing that recent
        start = max(found, end - config.dedup_restore_max_messages, 0)
        if start < end:
            ranges[tp] = (start, end)
    return ranges


def committed_identities(backend: Backend, ranges: dict[Partition, tuple[int, int]], topics: dict[str, KafkaTopic],
                         codecs: dict[str, Codec], timeout: float) -> list[int]:
    identities: list[int] = []
    for record in backend.read(ranges, timeout):
        topic = topics[record.partition.topic]
        try:
            events, _ = codecs[topic.encoding](record.value, topic)
            identities.extend(e.identity for e in events)
        except Exception:  # noqa: BLE001 - it went to the dead letters, not the window
            pass
    return identities
