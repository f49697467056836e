"""Several replicas behind the OpenTelemetry Collector's load balancer (the `load_balancing` exporter, trace-id
routing, static resolver), against one replica on the same input: every trace assembled once, complete, on
exactly one replica, and every counter summed over the replicas equal to the single replica's."""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from otelcol import Collector, collector_binary
from support import (PrometheusProcess, RagpulseProcess, Samples, exported_metrics, http, start_prometheus, start_ragpulse,
                     wait_until)

from ragpulse.mixin.rules import RULES_FILE

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from otlp_payload import kv  # noqa: E402  # the bench's OTLP attribute builder

TRACES = 3_000
WARM_UP = 300
SAMPLED = 30  # scrapes (1 s apart) behind the compared rates: at 10, the stretch still moved ratios by a point
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


def trace_spans(rnd: random.Random, index: int) -> list[Span]:
    """A LlamaIndex-shaped trace under OpenInference's conventions: query > retrieve, query > llm."""
    trace_id, ids = rnd.randbytes(16), [rnd.randbytes(8) for _ in range(3)]
    answer = ANSWERS[index % len(ANSWERS)]
    start = 1_764_000_000_000_000_000 + index * 10_000_000
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
    """Three replicas and a single one, each with its own bad-case store; the local judge on a fixed sample
    (no routine floor: a floor raises each replica's rate by its own traffic). A trace's second part reaches a
    replica through the load balancer's own batching: at a grace of 0.5 s, one run in about eight assembled a
    trace before its LLM span came (a model "unknown", then a late span); 2 s covers it on a loaded machine."""
    started = [start_ragpulse(tmp_path, "--set", "judge.mode=local", "--set", "judge.sample_rate=0.2",
                              "--set", "judge.min_routine_per_minute=0", "--set", "otlp.grace_seconds=2",
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
    prometheus = [start_prometheus(tmp_path, [f"127.0.0.1:{r.port}" for r in targets], [fast_rules])
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
                               for p in prometheus), timeout=SAMPLED + 30, what=f"{SAMPLED} scrapes of every replica")
        many, one = (recorded_ratios(p) for p in prometheus)
        assert set(many) == set(one) and len(one) >= 10, (sorted(set(many) ^ set(one)), len(one))
        apart = {key: (many[key], one[key]) for key in one if abs(many[key] - one[key]) > 0.002}
        assert not apart, "\n".join(f"{k[0]} {sorted(k[1])}: {v}" for k, v in apart.items())
    finally:
        collector.stop()
        for instance in prometheus:
            instance.stop()
