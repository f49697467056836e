"""Several replicas behind the OpenTelemetry Collector's load balancer (the `load_balancing` exporter, trace-id
routing, static resolver), against one replica on the same input: every trace assembled once, complete, on
exactly one replica, and every counter summed over the replicas equal to the single replica's. And the two-tier
way (docs/scaling-out.md): the load balancer's replicas forward assembled events to Kafka by session, and a
consumer group of analysing replicas gets each session whole: its signals as one replica counts them."""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from helpers.alerting import PrometheusProcess, start_prometheus
from helpers.events import ndjson
from helpers.kafka_broker import create_topic, kafka_args, kafka_bootstrap
from helpers.metrics import Samples, exported_metrics
from helpers.net import http
from helpers.otelcol import Collector, collector_binary
from helpers.otlp_payload import kv
from helpers.sidecar import RagpulseProcess, start_ragpulse
from helpers.waiting import wait_until
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from ragpulse.mixin.rules import RULES_FILE

TRACES = 3_000
WARM_UP = 300
# Scrapes behind the compared rates, a quarter second apart: increase() stretches each target's change by up to
# about an interval over the sampled span, differently per target. At 10 scrapes a second apart ratios moved by a
# point; at 30 by 0.0002-0.0023 (over 0.002 in one CI run of many); 120 in the same 30 s: 0.00001-0.00005 here.
SCRAPE_INTERVAL = 0.25
SAMPLED = 120
REPLICAS = 3
QUESTION = "How many days do I have to return unused items?"
CHUNKS = [("kb-returns", "Returns are accepted within 30 days of delivery for unused items.", 0.91),
          ("kb-shipping", "Standard shipping takes 3 to 5 business days.", 0.42)]
ANSWERS = ["Unused items can be returned within 30 days of delivery.",  # grounded
           "Unused items can be returned within 45 days of delivery.",  # a number the chunks contradict
           "I'm sorry, I don't know the answer to that."]  # a fallback
# Not per trace: requests and connections (the load balancer batches differently from the app, and speaks gRPC
# where the test speaks HTTP: spans received are compared summed over encodings), and what a replica's own
# judgment cache saves (each replica judges a repeated question once: N replicas N times) and how long it takes.
PER_REPLICA = ("ragpulse_otlp_requests_total", "ragpulse_http_", "ragpulse_otlp_spans_received_total",
               "ragpulse_judge_cache_hits_total", "ragpulse_local_judge_duration_seconds")


def trace_spans(rnd: random.Random, index: int, start: int | None = None) -> list[Span]:
    """A LlamaIndex-shaped trace under OpenInference's conventions: query > retrieve, query > llm; its root started at
    `start` (epoch nanoseconds), else 10 ms after the previous index's."""
    trace_id, ids = rnd.randbytes(16), [rnd.randbytes(8) for _ in range(3)]
    answer = ANSWERS[index % len(ANSWERS)]
    start = 1_764_000_000_000_000_000 + index * 10_000_000 if start is None else start
    shapes: list[tuple[str, int | None, dict[str, object]]] = [
        ("query", None, {"openinference.span.kind": "CHAIN", "input.value": QUESTION, "output.value": answer}),
        ("retrieve", 0, {"openinference.span.kind": "RETRIEVER", "input.value": QUESTION,
                         **{f"retrieval.documents.{i}.document.{key}": value for i, (doc, text, score) in enumerate(CHUNKS)
                            for key, value in (("id", doc), ("content", text), ("score", score))}}),
        ("llm", 0, {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini", "llm.token_count.prompt": 300,
                    "llm.token_count.completion": 12 + index % 7, "llm.output_messages.0.message.content": answer}),
    ]
    return [Span(trace_id=trace_id, span_id=ids[i], parent_span_id=ids[parent] if parent is not None else b"", name=name,
                 kind=Span.SPAN_KIND_INTERNAL, start_time_unix_nano=start + i, end_time_unix_nano=start + 900_000_000 - i,
                 attributes=[kv(k, v) for k, v in attributes.items()])
            for i, (name, parent, attributes) in enumerate(shapes)]


def export_requests(traces: int, seed: int = 5) -> list[bytes]:
    """The traces' spans in requests of about 100 spans, each trace's spans over two requests or more and in no
    order (a child often before its root), as several app processes and retries deliver them."""
    rnd = random.Random(seed)
    pieces = []
    for index in range(traces):
        spans = trace_spans(rnd, index)
        rnd.shuffle(spans)
        cut = rnd.randrange(1, len(spans))
        pieces += [spans[:cut], spans[cut:]]
    rnd.shuffle(pieces)
    resource = {"attributes": [kv("service.name", "shop-bot"), kv("service.version", "1.0")]}
    requests, batch = [], []
    for piece in pieces:
        batch += piece
        if len(batch) >= 100:
            requests.append(batch)
            batch = []
    requests.append(batch)
    return [ExportTraceServiceRequest(resource_spans=[ResourceSpans(resource=resource, scope_spans=[ScopeSpans(
        scope={"name": "openinference.instrumentation.llama_index"}, spans=spans)])]).SerializeToString()
        for spans in requests if spans]


def post(url: str, body: bytes) -> None:
    answer = http("POST", url, body, {"Content-Type": "application/x-protobuf"})
    assert answer.status == 200, answer.body[:300]


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[list[RagpulseProcess]]:
    """Three replicas and a single one, each with its own bad-case store; the local judge at a base rate of 0.2
    under the shipped routine floor (judge.min_routine_per_minute 40), the three told they share the traffic
    (judge.replicas 3, as the Helm chart sets it from its replica count): each counts the app's traffic as three
    times its own, so the floor is drawn once over the three, as the single replica draws it. A trace's second
    part reaches a replica through the load balancer's own batching: at a grace of 0.5 s, one run in about eight
    assembled a trace before its LLM span came (a model "unknown", then a late span); 2 s covers it on a loaded machine."""
    started = [start_ragpulse(tmp_path, "--set", "judge.mode=local", "--set", "judge.sample_rate=0.2",
                              "--set", f"judge.replicas={1 if n == REPLICAS else REPLICAS}", "--set", "otlp.grace_seconds=2",
                              "--set", f"results.sqlite_path={tmp_path / f'badcases-{n}.sqlite3'}")
               for n in range(REPLICAS + 1)]
    yield started
    for replica in started:
        replica.terminate()


def per_trace_series(samples: Samples, kinds: dict[str, str]) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """The counters and histograms of ragpulse that count traces, judgments and signals, not transport."""
    def family(name: str) -> str:
        for suffix in ("_bucket", "_count", "_sum"):
            if name.endswith(suffix) and kinds.get(name.removesuffix(suffix)) == "histogram":
                return name.removesuffix(suffix)
        return name

    return {key: value for key, value in samples.items()
            if kinds.get(family(key[0])) in ("counter", "histogram") and not key[0].startswith(PER_REPLICA)}


def recorded_ratios(prometheus: PrometheusProcess) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every recorded 5-minute ratio, by name and labels."""
    return {(r["metric"]["__name__"], frozenset((k, v) for k, v in r["metric"].items() if k != "__name__")): float(r["value"][1])
            for r in prometheus.query('{__name__=~".+:ratio5m"}')}


def test_three_replicas_behind_the_load_balancer_count_what_one_replica_counts(
        replicas: list[RagpulseProcess], tmp_path: Path) -> None:
    *behind, single = replicas
    rules = yaml.safe_load(RULES_FILE.read_text())
    for group in rules["groups"]:
        group["interval"] = "1s"  # the shipped 1m, made short for the test
    fast_rules = tmp_path / "rules.yaml"
    fast_rules.write_text(yaml.safe_dump(rules))
    # One real Prometheus scraping the three replicas, one the single replica; both evaluate the shipped rules.
    prometheus = [start_prometheus(tmp_path, [f"127.0.0.1:{r.port}" for r in targets], [fast_rules],
                                   scrape_interval=f"{int(SCRAPE_INTERVAL * 1000)}ms")
                  for targets in (behind, [single])]
    collector = Collector(collector_binary(), tmp_path)
    collector.start({
        "receivers": collector.receivers(),
        "exporters": {"load_balancing": {
            "routing_key": "traceID",
            "protocol": {"otlp": {"timeout": "5s", "tls": {"insecure": True}}},
            "resolver": {"static": {"hostnames": [f"127.0.0.1:{replica.grpc_port}" for replica in behind]}}}},
        "service": {"pipelines": {"traces": {"receivers": ["otlp"], "exporters": ["load_balancing"]}},
                    "telemetry": {"metrics": {"level": "none"}}},
    })
    try:
        def complete(replica: RagpulseProcess) -> float:
            return replica.metrics().total("ragpulse_otlp_traces_total")

        def scraped(instance: PrometheusProcess) -> float:
            return instance.value("sum(ragpulse_traces_total)") or 0

        # A tenth of the traces first, scraped: every series the rules read then exists on every replica before the
        # rest comes (increase() cannot see what a series counted before its first scrape; with 30 traces first,
        # some replica's series were born in the bulk and its ratios moved by points).
        warm_up, rest = export_requests(WARM_UP, seed=9), export_requests(TRACES - WARM_UP)
        for batch, total in ((warm_up, WARM_UP), (rest, TRACES)):
            for body in batch:
                post(f"http://127.0.0.1:{collector.http_port}/v1/traces", body)
                post(f"http://127.0.0.1:{single.otlp_port}/v1/traces", body)
            wait_until(lambda: sum(complete(r) for r in behind) == total and complete(single) == total, timeout=90,
                       what=f"{total} traces assembled behind the load balancer and on the single replica")
            wait_until(lambda: all(scraped(p) == total for p in prometheus), timeout=30, what=f"{total} traces scraped")

        def idle(replica: RagpulseProcess) -> bool:
            s = replica.metrics()
            return s.get_value("ragpulse_judge_queue_depth") == 0 and s.get_value("ragpulse_queue_depth_events", queue="pipeline") == 0

        wait_until(lambda: all(idle(r) for r in replicas), timeout=60, what="every replica's judge idle")
        kinds = {name.removesuffix("_total") if kind == "counter" else name: kind
                 for name, (kind, _) in exported_metrics().items()}
        kinds.update({name: kind for name, (kind, _) in exported_metrics().items()})
        ours = [per_trace_series(r.metrics(), kinds) for r in behind]
        theirs = per_trace_series(single.metrics(), kinds)
        # Each trace on exactly one replica, complete: no replica assembled a part of one.
        outcomes = {key: value for key, value in theirs.items() if key[0] == "ragpulse_otlp_traces_total" and value}
        assert outcomes == {("ragpulse_otlp_traces_total", frozenset({("outcome", "complete")})): TRACES}, outcomes
        assert all(r.get(key, 0) > 0 for r in ours for key in outcomes), "every replica took a share"
        assert sum(r.metrics().total("ragpulse_otlp_spans_received_total") for r in behind) == 3 * TRACES
        assert single.metrics().total("ragpulse_otlp_spans_received_total") == 3 * TRACES
        summed = {key: sum(r.get(key, 0.0) for r in ours) for key in set(theirs) | {k for r in ours for k in r}}
        # Exact, but for the sums of histograms, added in another order (floating point: within 1e-12 relative).
        differing = {key: (summed[key], theirs.get(key, 0.0)) for key in summed
                     if summed[key] != (pytest.approx(theirs.get(key, 0.0), rel=1e-12) if key[0].endswith("_sum")
                                        else theirs.get(key, 0.0))}
        assert not differing, "\n".join(f"{k[0]} {sorted(k[1])}: {v}" for k, v in sorted(differing.items(), key=str))
        # The rules: every recorded 5-minute ratio over the three replicas is the single replica's, within what
        # Prometheus's extrapolation makes of series scraped at different moments: increase() stretches each
        # series' change to the window's end by its own sampled span, a stretch that is the same for a ratio's two
        # counters of one target (one replica: it cancels) but not across targets (less, the longer sampled).
        wait_until(lambda: all((p.value("min(count_over_time(ragpulse_traces_total[5m]))") or 0) >= SAMPLED
                               for p in prometheus), timeout=SAMPLED * SCRAPE_INTERVAL + 30,
                   what=f"{SAMPLED} scrapes of every replica")
        many, one = (recorded_ratios(p) for p in prometheus)
        assert set(many) == set(one) and len(one) >= 10, (sorted(set(many) ^ set(one)), len(one))
        apart = {key: (many[key], one[key]) for key in one if abs(many[key] - one[key]) > 0.002}
        assert not apart, "\n".join(f"{k[0]} {sorted(k[1])}: {v}" for k, v in apart.items())
    finally:
        collector.stop()
        for instance in prometheus:
            instance.stop()


# -- the two-tier way: assembling replicas forward to Kafka, analysing replicas consume it by session ---------------

SESSIONS = 120
TURN_GAP, SLOT = 1.0, 0.1  # a session's turns a second apart; the app exports every 0.1 s
# A session's questions, by session index mod 4: each second and third question is a repeat, a rephrase, a
# follow-up or a new topic of the one before, as the join's classifier (feedback/satisfaction.py) tells them.
SESSION_QUESTIONS = [
    [QUESTION, QUESTION, "What is the time limit for sending back unused items?"],
    [QUESTION, "What's the time limit to return unused items?", "And what about opened items?"],
    [QUESTION, "What about opened items?", QUESTION],
    [QUESTION, "Do you ship to Canada?", "How long does standard shipping take?"],
]


def session_schedule(seed: int) -> list[tuple[float, bytes]]:
    """What the app exports, as (seconds from the start, request): every session's three turns a second apart (the
    session id on the root, started when the turn was asked), sessions starting 1/120 s apart; each 0.1 s one request
    with the spans of the turns asked in it, each turn's spans cut in two, out of order, its second part in the next
    request (the app's exporter batching)."""
    rnd = random.Random(seed)
    slots: list[list[Span]] = [[] for _ in range(int(3 * TURN_GAP / SLOT) + 2)]
    for session in range(SESSIONS):
        for turn in range(3):
            asked = session / SESSIONS + turn * TURN_GAP
            spans = trace_spans(rnd, session * 3 + turn, start=1_764_000_000_000_000_000 + int(asked * 1e9))
            for span in spans:
                for attribute in span.attributes:
                    if attribute.key == "input.value":
                        attribute.value.string_value = SESSION_QUESTIONS[session % 4][turn]
            spans[0].attributes.append(kv("session.id", f"session-{session}"))
            rnd.shuffle(spans)
            cut, slot = rnd.randrange(1, len(spans)), int(asked / SLOT)
            slots[slot] += spans[:cut]
            slots[slot + 1] += spans[cut:]
    resource = {"attributes": [kv("service.name", "shop-bot")]}
    return [(index * SLOT, ExportTraceServiceRequest(resource_spans=[ResourceSpans(resource=resource, scope_spans=[ScopeSpans(
        scope={"name": "openinference.instrumentation.llama_index"}, spans=rnd.sample(spans, len(spans)))])]).SerializeToString())
        for index, spans in enumerate(slots) if spans]


def session_feedback() -> list[dict[str, object]]:
    """Feedback on sessions' last answers, by session id, as the app's thumbs and ratings send it."""
    return [{"type": "feedback", "kind": kind, "value": value, "session_id": f"session-{session}"}
            for session in range(SESSIONS) for kind, value in [(("thumbs", "down"), ("thumbs", "up"), ("rating", 2))[session % 3]]
            if session % 2 == 0]


ANALYSIS = ("ragpulse_satisfaction_", "ragpulse_session_turns_total", "ragpulse_feedback_joins_total", "ragpulse_traces_total",
            "ragpulse_feedback_total", "ragpulse_fallback", "ragpulse_lexical_", "ragpulse_citation", "ragpulse_tokens_total",
            "ragpulse_retriev", "ragpulse_answer_", "ragpulse_latency")


def analysis_series(samples: Samples) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {key: value for key, value in samples.items() if key[0].startswith(ANALYSIS) and value}


def test_two_tiers_keep_sessions_whole_and_count_what_one_replica_counts(tmp_path: Path) -> None:
    """apps -> the Collector's load balancer (trace ids) -> 2 assembling replicas (forward.topic) -> a Kafka topic of
    3 partitions keyed by session id -> 2 analysing replicas in one group; against one replica fed the same spans and
    feedback directly. A session's turns come a second apart, all sessions at once, and one forwarder is slower than
    the other (its grace 3 s, the other's 1 s: a loaded replica, or a batch the balancer sent again): adjacent turns
    of a session that went to different forwarders reach the topic out of order whenever the earlier went to the
    slower. The analysers classify them in the order asked (satisfaction.reorder_seconds, 5 s by default) and count
    what the single replica counts; a third analyser reading the topic in a group of its own without the hold
    (reorder_seconds 0, the join as it was) counts them as they came, which is not what was asked."""
    topic, group = f"assembled-{random.randrange(1 << 30):x}", f"analysers-{random.randrange(1 << 30):x}"
    create_topic(topic, partitions=3)
    session = ["--set", "satisfaction.idle_seconds=12", "--set", "satisfaction.rephrase_window_seconds=120",
               "--set", "judge.mode=off"]
    forwarders = [start_ragpulse(tmp_path, "--set", f"kafka.bootstrap_servers={kafka_bootstrap()}", "--set", "kafka.topics=[]",
                                 "--set", f"forward.topic={topic}", "--set", f"otlp.grace_seconds={grace}") for grace in (1, 3)]
    analysers = [start_ragpulse(tmp_path, *kafka_args(topic, group, session_timeout_seconds=6), *session) for _ in range(2)]
    as_they_came = start_ragpulse(tmp_path, *kafka_args(topic, group + "-arrival"), *session, "--set",
                                  "satisfaction.reorder_seconds=0")
    single = start_ragpulse(tmp_path, *session, "--set", "otlp.grace_seconds=2")
    collector = Collector(collector_binary(), tmp_path)
    collector.start({
        "receivers": collector.receivers(),
        "exporters": {"load_balancing": {
            "routing_key": "traceID", "protocol": {"otlp": {"timeout": "5s", "tls": {"insecure": True}}},
            "resolver": {"static": {"hostnames": [f"127.0.0.1:{r.grpc_port}" for r in forwarders]}}}},
        "service": {"pipelines": {"traces": {"receivers": ["otlp"], "exporters": ["load_balancing"]}},
                    "telemetry": {"metrics": {"level": "none"}}},
    })
    try:
        wait_until(lambda: [a.metrics().get_value("ragpulse_kafka_assigned_partitions") for a in analysers] in ([1, 2], [2, 1]),
                   timeout=90, what="the analysers' group sharing the 3 partitions")

        state: list[object] = []

        def through(traces: int, feedback: int = 0) -> bool:
            sent = [f.metrics() for f in forwarders]
            processed = [a.metrics() for a in analysers]
            state[:] = [[(s.get_value("ragpulse_forward_sent_total", type="trace"), s.total("ragpulse_otlp_traces_total"),
                          s.total("ragpulse_forward_dropped_total")) for s in sent],
                        [(s.get_value("ragpulse_events_processed_total", type="trace"), s.total("ragpulse_kafka_records_consumed_total"))
                         for s in processed], single.metrics().get_value("ragpulse_events_processed_total", type="trace")]
            return (sum(s.get_value("ragpulse_forward_sent_total", type="trace") for s in sent) == traces
                    and sum(s.get_value("ragpulse_forward_sent_total", type="feedback") for s in sent) == feedback
                    and sum(s.get_value("ragpulse_events_processed_total", type="trace") for s in processed) == traces
                    and sum(s.get_value("ragpulse_events_processed_total", type="feedback") for s in processed) == feedback
                    and single.metrics().get_value("ragpulse_events_processed_total", type="trace") == traces
                    and single.metrics().get_value("ragpulse_events_processed_total", type="feedback") == feedback)

        started = time.monotonic()
        for at, body in session_schedule(seed=11):
            time.sleep(max(0.0, started + at - time.monotonic()))  # the app's pace (nothing waits on it)
            post(f"http://127.0.0.1:{collector.http_port}/v1/traces", body)
            post(f"http://127.0.0.1:{single.otlp_port}/v1/traces", body)
        try:
            wait_until(lambda: through(3 * SESSIONS), timeout=60, what="every turn through both tiers")
        except AssertionError as exc:
            raise AssertionError(f"{exc}: {state}") from None
        feedback = session_feedback()
        for index, event in enumerate(feedback):  # the app's feedback, to any replica of the first tier
            for target in (forwarders[index % 2], single):
                assert target.post("/v1/events", ndjson([event])).status == 200
        wait_until(lambda: through(3 * SESSIONS, len(feedback)), timeout=60, what="the feedback through both tiers")
        wait_until(lambda: [as_they_came.metrics().get_value("ragpulse_events_processed_total", type=kind)
                            for kind in ("trace", "feedback")] == [3 * SESSIONS, len(feedback)], timeout=30,
                   what="the topic read by the analyser without the hold")

        def settled(replica: RagpulseProcess) -> bool:
            samples = replica.metrics()
            return (samples.get_value("ragpulse_feedback_join_entries", table="sessions") == 0
                    and samples.get_value("ragpulse_feedback_join_entries", table="reorder") == 0)

        wait_until(lambda: all(settled(r) for r in [*analysers, as_they_came, single]), timeout=45,
                   what="every session idle, settled")
        first_tier = [f.metrics() for f in forwarders]
        assert sum(s.get_value("ragpulse_otlp_traces_total", outcome="complete") for s in first_tier) == 3 * SESSIONS
        assert all(s.total("ragpulse_forward_dropped_total") == 0 and s.get_value("ragpulse_forward_queued_events") == 0
                   for s in first_tier)
        assert all(analysis_series(s) == {} for s in first_tier), "the first tier analyses nothing"
        ours = [analysis_series(a.metrics()) for a in analysers]
        theirs = analysis_series(single.metrics())
        summed = {key: sum(r.get(key, 0.0) for r in ours) for key in set(theirs) | {k for r in ours for k in r}}
        differing = {key: (summed[key], theirs.get(key, 0.0)) for key in summed
                     if summed[key] != (pytest.approx(theirs.get(key, 0.0), rel=1e-12) if key[0].endswith("_sum")
                                        else theirs.get(key, 0.0))}
        assert not differing, "\n".join(f"{k[0]} {sorted(k[1])}: {v}" for k, v in sorted(differing.items(), key=str))
        turns = {kind: theirs.get(("ragpulse_session_turns_total", frozenset({("kind", kind)})), 0.0)
                 for kind in ("first", "repeat", "rephrase", "follow_up", "new_topic")}
        assert turns == {"first": SESSIONS, "repeat": 30, "rephrase": 30, "follow_up": 60, "new_topic": 120}, turns
        held = [a.metrics() for a in analysers]
        reorder = {o: sum(s.get_value("ragpulse_session_reorder_total", outcome=o) for s in held) for o in ("reordered", "late", "full")}
        arrival = as_they_came.metrics()
        came = {kind: arrival.get_value("ragpulse_session_turns_total", kind=kind) for kind in turns}
        # Out of order on the topic, put back in order by the hold (none later than it, none past its caps); read as
        # they came, the same turns count otherwise.
        assert reorder["reordered"] > 0 and reorder["late"] == reorder["full"] == 0, reorder
        assert came != turns, (came, reorder)
        print(f"two tiers: {reorder['reordered']:g} turns put back in the order asked; read as they came: {came}", file=sys.stderr)
        signals = {dict(key[1])["signal"] for key in theirs if key[0] == "ragpulse_satisfaction_signals_total"}
        assert signals == {"repeat", "rephrase", "silent_accept", "thumbs_down", "thumbs_up", "rating_low"}, signals
        joins = theirs.get(("ragpulse_feedback_joins_total", frozenset({("outcome", "session")})))
        assert joins == len(feedback) == SESSIONS // 2
    finally:
        collector.stop()
        for replica in [*forwarders, *analysers, as_they_came, single]:
            replica.terminate()
