"""Scaling out on Kafka (docs/scaling-out.md): one consumer group of three replicas, one killed -9 and one restarted
mid-stream, counts and joins what one replica does; the forwarder of the two-tier way publishes keyed by session and
holds within its caps while the broker is away. Against a real Apache Kafka broker (started by scripts/test)."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import threading
from collections.abc import Callable
from pathlib import Path

from helpers.events import trace
from helpers.kafka_broker import create_topic, kafka_args, kafka_bootstrap, produce
from helpers.kafka_waits import Scraper
from helpers.metrics import Samples
from helpers.sidecar import start_ragpulse
from helpers.waiting import wait_until, wait_until_async

KAFKA_SESSIONS, TURNS_PER_SESSION = 2_500, 10  # 25,000 traces, and feedback on every second one: 30,000 events


def keyed_stream() -> tuple[list[bytes], list[bytes], int]:
    """Sessions interleaved as live traffic is, each message keyed by its session id; thumbs on every second answer
    of a session, by trace and session id, right after the answer; every 50th message delivered twice (a producer
    retry). Returns the values, the keys and how many duplicates."""
    rnd = random.Random(3)
    events: list[dict[str, object]] = []
    turn = [0] * KAFKA_SESSIONS
    open_sessions = list(range(KAFKA_SESSIONS))
    while open_sessions:
        session = rnd.choice(open_sessions)
        trace_id = f"s{session}-t{turn[session]}"
        events.append(trace(trace_id, session_id=f"session-{session}", query=f"question {turn[session]} of {session}"))
        if turn[session] % 2 == 1:
            events.append({"type": "feedback", "kind": "thumbs", "value": "down" if session % 3 else "up",
                           "trace_id": trace_id, "session_id": f"session-{session}"})
        turn[session] += 1
        if turn[session] == TURNS_PER_SESSION:
            open_sessions.remove(session)
    stream = [e for i, e in enumerate(events) for _ in range(2 if i % 50 == 0 else 1)]
    return [json.dumps(e).encode() for e in stream], [str(e["session_id"]).encode() for e in stream], len(stream) - len(events)


def lag_series(samples: Samples, topic: str) -> dict[int, float]:
    """A replica's consumer lag by partition of `topic`."""
    return {int(dict(labels)["partition"]): value for (name, labels), value in samples.items()
            if name == "ragpulse_kafka_consumer_lag_records" and dict(labels)["topic"] == topic}



def test_three_kafka_replicas_with_a_kill_and_a_restart_count_and_join_what_one_replica_does(tmp_path: Path) -> None:
    """What Prometheus kept of each process (its last scrape), summed, is exact: every trace and feedback counted
    once, every duplicate counted as one; and every feedback is joined to its answer, as one replica joins it, also
    when its answer was read by the killed or the restarted replica before the commit (the new owner reads it back)."""
    topic, group = f"sessions-{random.randrange(1 << 30):x}", f"replicas-{random.randrange(1 << 30):x}"
    create_topic(topic, partitions=6)
    values, keys, duplicates = keyed_stream()
    traces, feedback = KAFKA_SESSIONS * TURNS_PER_SESSION, KAFKA_SESSIONS * TURNS_PER_SESSION // 2
    # Sessions must not go idle while a partition waits for its new owner (a kill's session timeout, a restart), or
    # the replicas would settle what one replica, never stalled, does not.
    settle = ["--set", "satisfaction.idle_seconds=20"]
    args = [*kafka_args(topic, group, max_poll_records=200, commit_without_scrape_seconds=3600, session_timeout_seconds=6),
            *settle]
    single = start_ragpulse(tmp_path, *kafka_args(topic, group + "-single"), *settle)
    replicas = [start_ragpulse(tmp_path, *args) for _ in range(3)]
    scrapers = [Scraper(r, interval=0.1) for r in replicas]
    kept: list[Samples] = []  # the last scrape of each process that is gone
    try:
        wait_until(lambda: [s.last.get_value("ragpulse_kafka_assigned_partitions") for s in scrapers] == [2, 2, 2],
                   timeout=120, what="the group's three members with two partitions each")
        producer = threading.Thread(target=lambda: [produce(topic, values[i:i + 3000], keys[i:i + 3000])
                                                    for i in range(0, len(values), 3000)])
        producer.start()

        def counted() -> float:
            return sum(s.total("ragpulse_traces_total") for s in kept) + sum(s.last.total("ragpulse_traces_total") for s in scrapers)

        wait_until(lambda: counted() >= 0.3 * traces, timeout=60, what="30% counted")
        kept.append(scrapers[0].stop())  # the scrape that committed last; the kill comes right after it
        replicas[0].process.send_signal(signal.SIGKILL)
        replicas[0].process.wait()
        scrapers.pop(0)
        replicas.pop(0)
        wait_until(lambda: counted() >= 0.6 * traces, timeout=60, what="60% counted")
        kept.append(scrapers[0].stop())
        assert replicas[0].terminate() == 0  # a rolling restart: the drain's last scrape was the scraper's
        replicas[0] = start_ragpulse(tmp_path, *args)
        scrapers[0] = Scraper(replicas[0], interval=0.1)
        producer.join()

        def caught_up() -> bool:
            """Everything counted, and each replica measured at no lag on each of its three partitions."""
            return (counted() == traces and all(
                len(lag_series(s.last, topic)) == s.last.get_value("ragpulse_kafka_assigned_partitions") == 3
                and not any(lag_series(s.last, topic).values()) for s in scrapers))

        try:
            wait_until(caught_up, timeout=120, what=f"{traces} traces counted over the replicas, no lag")
        except AssertionError as exc:
            raise AssertionError(f"{exc}: counted {counted()}, kept {[s.total('ragpulse_traces_total') for s in kept]}, "
                                 f"running {[(s.last.total('ragpulse_traces_total'), {k: v for k, v in s.last.items() if k[0] == 'ragpulse_kafka_consumer_lag_records'}, s.last.get_value('ragpulse_kafka_assigned_partitions'), s.last.total('ragpulse_kafka_scrapes_refused_total')) for s in scrapers]}; logs {[r.log_path for r in replicas]}") from None
        one = single.wait_processed(traces, feedback)
        final = [*kept, *(s.stop() for s in scrapers)]
        # No replica exports the lag of a partition it does not own: summed over replicas (as a dashboard or a lag
        # alert does) each partition counts once. A stale series once added 507 + 528 records no one had.
        exported = [set(lag_series(s, topic)) for s in final[len(kept):]]
        assert sorted(p for e in exported for p in e) == list(range(6)), exported

        def summed(name: str, **labels: str) -> float:
            return sum(s.get_value(name, **labels) for s in final)

        assert summed("ragpulse_events_processed_total", type="trace") == traces
        assert summed("ragpulse_events_processed_total", type="feedback") == feedback
        assert summed("ragpulse_events_duplicate_total", type="trace") + summed(
            "ragpulse_events_duplicate_total", type="feedback") == duplicates
        joins = {o: summed("ragpulse_feedback_joins_total", outcome=o) for o in ("joined", "key_mismatch", "orphan", "late")}
        theirs = {o: one.get_value("ragpulse_feedback_joins_total", outcome=o) for o in joins}
        assert theirs == {"joined": feedback, "key_mismatch": 0, "orphan": 0, "late": 0}
        assert joins == theirs, (joins, theirs)
        assert sum(s.get_value("ragpulse_kafka_join_replayed_total", outcome="replayed") for s in final) > 0
        # Every signal as one replica counts it once the sessions settle (the new owners replayed the open sessions of
        # the killed and the restarted replica): the thumbs on their answers' labels, rephrases, silent accepts.
        wait_until(lambda: all(r.metrics().get_value("ragpulse_feedback_join_entries", table=table) == 0
                               for r in [*replicas, single] for table in ("reorder", "sessions")), timeout=45,
                   what="every session settled")
        final[-len(replicas):] = [r.metrics() for r in replicas]
        one = single.metrics()
        signals = {k: v for k, v in one.items() if k[0] in ("ragpulse_satisfaction_signals_total", "ragpulse_session_turns_total") and v}
        summed_signals = {k: sum(s.get(k, 0.0) for s in final) for k in signals}
        assert summed_signals == signals, {k: (summed_signals[k], v) for k, v in signals.items() if summed_signals[k] != v}
        assert one.total("ragpulse_satisfaction_signals_total", signal="thumbs_down") == 8_330
    finally:
        for scraper in scrapers:
            scraper.stop()
        for replica in [*replicas, single]:
            replica.terminate()


def test_the_forwarder_publishes_keyed_by_session_and_holds_within_its_caps_while_the_broker_is_away() -> None:
    from prometheus_client import CollectorRegistry

    from ragpulse.collector.events import FeedbackEvent, TraceEvent
    from ragpulse.config import ForwardConfig, KafkaConfig
    from ragpulse.exporters.forward import KafkaForwarder
    from ragpulse.sources.kafka.backends import backend
    from helpers.events import envelope
    from helpers.kafka_broker import consume_all
    from helpers.net import free_port

    events = [TraceEvent(trace_id=f"t{i}", query="q", answer="a", session_id=f"s{i % 7}" if i % 4 else None) for i in range(40)]
    events += [FeedbackEvent(kind="thumbs", value="up", trace_id="t1", session_id="s1"), FeedbackEvent(kind="copy", trace_id="t2")]
    too_large = TraceEvent(trace_id="big", query="q", answer="a" * 3000)  # past the analysers' limits: dropped here

    async def forward(kafka: KafkaConfig, config: ForwardConfig, registry: CollectorRegistry,
                      until: Callable[[KafkaForwarder], bool]) -> KafkaForwarder:
        forwarder = KafkaForwarder(config, backend(kafka).producer, registry, max_message_bytes=2000)
        await forwarder.start()
        for event in [*events, too_large]:
            forwarder(envelope(event))
        await wait_until_async(lambda: until(forwarder), timeout=30, what="the forwarder's sends or drops")
        await forwarder.shutdown()
        return forwarder

    topic = f"forwarded-{random.randrange(1 << 30):x}"
    create_topic(topic, partitions=3)
    registry = CollectorRegistry()
    asyncio.run(forward(KafkaConfig(bootstrap_servers=kafka_bootstrap(), topics=[]), ForwardConfig(topic=topic, batch_events=8),
                        registry, lambda _: (registry.get_sample_value("ragpulse_forward_sent_total", {"type": "trace"}) or 0) == 40))
    assert registry.get_sample_value("ragpulse_forward_sent_total", {"type": "feedback"}) == 2
    assert registry.get_sample_value("ragpulse_forward_dropped_total", {"reason": "too_large"}) == 1
    messages = consume_all(topic, len(events))
    keyed = sorted((m.key.decode(), json.loads(m.value)["type"], json.loads(m.value)["trace_id"]) for m in messages)
    expected = sorted((e.session_id or e.trace_id, "trace" if isinstance(e, TraceEvent) else "feedback", e.trace_id) for e in events)
    assert keyed == expected

    away = CollectorRegistry()  # nothing listens on the port: the broker is away the whole time
    asyncio.run(forward(
        KafkaConfig(bootstrap_servers=f"127.0.0.1:{free_port()}", topics=[]),
        ForwardConfig(topic=topic, max_queue_events=30, batch_events=10, shutdown_timeout_seconds=1), away,
        lambda f: (away.get_sample_value("ragpulse_forward_dropped_total", {"reason": "queue_full"}) or 0) > 0))
    dropped = {reason: away.get_sample_value("ragpulse_forward_dropped_total", {"reason": reason})
               for reason in ("queue_full", "too_large", "shutdown")}
    assert dropped == {"queue_full": 12, "too_large": 1, "shutdown": 30}
    assert (away.get_sample_value("ragpulse_forward_sent_total", {"type": "trace"}), away.get_sample_value("ragpulse_forward_queued_events")) == (0, 0)
