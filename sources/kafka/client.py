"""What the Kafka source needs of a client library, so it runs on kafka-python or confluent-kafka.

Every call is made from the source's consumer thread, except where a method says otherwise.
A backend turns its library's errors into ClientError, so the source's rules (commit, health,
dead letters) are written once.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import NamedTuple, Protocol


class Partition(NamedTuple):
    topic: str
    partition: int


class Record(NamedTuple):
    partition: Partition
    offset: int
    key: bytes | None
    value: bytes


class ClientError(Exception):
    """A failed call to the broker, in either library."""


class BrokerUnreachable(ClientError):
    """The broker did not answer: the connection refused or lost, or no reply in time. The source is down at once."""


class LostConnection:
    """What a client reported of losing its brokers (Consumer.connection_lost), until a round trip begun after the
    report is answered."""

    def __init__(self) -> None:
        self._report: tuple[float, str] | None = None

    @property
    def current(self) -> str | None:
        return self._report[1] if self._report is not None else None

    def report(self, what: str) -> None:
        self._report = (time.monotonic(), what)

    def answered(self, started: float) -> None:
        """A round trip begun at `started` was answered: a report from before it is over."""
        if self._report is not None and self._report[0] < started:
            self._report = None


class RebalanceHandler(Protocol):
    """The source's side of a rebalance; a backend calls these from inside `poll`."""

    def offsets_to_commit_on_revoke(self, revoked: set[Partition]) -> dict[Partition, int]: ...

    def revoke_commit_done(self, error: str | None) -> None: ...

    def forget(self, revoked: set[Partition]) -> None: ...

    def note_assigned(self, assigned: set[Partition]) -> None: ...


class Consumer(Protocol):
    def poll(self, timeout_s: float, max_records: int) -> dict[Partition, list[Record]]:
        """Records by partition, in offset order; rebalance callbacks run inside."""

    def assignment(self) -> set[Partition]: ...

    def pause(self, partitions: Iterable[Partition]) -> None: ...

    def resume_all(self) -> None: ...

    def seek(self, partition: Partition, offset: int) -> None: ...

    def commit(self, offsets: dict[Partition, int], timeout_s: float) -> None:
        """Synchronous; raises ClientError, BrokerUnreachable when the broker is away. Returns within `timeout_s`,
        except on confluent-kafka, whose commit waits for a lost group coordinator up to the session timeout (so it is
        not tried once the client reported its brokers down)."""

    def committed(self, partitions: Iterable[Partition]) -> dict[Partition, int]:
        """Committed offsets of the group; partitions without one are left out."""

    def lag(self, partitions: Iterable[Partition], timeout_s: float) -> dict[Partition, int]:
        """A round trip to the broker: end offset minus position, per partition; raises ClientError."""

    def ping(self, timeout_s: float) -> None:
        """A round trip to the broker when nothing is assigned; raises ClientError."""

    def connection_lost(self) -> str | None:
        """What the client itself reported of losing its brokers since the last round trip that succeeded, or None:
        how a stopped broker is noticed at once rather than at the next round trip."""

    def offsets_for_times(self, times_ms: dict[Partition, int]) -> dict[Partition, int]:
        """The first offset at or after each time; partitions with nothing that recent are left out."""

    def partition_counts(self, topics: list[str], timeout_s: float) -> dict[str, int]:
        """How many partitions each topic has (metadata); a topic whose metadata does not come is left out. Never raises."""

    def close(self) -> None: ...


class Producer(Protocol):
    def send(self, topic: str, value: bytes, key: bytes | None, headers: list[tuple[str, bytes]]) -> None: ...

    def flush(self, timeout_s: float) -> None:
        """Until every message sent is acknowledged; raises ClientError."""

    def close(self) -> None: ...


class Backend(Protocol):
    """One client library: the group consumer, the dead-letter producer and a group-less reader."""

    name: str

    def consumer(self, topics: list[str], handler: RebalanceHandler) -> Consumer: ...

    def producer(self) -> Producer: ...

    def read(self, ranges: dict[Partition, tuple[int, int]], timeout_s: float) -> Iterator[Record]:
        """Records of [start, end) per partition, without joining the group; stops at the timeout."""
