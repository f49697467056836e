"""The interop outputs' parts, exactly: evaluations of a judgment record, OpenTelemetry ids, the Prometheus
to OTLP bridge (names, units, cumulative and delta), the settings' checks, the Phoenix exporter's
handling of spans Phoenix does not have yet (against a server answering as Phoenix's REST API does: the
real one is in test_interop.py), and the span a web app's verdicts go on."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from helpers.metrics import exported_metrics
from helpers.net import free_port
from helpers.otlp_shapes import Collect, http_server_trace, provider
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest, ExportLogsServiceResponse
from opentelemetry.sdk.metrics.export import AggregationTemporality
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from ragpulse.collector.events import TraceEvent
from ragpulse.config import parse_config
from ragpulse.errors import ConfigError
from ragpulse.interop.evaluation_events import EvaluationEvents
from ragpulse.interop.evaluations import Evaluation, evaluations, otel_trace_id
from ragpulse.interop.otlp_metrics import PrometheusBridge, otel_name
from ragpulse.interop.phoenix import PhoenixAnnotations
from ragpulse.judging.exit import build_record
from ragpulse.judging.records import JudgmentRecord, RecordChunk
from ragpulse.judging.sampler import JudgeItem
from ragpulse.judging.verdicts import CitationVerdict, Claim, Judgment
from ragpulse.sources.otlp.keys import MAPPED_KEYS
from ragpulse.sources.otlp.mapping import TraceMapper
from ragpulse.sources.otlp.spans import decode_protobuf

METRICS = (Path(__file__).resolve().parent.parent / "docs" / "metrics.md").read_text(encoding="utf-8")


def record(**fields: Any) -> JudgmentRecord:
    base: dict[str, Any] = dict(
        trace_id="0af7651916cd43dd8448eb211c80319c", judged_at=1.0, app="shop", route="returns", model="m", release="r",
        session_id=None, priority="base_rate", sample="routine", stratum="none", reasons=[], audit=False, fallback=False,
        stage=None, bad=False, query="q", answer="a", chunks=[RecordChunk(text="c")], groundedness=5, hallucination=False,
        supported_share=1.0, claims=[], groundedness_reason="all supported", answer_relevancy=5,
        answer_relevancy_reason="on the question", context_relevance=3, context_relevance_reason="chunk 0 answers it",
        error=None, raw_output=None, judge="llm", judge_model="gpt", prompt_version="judgment.v3", prompt_tokens=1,
        completion_tokens=1, cost=0.0, verdict="grounded", span_id="b7ad6b7169203331")
    return JudgmentRecord(**{**base, **fields})


@pytest.mark.unit
def test_a_judgment_is_one_evaluation_per_metric_and_explanations_only_with_content() -> None:
    bad = record(groundedness=1, hallucination=True, verdict="hallucination", stage="generation", answer_relevancy=2,
                 claims=[Claim("It lasts 5 years.", "contradicted", "the chunk says 2"), Claim("It is free.", "supported")])
    assert evaluations(bad, include_content=False, max_chars=100) == [
        Evaluation("groundedness", "hallucination", 1), Evaluation("answer_relevancy", "off_question", 2),
        Evaluation("context_relevance", "relevant", 3)]
    [grounded, relevancy, context] = evaluations(bad, include_content=True, max_chars=40)
    assert grounded.explanation == "all supported\n[contradicted] It lasts 5…"  # trimmed to 40 characters
    assert len(grounded.explanation) == 40 and relevancy.explanation == "on the question"
    assert context.explanation == "chunk 0 answers it"


@pytest.mark.unit
def test_a_refusal_an_error_and_cited_sentences() -> None:
    refusal = record(fallback=True, groundedness=None, verdict="refusal", chunks=[])
    assert evaluations(refusal, include_content=True, max_chars=100) == [
        Evaluation("groundedness", "refusal"), Evaluation("answer_relevancy", "refusal")]
    failed = record(groundedness=None, answer_relevancy=None, context_relevance=None, verdict="error",
                    error="APITimeoutError", groundedness_reason="", answer_relevancy_reason="", context_relevance_reason="")
    assert [(e.label, e.score, e.error) for e in evaluations(failed, include_content=False, max_chars=100)] == [
        ("error", None, "APITimeoutError")] * 3
    cited = record(search_relevance=4, citations=[
        CitationVerdict("A.", [0], [], "supported"), CitationVerdict("B.", [1], [], "unsupported", "not in chunk 1"),
        CitationVerdict("C.", [], ["9"], "dangling"), CitationVerdict("D.", [0], [], "uncertain")])
    *_, search, citations = evaluations(cited, include_content=True, max_chars=500)
    assert search == Evaluation("search_relevance", "relevant", 4, None)  # no reason given, none sent
    assert (citations.label, citations.score) == ("inaccurate", 1 / 3)  # 1 of 3 judged citations supported
    assert citations.explanation == "[unsupported] B.: not in chunk 1\n[dangling] C."


@pytest.mark.unit
def test_a_plain_retrievers_search_is_no_evaluation_an_agents_is() -> None:
    """Judged and recorded as the sidecar does: a retriever that searched with the question itself (case, spaces
    and punctuation aside) gets no search_relevance evaluation, an agent that rephrased it one."""
    from ragpulse.collector.events import Chunk, TraceEvent
    from ragpulse.judging.exit import build_record
    from ragpulse.judging.local_judge import LocalJudge
    from ragpulse.judging.sampler import JudgeItem

    judge = LocalJudge(CollectorRegistry(), cache_entries=10, cache_max_bytes=1 << 20)

    def names(*searches: str) -> list[str]:
        item = JudgeItem(TraceEvent(trace_id="t", query="How long is the warranty?", answer="Two years.",
                                    chunks=[Chunk(text="The warranty lasts two years.")], retrieval_queries=list(searches)), False)
        judgment = judge.judge(item.event)
        return [e.name for e in evaluations(build_record(item, judgment, None, "local", 0.0, False),
                                            include_content=False, max_chars=100)]

    assert names("how long is the warranty") == ["groundedness", "answer_relevancy", "context_relevance"]
    assert names("warranty duration") == ["groundedness", "answer_relevancy", "context_relevance", "search_relevance"]


@pytest.mark.unit
@pytest.mark.parametrize(("given", "expected"), [
    ("0af7651916cd43dd8448eb211c80319c", 0x0af7651916cd43dd8448eb211c80319c),
    ("0AF7651916CD43DD8448EB211C80319C", 0x0af7651916cd43dd8448eb211c80319c),
    ("0af76519-16cd-43dd-8448-eb211c80319c", 0x0af7651916cd43dd8448eb211c80319c),  # a UUID's 16 bytes
    ("0" * 32, None), ("t-1", None), ("0af7651916cd43dd8448eb211c80319", None), ("g" * 32, None),
])
def test_only_a_16_byte_hex_trace_id_is_an_opentelemetry_one(given: str, expected: int | None) -> None:
    assert otel_trace_id(given) == expected


@pytest.mark.unit
def test_names_map_to_opentelemetry_and_never_collide() -> None:
    assert otel_name("ragpulse_judgments") == ("ragpulse.judgments", "")
    assert otel_name("ragpulse_answer_latency_seconds") == ("ragpulse.answer_latency", "s")
    families = {"ragpulse_otlp_traces_in_flight", "ragpulse_otlp_traces_in_flight_bytes"}
    assert otel_name("ragpulse_otlp_traces_in_flight_bytes", families) == ("ragpulse.otlp_traces_in_flight_bytes", "By")
    assert otel_name("process_cpu_seconds") == ("process_cpu", "s")


@pytest.mark.unit
def test_the_docs_metrics_table_gives_each_metrics_otlp_name() -> None:
    metrics = exported_metrics()
    families = {name.removesuffix("_total") if kind == "counter" else name for name, (kind, _) in metrics.items()}
    rows = dict(re.findall(r"^\| `(ragpulse_\w+)` \| \w+ \|[^|]*\| ([^|]+) \|", METRICS, re.M))
    assert set(rows) == set(metrics)
    for name, (kind, _) in metrics.items():
        otel, unit = otel_name(name.removesuffix("_total") if kind == "counter" else name, families)
        assert rows[name] == f"`{otel}`" + (f", {unit}" if unit else ""), name
    assert len({row.split(",")[0] for row in rows.values()}) == len(rows)  # no two share an OTLP name


@pytest.mark.unit
def test_the_bridge_sends_cumulative_totals_or_deltas_and_histogram_buckets_apart() -> None:
    registry = CollectorRegistry()
    judged = Counter("ragpulse_judged_total", "j", ["verdict"], registry=registry)
    latency = Histogram("ragpulse_latency_seconds", "l", registry=registry, buckets=[0.1, 1.0])
    Gauge("ragpulse_queue_bytes", "q", registry=registry).set(7)
    bridges = {t: PrometheusBridge(registry, Resource.create({}), t) for t in ("cumulative", "delta")}
    judged.labels("grounded").inc(3)
    latency.observe(0.05)
    latency.observe(0.5)
    first = {t: metrics_of(bridge.collect()) for t, bridge in bridges.items()}
    judged.labels("grounded").inc(2)
    latency.observe(5.0)
    second = {t: metrics_of(bridge.collect()) for t, bridge in bridges.items()}
    judged_sum = second["cumulative"]["ragpulse.judged"]
    assert judged_sum.is_monotonic and judged_sum.aggregation_temporality is AggregationTemporality.CUMULATIVE
    assert [(p.attributes, p.value) for p in judged_sum.data_points] == [({"verdict": "grounded"}, 5.0)]
    assert [p.value for p in first["delta"]["ragpulse.judged"].data_points] == [3.0]
    assert [p.value for p in second["delta"]["ragpulse.judged"].data_points] == [2.0]
    assert second["delta"]["ragpulse.judged"].aggregation_temporality is AggregationTemporality.DELTA
    [point] = second["cumulative"]["ragpulse.latency"].data_points
    assert (point.count, point.sum, list(point.bucket_counts), list(point.explicit_bounds)) == (3, 5.55, [1, 1, 1], [0.1, 1.0])
    [delta] = second["delta"]["ragpulse.latency"].data_points
    assert (delta.count, delta.sum, list(delta.bucket_counts)) == (1, pytest.approx(5.0), [0, 0, 1])
    assert [p.value for p in second["delta"]["ragpulse.queue"].data_points] == [7.0]  # a gauge is a gauge


def metrics_of(data: Any) -> dict[str, Any]:
    return {metric.name: metric.data for metric in data.resource_metrics[0].scope_metrics[0].metrics}


@pytest.mark.unit
def test_settings_say_what_to_fix() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config({"interop": {
            "evaluation_events": {"enabled": True, "max_batch": 10, "max_queue": 5},
            "otlp_metrics": {"enabled": True, "protocol": "http/protobuf", "endpoint": "collector:4318",
                             "client_certificate_file": "/nonexistent.pem", "headers": {"api-key": "env:NO_SUCH_VARIABLE_HERE"}},
            "phoenix": {"enabled": True, "base_url": "phoenix:6006"}}})
    assert [str(p) for p in info.value.problems] == [
        "interop.evaluation_events.endpoint: is required when enabled (e.g. http://otel-collector:4317)",
        "interop.evaluation_events.max_batch: must not exceed max_queue (5)",
        "interop.otlp_metrics.endpoint: 'collector:4318': http/protobuf needs an http:// or https:// URL (e.g. http://otel-collector:4318)",
        "interop.otlp_metrics.client_certificate_file: no such file: /nonexistent.pem",
        "interop.otlp_metrics.headers.api-key: the environment variable NO_SUCH_VARIABLE_HERE is not set",
        "interop.otlp_metrics.client_key_file: set client_certificate_file and client_key_file together",
        "interop.phoenix.base_url: 'phoenix:6006': needs an http(s):// URL of the Phoenix server (e.g. http://phoenix:6006) when enabled",
    ]


def test_phoenix_posts_what_it_can_and_waits_for_spans_it_does_not_have_yet() -> None:
    asyncio.run(_phoenix_waits())


async def _phoenix_waits() -> None:
    known = {"1111111111111111"}
    stored: list[dict[str, Any]] = []

    async def annotate(request: web.Request) -> web.Response:  # as Phoenix answers with sync=true
        body = await request.json()
        missing = {a["span_id"] for a in body["data"]} - known
        if missing:
            return web.Response(status=404, text=f"Spans with IDs {', '.join(sorted(missing))} do not exist.")
        stored.extend(body["data"])
        return web.json_response({"data": [{"id": str(i)} for i, _ in enumerate(body["data"])]})

    app = web.Application()
    app.router.add_post("/v1/span_annotations", annotate)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    registry = CollectorRegistry()
    config = parse_config({"interop": {"phoenix": {"enabled": True, "base_url": f"http://127.0.0.1:{port}",
                                                   "span_wait_seconds": 60}}}).interop
    exporter = PhoenixAnnotations(config, registry)
    await exporter.start()
    exporter.add(record(span_id="2222222222222222"))  # not in Phoenix yet: its three wait...
    exporter.add(record(span_id="1111111111111111"))  # ...and do not hold these up
    await exporter.flush()
    assert sorted((a["span_id"], a["name"]) for a in stored) == [
        ("1111111111111111", "answer_relevancy"), ("1111111111111111", "context_relevance"),
        ("1111111111111111", "groundedness")]
    assert registry.get_sample_value("ragpulse_interop_queued", {"output": "phoenix"}) == 3
    known.add("2222222222222222")  # the app's exporter sent it
    await exporter.flush()
    assert len(stored) == 6 and registry.get_sample_value("ragpulse_interop_sent_total", {"output": "phoenix"}) == 6
    assert {a["annotator_kind"] for a in stored} == {"LLM"} and {a["identifier"] for a in stored} == {"ragpulse"}
    await exporter.shutdown(time.monotonic() + 10)
    await runner.cleanup()


def test_an_http_servers_trace_has_its_verdicts_on_the_llm_span_that_answered() -> None:
    """A web app's trace (root `POST /ask`, SERVER; the answering chat call below it, with its response id)
    through the OTLP mapping, a judgment and both outputs, against an OTLP/HTTP logs endpoint and a server
    answering as Phoenix's REST API: every evaluation event and annotation is on the chat call's span, which
    the events' gen_ai.response.id names; they were on the root."""
    asyncio.run(_on_the_answering_span())


async def _on_the_answering_span() -> None:
    collect = Collect()
    http_server_trace(provider(SimpleSpanProcessor(collect)))
    spans = decode_protobuf(encode_spans(collect.spans).SerializeToString(), MAPPED_KEYS).spans
    event = TraceMapper().map(spans)
    assert isinstance(event, TraceEvent)
    judgment = Judgment(event.trace_id, "local", "local", groundedness=5, answer_relevancy=5, chunk_relevance=[3])
    judged = build_record(JudgeItem(event, False), judgment, None, "local", 0.0, False)
    logs: list[Any] = []
    annotations: list[dict[str, Any]] = []

    async def export_logs(request: web.Request) -> web.Response:
        for resource in ExportLogsServiceRequest.FromString(await request.read()).resource_logs:
            logs.extend(log for scope in resource.scope_logs for log in scope.log_records)
        return web.Response(body=ExportLogsServiceResponse().SerializeToString(), content_type="application/x-protobuf")

    async def annotate(request: web.Request) -> web.Response:
        annotations.extend((await request.json())["data"])
        return web.json_response({"data": []})

    app = web.Application()
    app.router.add_post("/v1/logs", export_logs)
    app.router.add_post("/v1/span_annotations", annotate)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    config = parse_config({"interop": {
        "evaluation_events": {"enabled": True, "protocol": "http/protobuf", "endpoint": f"http://127.0.0.1:{port}"},
        "phoenix": {"enabled": True, "base_url": f"http://127.0.0.1:{port}"}}}).interop
    registry = CollectorRegistry()
    events, phoenix = EvaluationEvents(config, registry, Resource.create({})), PhoenixAnnotations(config, registry)
    await phoenix.start()
    try:
        events(judged)
        phoenix.add(judged)
        deadline = time.monotonic() + 10
        await asyncio.gather(asyncio.to_thread(events.shutdown, deadline), phoenix.shutdown(deadline))
    finally:
        await runner.cleanup()
    answering = next(span for span in spans if span.name == "chat answer")
    assert answering.parent_span_id == next(span.span_id for span in spans if span.name == "POST /ask")
    assert [(log.span_id.hex(), log.trace_id.hex()) for log in logs] == [(answering.span_id, event.trace_id)] * 3
    assert {attribute.value.string_value for log in logs for attribute in log.attributes
            if attribute.key == "gen_ai.response.id"} == {"chatcmpl-answer"}
    assert [(a["span_id"], a["name"]) for a in annotations] == [
        (answering.span_id, name) for name in ("groundedness", "answer_relevancy", "context_relevance")]
