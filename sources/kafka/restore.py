"""The restore on assignment: a partition's recently committed messages read back, their identities for the dedup
window (a duplicate across a restart or a rebalance is still caught) and, for a partition new to this process,
their events for the feedback join to replay (its sessions and waiting feedback go on where the previous owner
left them)."""

from __future__ import annotations

import time
from collections import deque

from ragpulse.collector.events import Envelope
from ragpulse.config import KafkaTopic
from ragpulse.sources.kafka.client import Backend, Consumer, Partition
from ragpulse.sources.kafka.codecs import Codec

# The events read back for the join, in messages a partition and in bytes (as decoded): past either the oldest are
# left out, counted.
REPLAY_MAX_MESSAGES = 100_000
REPLAY_MAX_BYTES = 64 * 1024 * 1024


def merged(*ranges: dict[Partition, tuple[int, int]]) -> dict[Partition, tuple[int, int]]:
    """One read covering every range of a partition (they all end at its committed offset)."""
    out: dict[Partition, tuple[int, int]] = {}
    for each in ranges:
        for tp, (start, end) in each.items():
            out[tp] = (min(start, out[tp][0]), end) if tp in out else (start, end)
    return out


def restore_ranges(consumer: Consumer, committed: dict[Partition, int], seconds: float,
                   max_messages: int) -> dict[Partition, tuple[int, int]]:
    """Per partition, the offsets of the last `seconds` before its committed offset (at most `max_messages` of them)."""
    if not committed or seconds <= 0 or max_messages <= 0:
        return {}
    since_ms = int((time.time() - seconds) * 1000)
    starts = consumer.offsets_for_times({tp: since_ms for tp in committed})
    ranges = {}
    for tp, end in committed.items():
        found = starts.get(tp)
        if found is None:
            continue  # nothing that recent
        start = max(found, end - max_messages, 0)
        if start < end:
            ranges[tp] = (start, end)
    return ranges


class ReadBack:
    """What the restore read: identities for the dedup window (of what `dedup` covers); the most recent events, in
    offset order per partition, for the join's replay (from `replay_from`)."""

    def __init__(self, dedup: dict[Partition, tuple[int, int]], replay_from: dict[Partition, int],
                 max_bytes: int = REPLAY_MAX_BYTES) -> None:
        self.identities: list[int] = []
        self.events: deque[Envelope] = deque()
        self.bytes = 0
        self.over_budget = 0
        self._dedup_from = {tp: start for tp, (start, _) in dedup.items()}
        self._replay_from = replay_from
        self._max_bytes = max_bytes

    def add(self, partition: Partition, offset: int, envelope: Envelope) -> None:
        if offset >= self._dedup_from.get(partition, offset + 1):
            self.identities.append(envelope.identity)
        if offset < self._replay_from.get(partition, offset + 1):
            return
        envelope.partition = partition.partition
        self.events.append(envelope)
        self.bytes += envelope.size
        while self.bytes > self._max_bytes:
            self.bytes -= self.events.popleft().size
            self.over_budget += 1


def read_back(backend: Backend, dedup: dict[Partition, tuple[int, int]], replay: dict[Partition, tuple[int, int]],
              topics: dict[str, KafkaTopic], codecs: dict[str, Codec], timeout: float) -> ReadBack:
    found = ReadBack(dedup, {tp: start for tp, (start, _) in replay.items()})
    for record in backend.read(merged(dedup, replay), timeout):
        topic = topics[record.partition.topic]
        try:
            events, _ = codecs[topic.encoding](record.value, topic)
        except Exception:  # noqa: BLE001 - it went to the dead letters, not the window
            continue
        for envelope in events:
            found.add(record.partition, record.offset, envelope)
    return found
