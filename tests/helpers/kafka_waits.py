"""Waits and traffic for the Kafka tests (tests/test_kafka*.py): a topic's traces counted and its lag gone, a
pipeline settled, Prometheus played by a scraper thread, events produced over time."""

from __future__ import annotations

import json
import threading
import time
import uuid

from helpers.kafka_broker import produce
from helpers.metrics import Samples, ScrapeRefused
from helpers.sidecar import RagpulseProcess
from helpers.waiting import wait_until

LAG = "ragpulse_kafka_consumer_lag_records"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def encode(event: dict[str, object]) -> bytes:
    return json.dumps(event).encode()


def traces_total(s: Samples) -> float:
    return s.total("ragpulse_traces_total")


def wait_caught_up(rp: RagpulseProcess, topic: str, traces: float, timeout: float = 60) -> Samples:
    """Until `traces` traces are counted and the consumer has no lag left on `topic`. A refused scrape (503: offsets
    not committed, as while a coordinator moves after a broker restart) is retried, as Prometheus retries it at its
    next scrape; one that lasts the whole wait fails it."""
    seen: list[Samples | ScrapeRefused] = []

    def done() -> bool:
        try:
            s = rp.metrics()
        except ScrapeRefused as exc:
            seen[:] = [exc]
            return False
        seen[:] = [s]
        return traces_total(s) >= traces and s.total("ragpulse_kafka_consumer_lag_records", topic=topic) == 0
    try:
        wait_until(done, timeout=timeout, what=f"{traces} traces from {topic}")
    except AssertionError as exc:  # say where it stood, for a failure seen once and not reproduced
        log_tail = "\n".join(rp.log_path.read_text().splitlines()[-30:])
        if not seen or isinstance(seen[0], ScrapeRefused):
            raise AssertionError(f"{exc}: the last scrape refused ({seen[0] if seen else 'none'})"
                                 f"\nragpulse log:\n{log_tail}") from None
        s = seen[0]
        lag = {k: v for k, v in s.items() if k[0] == "ragpulse_kafka_consumer_lag_records"}
        raise AssertionError(f"{exc}: traces {traces_total(s)}, lag {lag}, source_up "
                             f"{s.get_value('ragpulse_source_up', source='kafka')}\nragpulse log:\n{log_tail}") from None
    assert isinstance(seen[0], Samples)
    return seen[0]


def wait_settled(rp: RagpulseProcess, topic: str, partitions: int, timeout: float = 60) -> Samples:
    """Until nothing more can be counted: every one of the `partitions` partitions of `topic` measured at no lag, and
    every event received gone through the pipeline (processed, or dropped as a duplicate). The consumer thread hands
    over what it polled before its next lag measurement, so at no lag everything read is received: a double count
    (a partition read again) shows by then, or keeps the wait going, and there is nothing left to read."""
    seen: list[object] = []

    def settled() -> bool:
        try:
            s = rp.metrics()
        except ScrapeRefused as exc:  # offsets not committed yet: Prometheus scrapes again, and so does this
            seen[:] = [exc]
            return False
        lags = {dict(labels)["partition"]: v for (name, labels), v in s.items() if name == LAG and dict(labels)["topic"] == topic}
        received = s.total("ragpulse_events_received_total", source="kafka")
        through = s.total("ragpulse_events_processed_total") + s.total("ragpulse_events_duplicate_total")
        seen[:] = [f"lag {lags}, received {received}, processed or duplicate {through}"]
        return len(lags) == partitions and not any(lags.values()) and received == through

    try:
        wait_until(settled, timeout=timeout, what=f"no lag on the {partitions} partitions of {topic}, the pipeline idle")
    except AssertionError as exc:
        raise AssertionError(f"{exc}: {seen}\nragpulse log:\n" + "\n".join(rp.log_path.read_text().splitlines()[-30:])) from None
    return rp.metrics()



class Scraper:
    """Plays Prometheus: scrapes one ragpulse every `interval` seconds (each scrape commits its Kafka offsets) and
    keeps the last answer it got."""

    def __init__(self, rp: RagpulseProcess, interval: float = 0.05) -> None:
        self.rp, self.interval = rp, interval
        self.last = Samples()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.last = self.rp.metrics()
            except OSError:  # a slow or refused scrape: Prometheus tries again at the next interval, and so does this
                if self.rp.process.poll() is not None:
                    return
            self._stop.wait(self.interval)

    def stop(self) -> Samples:
        self._stop.set()
        self._thread.join()
        return self.last


def produce_over(topic: str, events: list[dict[str, object]], seconds: float, keys: list[bytes]) -> threading.Thread:
    """Produce `events` spread over `seconds`, in a background thread."""
    def run() -> None:
        chunks = 10
        size = -(-len(events) // chunks)
        for i in range(chunks):
            part = slice(i * size, (i + 1) * size)
            produce(topic, [encode(e) for e in events[part]], keys[part])
            time.sleep(seconds / chunks)

    thread = threading.Thread(target=run)
    thread.start()
    return thread
