"""The restore on assignment: a partition's recently committed messages read back, their identities for the dedup
window (a duplicate across a restart or a rebalance is still caught) and, for a partition new to this process,
their events for the feedback join to replay (its sessions and waiting feedback go on where the previous owner
left them)."""

from __future__ import annotations

import time
from collections import deque

from ragpulse.config import KafkaConfig, KafkaTopic
from ragpulse.sources.kafka.client import Backend, Consumer, Partition
from ragpulse.collector.events import Envelope
from ragpulse.sources.kafka.codecs import Codec

# The events read back for the join, in bytes (as decoded): past it the oldest are left out, counted.
REPLAY_MAX_BYTES = 64 * 1024 * 1024


def restore_ranges(consumer: Consumer, committed: dict[Partition, int], config: KafkaConfig,
                   seconds: float) -> dict[Partition, tuple[int, int]]:
    """Per partition, the offsets of the last `seconds` before its committed offset (at most
    `dedup_restore_max_messages` of them)."""
    since_ms = int((time.time() - seconds) * 1000)
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


class ReadBack:
    """What the restore read: identities for the dedup window; the most recent events, in offset order per
    partition, for the join's replay (of the partitions in `replayed`)."""

    def __init__(self, replayed: set[Partition], max_bytes: int = REPLAY_MAX_BYTES) -> None:
        self.identities: list[int] = []
        self.events: deque[Envelope] = deque()
        self.bytes = 0
        self.over_budget = 0
        self._replayed = replayed
        self._max_bytes = max_bytes

    def add(self, partition: Partition, envelope: Envelope) -> None:
        self.identities.append(envelope.identity)
        if partition not in self._replayed:
            return
        envelope.partition = partition.partition
        self.events.append(envelope)
        self.bytes += envelope.size
        while self.bytes > self._max_bytes:
            self.bytes -= self.events.popleft().size
            self.over_budget += 1


def read_back(backend: Backend, ranges: dict[Partition, tuple[int, int]], topics: dict[str, KafkaTopic],
              codecs: dict[str, Codec], timeout: float, replayed: set[Partition]) -> ReadBack:
    found = ReadBack(replayed)
    for record in backend.read(ranges, timeout):
        topic = topics[record.partition.topic]
        try:
            events, _ = codecs[topic.encoding](record.value, topic)
        except Exception:  # noqa: BLE001 - it went to the dead letters, not the window
            continue
        for envelope in events:
            found.add(record.partition, envelope)
    return found
