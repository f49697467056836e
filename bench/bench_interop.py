"""What the interop outputs cost ragpulse: CPU per 1,000 judgments sent as OpenTelemetry evaluation events (to
a real Collector over gRPC) and as Phoenix span annotations (to a real Phoenix), and CPU per OTLP metrics
push of a registry of about 3,000 series (the bridge's read, and the SDK exporter's encode and send).

    python bench/bench_interop.py [--judgments 5000] [--routes 4] [--phoenix]

The Collector is bench/otelcol's build (OTLP receiver -> debug exporter, basic verbosity, for logs; the
Prometheus exporter for metrics). CPU is this process's (time.process_time: every thread, the SDK's export
thread included), from the first judgment handed over to the last record exported; the receivers' CPU is
theirs. Phoenix needs its cached venv (scripts/phoenix.sh) and gets the judged traces' spans first.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import msgspec
from bench_scrape import with_routes
from common import free_port, sized_events
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.sdk.resources import Resource
from prometheus_client import CollectorRegistry, disable_created_metrics

from ragpulse.app.service import Service
from ragpulse.config import Config, parse_config
from ragpulse.interop.evaluation_events import EvaluationEvents
from ragpulse.interop.otlp_metrics import PrometheusBridge
from ragpulse.interop.phoenix import PhoenixAnnotations
from ragpulse.judging.records import JudgmentRecord, RecordChunk
from ragpulse.judging.verdicts import Claim

HERE = Path(__file__).resolve().parent
RESOURCE = Resource.create({"service.name": "ragpulse-bench"})


def judgments(count: int) -> list[JudgmentRecord]:
    """Judged traces as the LLM judge leaves them: four evaluations each, a claim list, reasons of 60-120 characters."""
    return [JudgmentRecord(
        trace_id=f"{i + 1:032x}", judged_at=time.time(), app="shop", route="returns", model="m", release="r",
        session_id=None, priority="base_rate", sample="routine", stratum="none", reasons=[], audit=False, fallback=False,
        stage="generation" if i % 5 == 0 else None, bad=i % 5 == 0, query="How long is the warranty?",
        answer="The warranty lasts 2 years and covers defects.", chunks=[RecordChunk(text="The warranty lasts 2 years.")],
        groundedness=1 if i % 5 == 0 else 5, hallucination=i % 5 == 0, supported_share=0.5,
        claims=[Claim("The warranty lasts 2 years.", "supported"), Claim("It covers defects.", "not_in_context", "no chunk says so")],
        groundedness_reason="one claim of two is in no chunk: the warranty's cover is not retrieved",
        answer_relevancy=5, answer_relevancy_reason="answers the question asked", context_relevance=3,
        context_relevance_reason="chunk 0 states the warranty's length", error=None, raw_output=None, judge="llm",
        judge_model="gpt-4o-mini", prompt_version="judgment.v2", prompt_tokens=500, completion_tokens=80, cost=0.0,
        verdict="hallucination" if i % 5 == 0 else "grounded", search_relevance=5, search_relevance_reason="the question",
        span_id=f"{i + 1:016x}") for i in range(count)]


def collector(tmp: Path) -> tuple[subprocess.Popen[bytes], int, int]:
    binary = subprocess.run(["bash", str(HERE / "otelcol" / "build.sh")], capture_output=True, text=True, check=True).stdout.strip()
    grpc, http, prom = free_port(), free_port(), free_port()
    config = {"receivers": {"otlp": {"protocols": {"grpc": {"endpoint": f"127.0.0.1:{grpc}"}, "http": {"endpoint": f"127.0.0.1:{http}"}}}},
              "exporters": {"debug": {"verbosity": "basic"}, "prometheus": {"endpoint": f"127.0.0.1:{prom}"}},
              "service": {"pipelines": {"logs": {"receivers": ["otlp"], "exporters": ["debug"]},
                                        "metrics": {"receivers": ["otlp"], "exporters": ["prometheus"]}},
                          "telemetry": {"metrics": {"level": "none"}}}}
    (tmp / "otelcol.json").write_text(json.dumps(config))
    process = subprocess.Popen([binary, f"--config={tmp / 'otelcol.json'}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2)  # a benchmark, not a test: the receiver is up well within this
    return process, grpc, http


def events_cost(records: list[JudgmentRecord], grpc: int, include_content: bool) -> float:
    """CPU ms per 1,000 judgments, from handing them over to the last record exported."""
    config = parse_config({"interop": {"include_content": include_content, "evaluation_events": {
        "enabled": True, "endpoint": f"127.0.0.1:{grpc}", "insecure": True, "max_queue": 200_000,
        "max_queue_bytes": 1 << 30, "schedule_delay_seconds": 0.1}}}).interop
    registry = CollectorRegistry()
    events = EvaluationEvents(config, registry, RESOURCE)
    started = time.process_time()
    for record in records:
        events(record)
    while registry.get_sample_value("ragpulse_interop_queued", {"output": "evaluation_events"}):
        time.sleep(0.01)
    spent = time.process_time() - started
    sent = registry.get_sample_value("ragpulse_interop_sent_total", {"output": "evaluation_events"})
    assert sent == 4 * len(records), sent
    events.shutdown(time.monotonic() + 10)
    return 1e3 * spent / len(records) * 1_000


def metrics_cost(routes: int, http: int) -> tuple[int, float, float]:
    """Series, and the median ms of the bridge's read and of the exporter's encode and send, over 20 pushes."""
    data = msgspec.to_builtins(Config())
    data["results"]["sqlite_path"] = None
    service = Service(parse_config(data), CollectorRegistry())
    events = with_routes(sized_events(20_000), routes)
    for i in range(0, len(events), 500):
        decoded = service.ingest._decoder.decode_body(b"\n".join(events[i : i + 500]), ndjson=True)  # noqa: SLF001
        service.pipeline.process(decoded.envelopes)
    bridge = PrometheusBridge(service.registry, RESOURCE, "cumulative")
    exporter = OTLPMetricExporter(endpoint=f"http://127.0.0.1:{http}/v1/metrics")
    reads, sends, series = [], [], 0
    for _ in range(20):
        started = time.process_time()
        metrics = bridge.collect()
        reads.append(time.process_time() - started)
        started = time.process_time()
        exporter.export(metrics)
        sends.append(time.process_time() - started)
        points = [m.data.data_points for m in metrics.resource_metrics[0].scope_metrics[0].metrics]
        series = sum(len(p) for p in points)
    return series, 1e3 * statistics.median(reads), 1e3 * statistics.median(sends)


def stored_roots(server: object, count: int) -> dict[str, str]:
    """trace id -> span id of the spans Phoenix has stored in its default project, every page."""
    found: dict[str, str] = {}
    cursor = None
    while True:
        status, body = server.get("/v1/projects/default/spans", limit=1000, **({"cursor": cursor} if cursor else {}))  # type: ignore[attr-defined]
        if status != 200:
            return found
        found.update({s["context"]["trace_id"]: s["context"]["span_id"] for s in body["data"]})
        cursor = body.get("next_cursor")
        if not cursor or len(found) >= count:
            return found


async def phoenix_cost(records: list[JudgmentRecord], tmp: Path) -> float:
    """CPU ms per 1,000 judgments posted to a real Phoenix (whose spans it has), from hand-over to the last sent."""
    from helpers.phoenix_server import Phoenix, phoenix_python  # the tests' helper: Phoenix from its own venv
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    server = Phoenix(phoenix_python(), tmp / "phoenix")
    server.start()
    try:
        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{server.url}/v1/traces"),
                                                       max_export_batch_size=512))
        tracer = provider.get_tracer("bench")
        roots = []
        for _ in records:  # a root span a judged trace: the records take its ids
            span = tracer.start_span("query")
            span.end()
            roots.append((f"{span.get_span_context().trace_id:032x}", f"{span.get_span_context().span_id:016x}"))
        provider.force_flush()
        records = [msgspec.structs.replace(r, trace_id=t, span_id=s) for r, (t, s) in zip(records, roots, strict=True)]
        deadline = time.monotonic() + 120
        while len(await asyncio.to_thread(stored_roots, server, len(records))) < len(records):
            assert time.monotonic() < deadline, "Phoenix did not store the spans"
            await asyncio.sleep(0.5)
        config = parse_config({"interop": {"include_content": True, "phoenix": {
            "enabled": True, "base_url": server.url, "max_queue": 200_000, "max_queue_bytes": 1 << 30}}}).interop
        registry = CollectorRegistry()
        exporter = PhoenixAnnotations(config, registry)
        await exporter.start()
        started = time.process_time()
        for record in records:
            exporter.add(record)
        while registry.get_sample_value("ragpulse_interop_queued", {"output": "phoenix"}):
            await asyncio.sleep(0.01)
        spent = time.process_time() - started
        assert registry.get_sample_value("ragpulse_interop_sent_total", {"output": "phoenix"}) == 4 * len(records)
        await exporter.shutdown(time.monotonic() + 10)
        return 1e3 * spent / len(records) * 1_000
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--judgments", type=int, default=5_000)
    parser.add_argument("--routes", type=int, default=24)
    parser.add_argument("--phoenix", action="store_true", help="also post annotations to a real Phoenix")
    args = parser.parse_args()
    disable_created_metrics()  # as `ragpulse run` does
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}")
    records = judgments(args.judgments)
    with tempfile.TemporaryDirectory() as workdir:
        tmp = Path(workdir)
        process, grpc, http = collector(tmp)
        try:
            for content in (False, True):
                costs = [events_cost(records, grpc, content) for _ in range(3)]
                print(f"evaluation events, content {'on' if content else 'off'}: "
                      f"{' / '.join(f'{c:.0f}' for c in costs)} ms CPU per 1,000 judgments (4 records each)")
            series, read, send = metrics_cost(args.routes, http)
            print(f"OTLP metrics push of {series:,} series: bridge read {read:.1f} ms, encode and send {send:.1f} ms (median of 20)")
        finally:
            process.terminate()
            process.wait()
        if args.phoenix:
            cost = asyncio.run(phoenix_cost(records[:1_000], tmp))
            print(f"Phoenix annotations: {cost:.0f} ms CPU per 1,000 judgments (4 annotations each)")


if __name__ == "__main__":
    main()
