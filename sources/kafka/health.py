"""Whether the Kafka source reaches its broker: /readyz's reason and `ragpulse_source_up{source="kafka"}`.

Down within a bound whatever the consumer thread is doing (docs/kafka.md, "Broker down"): at once when the client
reports its brokers lost or a commit fails on the connection; within HEALTH_EVERY_SECONDS + HEALTH_TIMEOUT_SECONDS by
the round trip; within EXPORT_COMMIT_TIMEOUT_SECONDS when a commit has had no answer (told from the event loop,
while the consumer thread waits in it). Up again only on a round trip that succeeded. Set from both threads, so under
a lock; one log line a change of state, naming the broker.
"""

from __future__ import annotations

import threading
import time

import structlog
from prometheus_client import Gauge

from ragpulse.sources.kafka.client import ClientError, Consumer
from ragpulse.sources.kafka.metrics import PartitionLag

HEALTH_EVERY_SECONDS = 1.0
HEALTH_TIMEOUT_SECONDS = 2.0

log = structlog.get_logger("ragpulse.kafka")


class Health:
    def __init__(self, bootstrap_servers: str, up: Gauge) -> None:
        self._broker = bootstrap_servers
        self._up = up
        self._lock = threading.Lock()
        self._reason: str | None = f"kafka: connecting to {bootstrap_servers}"
        self._logged_down = False  # the first failure after connecting, or after being up, is logged; no repeat
        self._next_check = 0.0
        up.set(0)

    @property
    def reason(self) -> str | None:
        """Why the source is not ready, None when it is."""
        return self._reason

    def down(self, what: str, error: object) -> None:
        """`what` happened to the broker (no answer from, cannot reach, lost the connection to): `error` says how."""
        reason = f"kafka: {what} {self._broker}: {error}"[:300]
        with self._lock:
            self._reason = reason
            self._up.set(0)
            if self._logged_down:
                return
            self._logged_down = True
        log.warning("kafka source is down", broker=self._broker, reason=reason)

    def closed(self) -> None:
        """The source shut down (no warning: nothing went wrong)."""
        with self._lock:
            self._reason = "kafka: closed"
            self._up.set(0)

    def up(self) -> None:
        with self._lock:
            was_down, self._reason = self._reason is not None, None
            self._up.set(1)
            self._logged_down = False
        if was_down:
            log.info("kafka source is up", broker=self._broker)

    def check(self, consumer: Consumer, partition_lag: PartitionLag, due: bool = False) -> None:
        """A real round trip, on the consumer thread (with `due`, when HEALTH_EVERY_SECONDS have passed since the
        last): the lag of the owned partitions (end offsets from the broker), or a metadata or committed-offset
        request when nothing is owned. Owned as the rebalance callbacks tell, not as the client does: kafka-python
        lists revoked partitions until the group's join completes. The lag gauges are set here, never at a scrape."""
        now = time.monotonic()
        if due and now < self._next_check:
            return
        self._next_check = now + HEALTH_EVERY_SECONDS
        generation, owned = partition_lag.owned()
        try:
            if owned:
                lags = consumer.lag(owned, HEALTH_TIMEOUT_SECONDS)
            else:
                consumer.ping(HEALTH_TIMEOUT_SECONDS)
                lags = {}
        except ClientError as exc:
            self.down("no answer from", exc)
            return
        self.up()
        partition_lag.record(generation, lags)  # dropped when a rebalance came meanwhile

    def client_report(self, consumer: Consumer) -> None:
        """What the client itself said since its last answered round trip (confluent-kafka: every broker down)."""
        if (lost := consumer.connection_lost()) is not None and self._reason is None:
            self.down("lost the connection to", lost)
