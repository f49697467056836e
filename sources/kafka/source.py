"""Kafka source: a consumer group member feeding the pipeline, at least once.

The client library (kafka-python by default, confluent-kafka with the `confluent` extra: kafka.client) is blocking,
so the consumer lives on its own thread and hands batches to the event loop. The rules, the same on both clients,
that keep counts right:

- A polled batch goes into the pipeline queue as one unit with an ack; the ack (called once every event of it went
  through the pipeline) marks its offsets processed. Malformed messages go to the dead-letter topic on the way and
  count as processed; the producer is flushed before any commit.
- Offsets are committed during a /metrics scrape, for what that scrape exported (`on_export`). After a crash the
  successor starts from the last exported position: what Prometheus saw is not counted again, and what it did not
  see is counted by the successor. A scrape whose offsets cannot be committed (the broker is away, or the commit
  does not complete within EXPORT_COMMIT_TIMEOUT_SECONDS) is refused, 503, at once when the source is known down:
  it never shows a count ahead of the committed offsets, and never waits on a broker that is not there. Without
  scrapes for `commit_without_scrape_seconds`, processed offsets are committed anyway. A polled batch is handed in
  parts of at most pipeline.max_batch_events events, each with its own ack: the pipeline processes a part whole
  between two scrapes, so a scrape never exports events its commit does not cover.
- A message that cannot be decoded, whatever the exception, goes to the dead letters, never stops the partition.
- After a lost connection the consumer resumes each partition from what it processed itself (when no other member
  committed past it meanwhile), not from the older committed offset: its own events are not read twice (what is
  fetched again anyway is skipped, counted as refetched, not consumed).
- A broker gone is known within 3 s (health.py), and not waited on: no commit is sent while the source is down. The
  consumer is kept through an outage (both clients reconnect by themselves): a new one would be a new group member.
- On a rebalance the consumer waits for its in-flight batches, then commits what was processed (the process lives
  on and is scraped later).
- On shutdown intake stops, the consumer stays in the group to serve the scrapes of the drain, then leaves without
  committing more.
- When the queue is full the consumer waits for it (up to 2 s), then pauses its partitions and keeps polling
  (rebalances) without fetching: memory stays bounded (librdkafka's pre-fetch has its own byte cap).
- On assignment, recently committed messages are read back: identities into the dedup window; for a partition new
  to this process, events to the feedback join, which replays them uncounted (sessions go on where they were).
- Partitions revoked and not assigned back are told to the join, which lets go of what it holds of them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
import time
from collections.abc import Awaitable, Callable

import structlog
from prometheus_client import CollectorRegistry

from ragpulse.collector.decode import EventDecoder
from ragpulse.collector.dedup import DedupWindow
from ragpulse.collector.events import Envelope
from ragpulse.collector.queue import EventQueue
from ragpulse.config import KafkaConfig
from ragpulse.errors import EventError, ExportRefused, ShuttingDown
from ragpulse.sources.kafka.backends import backend
from ragpulse.sources.kafka.client import BrokerUnreachable, ClientError, Consumer, Partition, Producer, Record
from ragpulse.sources.kafka.codecs import Codec, item_error, json_codec, otlp_proto_codec
from ragpulse.sources.kafka.health import HEALTH_TIMEOUT_SECONDS, Health
from ragpulse.sources.kafka.metrics import kafka_metrics
from ragpulse.sources.kafka.offsets import OffsetBook
from ragpulse.sources.kafka.restore import REPLAY_MAX_MESSAGES, read_back, restore_ranges
from ragpulse.sources.otlp.intake import SpanIntake
from ragpulse.sources.otlp.spans import Span

SOURCE = "kafka"
# Also the longest a scrape's commit waits for the consumer thread to take it: librdkafka's consume waits out its
# timeout for a full batch, and at 100 ms scrapes of a trickling topic took 95-104 ms on confluent-kafka.
POLL_TIMEOUT_MS = 50
REVOKE_WAIT_SECONDS = 10.0
# A full queue is waited for this long before the partitions are paused and polled: a pause throws
# away what the client pre-fetched (both clients fetch it again on resume), and short waits are the
# steady state when the pipeline is the bottleneck.
PAUSE_AFTER_SECONDS = 2.0
EXPORT_COMMIT_TIMEOUT_SECONDS = 2.0
RESTORE_TIMEOUT_SECONDS = 30.0

log = structlog.get_logger("ragpulse.kafka")

class KafkaSource:
    def __init__(
        self,
        config: KafkaConfig,
        decoder: EventDecoder,
        queue_: EventQueue,
        registry: CollectorRegistry,
        dedup: DedupWindow,
        spans: SpanIntake,
        *,
        max_batch_events: int,
        on_partitions_lost: Callable[[frozenset[int]], None] | None = None,
        on_replay: Callable[[list[Envelope]], None] | None = None,
        replay_seconds: float = 0.0,
    ) -> None:
        self._config = config
        # Told on the event loop: partitions gone to another member, events read back from ones new to this process.
        self._on_partitions_lost = on_partitions_lost
        self._on_replay = on_replay
        # How far back a partition new to this process is read for the join's replay (its sessions' idle time).
        self._replay_seconds = replay_seconds
        self._held: set[Partition] = set()  # partitions whose events this process's join holds
        self._revoked: set[Partition] = set()  # revoked since the last assignment
        self._max_batch = max_batch_events
        self._decoder = decoder
        self._metrics = metrics = kafka_metrics(registry)
        self._codecs: dict[str, Codec] = {"json": json_codec(decoder), "otlp_proto": otlp_proto_codec(metrics.otlp.spans_rejected, spans.keys)}
        self._spans = spans
        self._topics = {topic.name: topic for topic in config.topics}
        self._queue = queue_
        self._dedup = dedup
        self._backend = backend(config)
        metrics.intake.precreate(SOURCE)
        self._health = Health(config.bootstrap_servers or "", metrics.intake.source_up.labels(source=SOURCE))
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._consumer: Consumer | None = None
        self._producer: Producer | None = None
        # Intake stops first (drain), then the consumer closes (after the last scrape).
        self._intake_stopped = threading.Event()
        self._intake_idle = threading.Event()
        self._closing = threading.Event()
        self._offsets = OffsetBook()
        self._commit_requests: queue.SimpleQueue[tuple[dict[Partition, int], concurrent.futures.Future[None]]] = queue.SimpleQueue()
        # After each rebalance, told on the event loop the partitions owned and the topics' total (the routine floor).
        self.on_share: Callable[[int, int], None] | None = None
        self._last_export = time.monotonic()
        self._committing_since: float | None = None  # while the consumer thread waits in a commit
        self._paused = False
        self._handed: concurrent.futures.Future[None] | None = None

    # -- lifecycle, on the event loop ------------------------------------------------------

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._run, name="ragpulse-kafka", daemon=True)
        self._thread.start()

    async def stop_intake(self) -> None:
        """Stop handing batches to the pipeline; returns once the consumer thread has noticed.

        A batch still on its way when the queue closes is refused (ShuttingDown) and never acked, so its offsets
        stay uncommitted and the next owner reads it again."""
        self._intake_stopped.set()
        await asyncio.to_thread(self._intake_idle.wait, 5.0)

    async def close(self) -> None:
        self._intake_stopped.set()
        self._closing.set()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, 30.0)
        self._health.closed()

    def not_ready_reason(self) -> str | None:
        return self._health.reason

    def on_export(self) -> Awaitable[None]:
        """A scrape exported everything processed so far: snapshot those offsets now, and
        return what to await so they are committed before the scrape is answered."""
        self._last_export = time.monotonic()
        exported = self._offsets.processed()
        done: concurrent.futures.Future[bool] = concurrent.futures.Future()
        if self._offsets.unsettled():
            # Partitions left this consumer with processed events not committed: until they come back (or go to
            # another member), no count is safe to show.
            done.set_result(False)
        elif not self._offsets.due(exported):
            done.set_result(True)  # everything this scrape counts is committed already
        elif self._health.reason is not None or self._thread is None or not self._thread.is_alive():
            done.set_result(False)  # known down: refuse now, never wait on a broker that is not there
        else:
            self._commit_requests.put((exported, done))
        return self._await_commit(done)

    async def _await_commit(self, done: concurrent.futures.Future[bool]) -> None:
        # asyncio.wait, not wait_for: a timeout must not cancel the future the consumer thread completes.
        finished, _ = await asyncio.wait([asyncio.wrap_future(done)], timeout=EXPORT_COMMIT_TIMEOUT_SECONDS)
        if finished and done.result():
            return
        self._metrics.scrapes_refused.inc()
        if not finished and self._committing_since is not None:
            # The consumer thread still waits in a commit (one takes milliseconds; librdkafka's waits for a lost
            # coordinator, as in a broker's shutdown): it cannot tell, so this does; next scrapes are refused at once.
            self._health.down("no answer from", f"an offset commit had none within {EXPORT_COMMIT_TIMEOUT_SECONDS:g} s")
        reason = (self._health.reason or "the offset commit failed or partitions wait to be settled") if finished else (
            f"the offset commit did not complete within {EXPORT_COMMIT_TIMEOUT_SECONDS:g} s")
        log.warning("scrape refused: its events' kafka offsets are not committed", reason=reason)
        raise ExportRefused(f"kafka offsets of events this scrape would count are not committed ({reason}); "
                            "they are counted once the broker takes the commit")

    # -- the consumer thread ---------------------------------------------------------------

    def _run(self) -> None:
        backoff = 0.5
        while not self._closing.is_set():
            try:
                self._consumer = self._connect()
                backoff = 0.5
                self._consume(self._consumer)
            except Exception as exc:  # a broken connection must not end the source
                self._health.down("cannot reach", f"{type(exc).__name__}: {exc}")
                log.warning("kafka consumer failed, retrying", error=f"{type(exc).__name__}: {exc}", retry_in_s=backoff)
                self._close_consumer()
                if self._intake_stopped.is_set():
                    self._intake_idle.set()
                self._closing.wait(backoff)
                backoff = min(backoff * 2, self._config.retry_backoff_max_seconds)
        self._close_consumer()
        if self._producer is not None:
            self._producer.close()
        self._intake_idle.set()

    def _connect(self) -> Consumer:
        consumer = self._backend.consumer(list(self._topics), self)
        log.info("kafka consumer connected", group=self._config.group_id, topics=list(self._topics), client=self._backend.name)
        return consumer

    def _consume(self, consumer: Consumer) -> None:
        while not self._closing.is_set():
            self._serve_commit_requests(consumer)
            now = time.monotonic()
            if now - self._last_export > self._config.commit_without_scrape_seconds:
                self._commit(consumer, self._offsets.processed(), "no_scrape")
                self._last_export = now
            if self._intake_stopped.is_set():
                # Draining: stay in the group (heartbeats, commits for the last scrapes), fetch nothing.
                self._wait_for_handed(consumer)
                self._pause(consumer)
                self._intake_idle.set()
                self._poll_paused(consumer)
                self._check_health(consumer, due=True)
                continue
            records = consumer.poll(POLL_TIMEOUT_MS / 1000, self._config.max_poll_records)
            # After the poll: a round trip answered now voids what the client reported during a wait just over (a
            # commit that waited out an outage); a later report is news (a stopped broker, known at once).
            self._check_health(consumer, due=True)
            self._health.client_report(consumer)
            self._settle_assignment(consumer)
            if records:
                self._hand_over(consumer, records)

    def _check_health(self, consumer: Consumer, due: bool = False) -> None:
        """The round trip (Health.check); with `due`, only once a second, from every loop the thread waits in."""
        self._health.check(consumer, self._metrics.partition_lag, due)

    def _hand_over(self, consumer: Consumer, records: dict[Partition, list[Record]]) -> None:
        records = self._offsets.take_in_flight(records)
        if not records:
            return
        parts: list[tuple[list[Envelope], dict[Partition, int]]] = [([], {})]
        spans: list[Span] = []
        for tp, messages in records.items():
            topic = self._topics[tp.topic]
            codec = self._codecs[topic.encoding]
            processed = self._offsets.processed_at(tp)
            refetched = sum(1 for message in messages if message.offset < processed)
            if refetched:  # processed by this process before a reconnect (resumed past them): not consumed again
                self._metrics.refetched.labels(topic=tp.topic).inc(refetched)
                messages = messages[refetched:]
            size = 0
            for message in messages:
                value = message.value
                size += len(value)
                try:
                    events, message_spans = codec(value, topic)
                except Exception as exc:  # noqa: BLE001 - any failure is this message's, never the partition's
                    self._dead_letter(message, item_error(exc))
                    events, message_spans = [], []
                for envelope in events:
                    envelope.partition = tp.partition
                if len(parts[-1][0]) + len(events) > self._max_batch and parts[-1][0]:
                    parts.append(([], {}))
                envelopes, offsets = parts[-1]
                envelopes.extend(events)
                spans.extend(message_spans)
                offsets[tp] = message.offset + 1
            self._metrics.records.labels(topic=tp.topic).inc(len(messages))
            self._metrics.bytes.labels(topic=tp.topic).inc(size)
        for envelopes, _ in parts:
            self._metrics.intake.count_accepted(SOURCE, envelopes)
        self._offsets.add_in_flight(len(parts) - 1)  # one was counted when the records were taken
        assert self._loop is not None
        # The previous batch must be in the queue before this one goes (order), and only one
        # may be on its way: fetching and decoding overlap the pipeline, memory stays bounded.
        self._wait_for_handed(consumer)
        self._handed = asyncio.run_coroutine_threadsafe(
            self._enqueue([(envelopes, self._offsets.ack_callback(offsets)) for envelopes, offsets in parts], spans), self._loop
        )

    async def _enqueue(self, parts: list[tuple[list[Envelope], Callable[[], None]]], spans: list[Span]) -> None:
        queued = 0
        try:
            if spans:
                # otlp_proto: the spans join the assembler; the ack then covers them once they are
                # there, so a crash loses traces still being assembled (at most the grace period).
                self._metrics.otlp.spans.labels(encoding="kafka").inc(len(spans))
                await self._spans.take(spans)
            for envelopes, ack in parts:
                await self._queue.put(envelopes, ack)
                queued += 1
        except ShuttingDown:
            self._offsets.release(len(parts) - queued)

    def _wait_for_handed(self, consumer: Consumer) -> None:
        handed, self._handed = self._handed, None
        if handed is None:
            return
        waiting_since = time.monotonic()
        while True:
            try:
                handed.result(timeout=POLL_TIMEOUT_MS / 1000)
                break
            except concurrent.futures.TimeoutError:
                self._serve_commit_requests(consumer)
                self._check_health(consumer, due=True)
                if time.monotonic() - waiting_since < PAUSE_AFTER_SECONDS:
                    continue  # heartbeats go on on the client's own thread; nothing more is fetched meanwhile
                # Still full: stop fetching but poll again, so that a rebalance is served and the group keeps us.
                if not self._paused:
                    self._metrics.pauses.inc()
                self._pause(consumer)
                self._poll_paused(consumer)
        if self._paused and not self._intake_stopped.is_set():
            consumer.resume_all()
            self._paused = False

    def _pause(self, consumer: Consumer) -> None:
        consumer.pause(consumer.assignment())
        self._paused = True

    def _poll_paused(self, consumer: Consumer) -> None:
        records = consumer.poll(POLL_TIMEOUT_MS / 1000, self._config.max_poll_records)
        self._settle_assignment(consumer)
        # A partition assigned during this poll is not paused yet: rewind what it returned, read again after resume.
        for tp, messages in records.items():
            consumer.seek(tp, messages[0].offset)
            consumer.pause([tp])

    def _serve_commit_requests(self, consumer: Consumer) -> None:
        merged: dict[Partition, int] = {}
        waiting: list[concurrent.futures.Future[bool]] = []
        while True:
            try:
                offsets, done = self._commit_requests.get_nowait()
            except queue.Empty:
                break
            waiting.append(done)
            for tp, offset in offsets.items():
                merged[tp] = max(offset, merged.get(tp, -1))
        if not waiting:
            return
        committed = False
        try:
            committed = self._commit(consumer, merged, "scrape")
        finally:
            for done in waiting:
                done.set_result(committed)

    def _commit(self, consumer: Consumer, offsets: dict[Partition, int], trigger: str) -> bool:
        """Commits what of `offsets` is due; whether everything of them is committed now."""
        due = self._offsets.due(offsets)
        if not due:
            return True
        if self._health.reason is not None:
            return False  # known down (or not up yet): no call that would wait for the broker
        self._committing_since = time.monotonic()
        try:
            if self._producer is not None:
                # Dead letters are durable before their offsets move on; no longer than a scrape waits.
                self._producer.flush(EXPORT_COMMIT_TIMEOUT_SECONDS)
            consumer.commit(due, EXPORT_COMMIT_TIMEOUT_SECONDS)
        except ClientError as exc:
            self._metrics.commit_failures.inc()
            log.warning("offset commit failed", trigger=trigger, error=f"{type(exc).__name__}: {exc}")
            if isinstance(exc, BrokerUnreachable):
                self._health.down("lost the connection to", exc)
            return False
        finally:
            self._committing_since = None
        self._offsets.committed(due)
        self._metrics.commits.labels(trigger=trigger).inc()
        return True

    def _dead_letter(self, message: Record, error: EventError) -> None:
        self._metrics.intake.events_invalid.labels(source=SOURCE, reason=error.reason.value).inc()
        log.info("kafka message rejected", topic=message.partition.topic, partition=message.partition.partition,
                 offset=message.offset, reason=error.reason.value, field=error.field)
        topic = self._config.dead_letter_topic
        if topic is None:
            return
        if self._producer is None:
            self._producer = self._backend.producer()
        headers = [("ragpulse.error.reason", error.reason.value.encode()), ("ragpulse.error.field", error.field.encode()),
                   ("ragpulse.error.message", error.message.encode()),
                   ("ragpulse.origin.topic", message.partition.topic.encode()),
                   ("ragpulse.origin.partition", str(message.partition.partition).encode()),
                   ("ragpulse.origin.offset", str(message.offset).encode())]
        self._producer.send(topic, message.value, message.key, headers)
        self._metrics.dead_letters.labels(topic=message.partition.topic).inc()

    def _close_consumer(self) -> None:
        if self._consumer is None:
            return
        try:
            self._consumer.close()
        except Exception as exc:
            log.warning("closing the kafka consumer failed", error=f"{type(exc).__name__}: {exc}")
        self._consumer = None
        # A failed close may not have run the revoke callback: nothing is owned now, whatever the client said.
        self._offsets.disconnected()
        self._metrics.partition_lag.release()
        self._metrics.assigned.set(0)

    # -- rebalance callbacks (client.RebalanceHandler), from inside poll --------------------
    # kafka-python runs them on its IO thread, where blocking consumer calls are not allowed;
    # so what needs one (committed offsets, the dedup restore) runs on the consumer thread
    # after poll returns, before any record of the new partitions is handed over.

    def offsets_to_commit_on_revoke(self, revoked: set[Partition]) -> dict[Partition, int]:
        if self._closing.is_set():
            return {}  # leaving the group: the last scrape committed what it exported
        # Let the pipeline finish what we handed over, then commit it for the next owner.
        due, waited = self._offsets.due_on_revoke(revoked, REVOKE_WAIT_SECONDS)
        log.info("kafka partitions revoked", partitions=len(revoked), waited_for_pipeline_s=round(waited, 3))
        return due

    def revoke_commit_done(self, error: str | None) -> None:
        if error is None:
            self._offsets.revoke_committed()
            self._metrics.commits.labels(trigger="rebalance").inc()
        else:
            self._metrics.commit_failures.inc()
            log.warning("offset commit on rebalance failed", error=error)

    def forget(self, revoked: set[Partition]) -> None:
        """Revoked or lost: what of these partitions is exported here goes (the lag series too)."""
        self._revoked |= revoked
        self._metrics.partition_lag.release(revoked)
        self._metrics.assigned.set(self._offsets.forget(revoked))
        log.info("kafka partitions released", partitions=sorted(f"{tp.topic}/{tp.partition}" for tp in revoked))

    def note_assigned(self, assigned: set[Partition]) -> None:
        # Both clients rebalance eagerly (every partition revoked, then the new assignment): a partition is gone to
        # another member when it was revoked and is not assigned back.
        lost = frozenset(tp.partition for tp in self._revoked) - {tp.partition for tp in assigned}
        self._held -= self._revoked - assigned
        self._revoked = set()
        if lost and self._on_partitions_lost is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(self._on_partitions_lost, lost)
        self._metrics.rebalances.inc()
        self._metrics.assigned.set(self._offsets.assign(assigned))
        self._metrics.partition_lag.assign(assigned)
        if (self._paused or self._intake_stopped.is_set()) and assigned and self._consumer is not None:
            self._consumer.pause(assigned)

    # -- on the consumer thread, after poll ----------------------------------------------------

    def _settle_assignment(self, consumer: Consumer) -> None:
        assigned = self._offsets.take_newly_assigned()
        if not assigned:
            return
        committed = consumer.committed(assigned)
        # Ours, processed before the connection was lost and not committed since by anyone: skipped (the next
        # scrape commits them), instead of counted twice.
        resumed, lost = self._offsets.settle(assigned, committed)
        if lost:
            log.warning("partitions with processed, uncommitted events went to another member: those events are "
                        "counted here and by their new owner", partitions=sorted(f"{tp.topic}/{tp.partition}" for tp in lost))
        for tp, position in resumed.items():
            consumer.seek(tp, position)
        if resumed:
            log.info("kafka partitions resumed from this process's own position",
                     partitions={f"{tp.topic}/{tp.partition}": offset for tp, offset in resumed.items()})
        self._restore(consumer, committed, replayed=assigned - self._held if self._on_replay is not None else set())
        if self.on_share is not None and self._loop is not None:
            owned, counts = self._offsets.owned(), consumer.partition_counts(list(self._topics), HEALTH_TIMEOUT_SECONDS)
            self._loop.call_soon_threadsafe(self.on_share, owned, sum(counts.values()))
        self._held |= assigned
        log.info("kafka partitions assigned", partitions=sorted(f"{tp.topic}/{tp.partition}" for tp in assigned))

    def _restore(self, consumer: Consumer, committed: dict[Partition, int], replayed: set[Partition]) -> None:
        config = self._config
        dedup = restore_ranges(consumer, committed, config.dedup_restore_seconds, config.dedup_restore_max_messages)
        replay = restore_ranges(consumer, {tp: offset for tp, offset in committed.items() if tp in replayed},
                                self._replay_seconds, REPLAY_MAX_MESSAGES)
        if not dedup and not replay:
            return
        found = read_back(self._backend, dedup, replay, self._topics, self._codecs, RESTORE_TIMEOUT_SECONDS)
        if self._loop is not None:
            # Scheduled before any batch of these partitions, so the pipeline sees them first.
            if found.identities:
                self._loop.call_soon_threadsafe(self._dedup.remember, found.identities)
            if found.events and self._on_replay is not None:
                self._loop.call_soon_threadsafe(self._on_replay, list(found.events))
        self._metrics.dedup_restored.inc(len(found.identities))
        self._metrics.replayed.labels(outcome="replayed").inc(len(found.events))
        self._metrics.replayed.labels(outcome="over_budget").inc(found.over_budget)
        log.info("restored from kafka", identities=len(found.identities), replayed=len(found.events),
                 partitions=len(dedup.keys() | replay.keys()))
