"""Interop with real parts: ragpulse's judgments as OpenTelemetry evaluation events, and its metrics pushed
over OTLP, received by a real OpenTelemetry Collector (bench/otelcol's build: OTLP receiver, debug exporter
for logs, Prometheus exporter for metrics), for the traces of a real instrumented app (LlamaIndex under
OpenInference's instrumentor, in its own process, through the real OTLP exporter)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.browser import caller, page
from helpers.events import ndjson, trace
from helpers.fake_openai import FakeOpenAI
from helpers.instrumented_apps import JUDGED_QUESTIONS, TESTS, app_command
from helpers.metrics import Samples
from helpers.net import black_hole, free_port, http
from helpers.otelcol import Collector, LogRecord, collector_binary
from helpers.otlp_shapes import Collect, http_server_trace, provider
from helpers.phoenix_server import Phoenix, phoenix_python
from helpers.processes import rss_bytes
from helpers.sidecar import start_ragpulse
from helpers.waiting import wait_until
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from ragpulse.sources.otlp.spans import Span, decode_protobuf

# Labels the Collector's Prometheus exporter adds from the resource and scope: not ragpulse's.
COLLECTOR_LABELS = {"job", "instance", "otel_scope_name", "otel_scope_version", "otel_scope_schema_url"}


@pytest.fixture(scope="module")
def otelcol() -> str:
    return collector_binary()


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    server = Phoenix(phoenix_python(), tmp_path_factory.mktemp("phoenix"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def collector(otelcol: str, tmp_path: Path) -> Iterator[Collector]:
    instance = Collector(otelcol, tmp_path)
    instance.start()
    yield instance
    instance.stop()


def run_app(tmp_path: Path, endpoints: list[str], judge_url: str) -> tuple[dict[str, list[Span]], list[str]]:
    """The judged LlamaIndex app (helpers/instrumented_apps.py) in its own process: its spans by trace, its answers."""
    spans_file = tmp_path / "app-spans.pb"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(app_command("llamaindex_judged", "shop-bot", ",".join(endpoints), judge_url, str(spans_file)),
                          capture_output=True, text=True, timeout=180, cwd=TESTS, env={**env, "PYTHONPATH": str(TESTS)})
    assert done.returncode == 0, done.stderr
    by_trace: dict[str, list[Span]] = {}
    for span in decode_protobuf(spans_file.read_bytes()).spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    return by_trace, json.loads(done.stdout.splitlines()[-1])["answers"]


def interop_args(collector: Collector, **extra: str) -> list[str]:
    settings = {
        "interop.include_content": "true",
        "interop.evaluation_events.enabled": "true",
        "interop.evaluation_events.endpoint": f"127.0.0.1:{collector.grpc_port}",
        "interop.evaluation_events.insecure": "true",
        "interop.evaluation_events.schedule_delay_seconds": "0.2",
        "interop.otlp_metrics.enabled": "true",
        "interop.otlp_metrics.endpoint": f"http://127.0.0.1:{collector.http_port}",
        "interop.otlp_metrics.protocol": "http/protobuf",
        "interop.otlp_metrics.interval_seconds": "0.5",
        **extra,
    }
    return [arg for key, value in settings.items() for arg in ("--set", f"{key}={value}")]


def ragpulse_series(samples: Samples) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """ragpulse's own series, without the labels the Collector adds and without `_created` (OTLP carries it as
    a start time)."""
    return {(name, frozenset((k, repr(float(v)) if k == "le" else v) for k, v in labels if k not in COLLECTOR_LABELS)): value
            for (name, labels), value in samples.items()
            if name.startswith("ragpulse_") and not name.endswith("_created")}


def test_each_judged_trace_has_its_evaluation_events_on_its_root_span(
        collector: Collector, fake: FakeOpenAI, tmp_path: Path) -> None:
    rp = start_ragpulse(tmp_path, "--set", "otlp.grace_seconds=0.2", "--set", f"judge.base_url={fake.base_url}",
                        "--set", "judge.api_key=k", "--set", "judge.sample_rate=1.0", *interop_args(collector))
    try:
        by_trace, answers = run_app(tmp_path, [f"http://127.0.0.1:{rp.otlp_port}/v1/traces"], fake.base_url)
        assert answers == list(JUDGED_QUESTIONS.values())
        wait_until(lambda: rp.metrics().total("ragpulse_judge_judged_total") == 4, what="the app's 4 answers judged")
        wait_until(lambda: len(collector.log_records()) >= 12, what="12 evaluation records in the Collector")
        records = collector.log_records()
        roots = {trace_id: next(s.span_id for s in spans if s.parent_span_id is None) for trace_id, spans in by_trace.items()}
        assert len(roots) == 4 and len(records) == 12  # 3 evaluations a trace
        by_trace_records: dict[str, list[LogRecord]] = {}
        for record in records:
            assert record.event_name == "gen_ai.evaluation.result"
            # OpenInference's spans carry no gen_ai.response.id: no span made the answer but the root.
            assert record.span_id == roots[record.trace_id], "on the root span of its trace"
            by_trace_records.setdefault(record.trace_id, []).append(record)
        hallucinated = 0
        for trace_id, found in by_trace_records.items():
            attributes = {r.attributes["gen_ai.evaluation.name"]: r.attributes for r in found}
            # The retriever searched with the question itself: no search_relevance, nothing to judge in it.
            assert sorted(attributes) == ["answer_relevancy", "context_relevance", "groundedness"]
            grounded = attributes["groundedness"]
            bad = grounded["gen_ai.evaluation.score.label"] == "hallucination"
            hallucinated += bad
            assert grounded["gen_ai.evaluation.score.value"] == ("1" if bad else "5")
            assert grounded["ragpulse.judge"] == "llm" and grounded["ragpulse.sample"] == "routine"
            assert grounded["ragpulse.prompt.version"].startswith("judgment.")
            assert (grounded.get("ragpulse.stage") == "generation") is bad
            assert "gen_ai.evaluation.explanation" in grounded  # include_content is set
            assert attributes["answer_relevancy"]["gen_ai.evaluation.score.label"] == "relevant"
            assert attributes["answer_relevancy"]["gen_ai.evaluation.score.value"] == "5"
            assert attributes["context_relevance"]["gen_ai.evaluation.score.label"] == "relevant"
            assert attributes["context_relevance"]["gen_ai.evaluation.score.value"] == "3"
        assert hallucinated == 2  # the two HALLUCINATE answers of JUDGED_QUESTIONS
        # The sender counts a batch when the Collector's answer comes back, after the Collector has the records.
        wait_until(lambda: rp.metrics().get_value("ragpulse_interop_sent_total", output="evaluation_events") >= 12,
                   what="the 12 records counted as sent")
        s = rp.metrics()
        assert s.get_value("ragpulse_interop_sent_total", output="evaluation_events") == 12
        assert s.total("ragpulse_interop_dropped_total", output="evaluation_events") == 0

        # Pushed metrics: after the traffic, every ragpulse series as the Collector's Prometheus exporter
        # serves it (OTLP names mapped back) equals /metrics, read before and after a push that came in between.
        def pushes() -> float:
            return collector.metrics().total("ragpulse_interop_sent_total", output="otlp_metrics")

        before = rp.metrics()
        seen = pushes()
        wait_until(lambda: pushes() >= seen + 2, what="two pushes after the scrape")  # one began after it
        pushed, after = collector.metrics(), rp.metrics()
        ours, theirs = ragpulse_series(before), ragpulse_series(pushed)
        stable = {key for key, value in ours.items() if ragpulse_series(after).get(key) == value}
        # What moves between the two scrapes: the pushes' own counter, and the scrapes' (endpoint /metrics).
        moved = {key for key in set(ours) - stable
                 if key[0] != "ragpulse_interop_sent_total" and ("endpoint", "/metrics") not in key[1]}
        assert not moved, moved
        differing = {key: (theirs.get(key), ours[key]) for key in stable if theirs.get(key) != ours[key]}
        assert not differing, differing
    finally:
        rp.terminate()


def test_a_collector_that_is_down_costs_counted_drops_and_never_stalls_the_pipeline(otelcol: str, tmp_path: Path) -> None:
    collector = Collector(otelcol, tmp_path)  # its ports chosen, nothing listening on them yet
    rp = start_ragpulse(tmp_path, "--set", "judge.mode=local", "--set", "judge.sample_rate=1.0",
                        "--set", "judge.queue_capacity=5000", *interop_args(collector, **{
                            "interop.evaluation_events.max_queue": "60", "interop.evaluation_events.max_batch": "20",
                            "interop.evaluation_events.timeout_seconds": "1", "interop.otlp_metrics.timeout_seconds": "1"}))

    def burst(first: int, count: int) -> None:
        for start in range(first, first + count, 100):
            events = [trace(f"{i:032x}", span_id=f"{i:016x}", query="How long is the warranty?",
                            answer="The warranty lasts 2 years." if i % 3 else "The warranty lasts 5 years.",
                            chunks=[{"id": "w", "text": "The warranty covers manufacturing defects for 2 years."}])
                      for i in range(start, min(start + 100, first + count))]
            assert rp.post("/v1/events", ndjson(events)).status == 200

    def judged() -> float:
        return rp.metrics().total("ragpulse_judge_judged_total")

    try:
        burst(1, 300)
        wait_until(lambda: judged() == 300, what="300 judged with the Collector down")
        grown_from = rss_bytes(rp.process.pid)
        burst(301, 900)
        wait_until(lambda: judged() == 1_200, timeout=60, what="1,200 judged with the Collector down")
        s = rp.metrics()
        dropped = {reason: s.get_value("ragpulse_interop_dropped_total", output="evaluation_events", reason=reason)
                   for reason in ("queue_full", "export_failed", "no_trace_id")}
        queued = s.get_value("ragpulse_interop_queued", output="evaluation_events")
        # Every evaluation accounted for: three a judgment (groundedness, answer and context relevance).
        assert s.get_value("ragpulse_interop_sent_total", output="evaluation_events") == 0
        assert dropped["queue_full"] + dropped["export_failed"] + queued == 3 * 1_200, (dropped, queued)
        assert queued <= 60 and dropped["queue_full"] > 0 and dropped["no_trace_id"] == 0
        wait_until(lambda: rp.metrics().get_value("ragpulse_interop_dropped_total", output="evaluation_events",
                                                  reason="export_failed") > 0, what="a failed export of events, counted")
        wait_until(lambda: rp.metrics().get_value("ragpulse_interop_dropped_total", output="otlp_metrics",
                                                  reason="export_failed") > 0, what="a failed metrics push, counted")
        assert s.get_value("ragpulse_events_processed_total", type="trace") == 1_200  # the pipeline never waited
        assert rss_bytes(rp.process.pid) - grown_from < 40 * 1024 * 1024  # 900 more judgments held nothing
        collector.start()  # back: what waited is delivered, and what is judged from now on
        wait_until(lambda: rp.metrics().get_value("ragpulse_interop_queued", output="evaluation_events") == 0,
                   timeout=40, what="the waiting events delivered")
        burst(1_201, 10)
        wait_until(lambda: {f"{i:032x}" for i in range(1_201, 1_211)} <= {r.trace_id for r in collector.log_records()},
                   timeout=40, what="the new judgments' events in the Collector")
    finally:
        rp.terminate()
        collector.stop()


def test_a_web_apps_verdicts_are_on_the_chat_call_that_answered_not_its_http_root(
        collector: Collector, phoenix: Phoenix, tmp_path: Path) -> None:
    """A web app's trace (root `POST /ask`, SERVER; the answering chat call below it, with its response id),
    sent to ragpulse and to Phoenix: the Collector's evaluation records and Phoenix's annotations are on the chat
    call's span, the one their gen_ai.response.id names; they were on `POST /ask`."""
    rp = start_ragpulse(tmp_path, "--set", "otlp.grace_seconds=0.2", "--set", "judge.mode=local",
                        "--set", "judge.sample_rate=1.0", *interop_args(collector, **{
                            "interop.otlp_metrics.enabled": "false", "interop.phoenix.enabled": "true",
                            "interop.phoenix.base_url": phoenix.url, "interop.phoenix.flush_seconds": "0.2"}))
    try:
        collect = Collect()
        http_server_trace(provider(SimpleSpanProcessor(collect)))
        body = encode_spans(collect.spans).SerializeToString()
        for url in (f"http://127.0.0.1:{rp.otlp_port}/v1/traces", f"{phoenix.url}/v1/traces"):
            assert http("POST", url, body, {"Content-Type": "application/x-protobuf"}).status == 200
        ids = {span.name: f"{span.context.span_id:016x}" for span in collect.spans}
        trace_id = f"{collect.spans[0].context.trace_id:032x}"

        def sent(output: str) -> float:
            return rp.metrics().get_value("ragpulse_interop_sent_total", output=output)

        wait_until(lambda: rp.metrics().total("ragpulse_judge_judged_total") == 1, what="the web app's answer judged")
        wait_until(lambda: sent("evaluation_events") >= 3 and sent("phoenix") == sent("evaluation_events"),
                   timeout=30, what="its evaluations in the Collector and in Phoenix")
        evaluations = int(sent("evaluation_events"))
        wait_until(lambda: len(collector.log_records()) == evaluations, what="the Collector's records")
        records = collector.log_records()
        assert {(r.trace_id, r.span_id) for r in records} == {(trace_id, ids["chat answer"])}
        assert {r.attributes["gen_ai.response.id"] for r in records} == {"chatcmpl-answer"}
        annotations = phoenix.span_annotations("default", [ids["POST /ask"], ids["chat answer"]])
        assert sorted((a["span_id"], a["identifier"]) for a in annotations) == [(ids["chat answer"], "ragpulse")] * evaluations
    finally:
        rp.terminate()


@pytest.mark.parametrize("endpoint", ["nothing_listening", "black_hole"])
def test_sigterm_stops_within_5_s_whatever_the_interop_endpoints_do(endpoint: str, tmp_path: Path) -> None:
    """Every interop output pointed at a port where nothing listens, or at a server that accepts and never
    answers, the events' and Phoenix's exports under way and the last metrics push to make when SIGTERM comes:
    the process exits within 5 s of the signal (it took 7 and 22 s: each output waited its own timeout_seconds,
    Phoenix twice), and the one shutdown log line accounts for every item, none delivered."""
    with black_hole() if endpoint == "black_hole" else contextlib.nullcontext() as hole:
        port = hole.port if hole is not None else free_port()
        rp = start_ragpulse(tmp_path, "--set", "judge.mode=local", "--set", "judge.sample_rate=1.0", *[
            arg for key, value in {
                "interop.evaluation_events.enabled": "true", "interop.evaluation_events.insecure": "true",
                "interop.evaluation_events.endpoint": f"127.0.0.1:{port}",
                "interop.evaluation_events.schedule_delay_seconds": "0.1",
                "interop.otlp_metrics.enabled": "true", "interop.otlp_metrics.protocol": "http/protobuf",
                "interop.otlp_metrics.endpoint": f"http://127.0.0.1:{port}",
                "interop.otlp_metrics.interval_seconds": "3600",  # one push: the last, at shutdown
                "interop.phoenix.enabled": "true", "interop.phoenix.base_url": f"http://127.0.0.1:{port}",
                "interop.phoenix.flush_seconds": "0.1",
            }.items() for arg in ("--set", f"{key}={value}")])
        try:
            events = [trace(f"{i:032x}", span_id=f"{i:016x}", query="How long is the warranty?",
                            answer="The warranty lasts 2 years.",
                            chunks=[{"id": "w", "text": "The warranty covers manufacturing defects for 2 years."}])
                      for i in range(1, 11)]
            assert rp.post("/v1/events", ndjson(events)).status == 200
            wait_until(lambda: rp.metrics().total("ragpulse_judge_judged_total") == 10, what="10 judged")
            if hole is not None:
                wait_until(lambda: hole.accepted >= 2, what="the events' and Phoenix's exports hanging")
            rp.process.send_signal(signal.SIGTERM)
            assert rp.process.wait(timeout=5) == 0
        finally:
            rp.terminate()
    [line] = [line for line in rp.log_lines() if line["event"] == "interop: not delivered at shutdown"]
    # Three evaluations a judgment (groundedness, answer and context relevance), each an event and an annotation.
    assert line["sent_total"] == {"evaluation_events": 0, "otlp_metrics": 0, "phoenix": 0}
    assert line["dropped_total"] == {"evaluation_events": 30, "otlp_metrics": 1, "phoenix": 30}
    assert line["not_delivered"]["otlp_metrics"] == 1 and line["deadline_seconds"] == 3.0


def test_phoenix_shows_one_ragpulse_annotation_per_judged_span_and_metric(
        phoenix: Phoenix, fake: FakeOpenAI, tmp_path: Path) -> None:
    rp = start_ragpulse(tmp_path, "--set", "otlp.grace_seconds=0.2", "--set", f"judge.base_url={fake.base_url}",
                        "--set", "judge.api_key=k", "--set", "judge.sample_rate=1.0",
                        "--set", "interop.include_content=true", "--set", "interop.phoenix.enabled=true",
                        "--set", f"interop.phoenix.base_url={phoenix.url}", "--set", "interop.phoenix.flush_seconds=0.2",
                        "--set", "interop.phoenix.span_wait_seconds=2")
    try:
        # The app sends its traces to Phoenix and to ragpulse, as a user's app does.
        by_trace, _ = run_app(tmp_path, [f"http://127.0.0.1:{rp.otlp_port}/v1/traces", f"{phoenix.url}/v1/traces"],
                              fake.base_url)
        # A trace Phoenix never gets (HTTP, with an OpenTelemetry span id): its three annotations wait, then are counted.
        orphan = trace("f" * 32, span_id="e" * 16, query="How long is the warranty?", answer="Two years.",
                       chunks=[{"id": "w", "text": "The warranty lasts 2 years."}])
        assert rp.post("/v1/events", ndjson([orphan])).status == 200
        wait_until(lambda: rp.metrics().total("ragpulse_judge_judged_total") == 5, what="5 judged")

        def delivered() -> tuple[float, float]:
            s = rp.metrics()
            return (s.get_value("ragpulse_interop_sent_total", output="phoenix"),
                    s.get_value("ragpulse_interop_dropped_total", output="phoenix", reason="span_not_found"))

        wait_until(lambda: delivered() == (12, 3), timeout=30, what="12 annotations delivered, the orphan's 3 counted")
        roots = {trace_id: next(s for s in spans if s.parent_span_id is None) for trace_id, spans in by_trace.items()}
        annotations = phoenix.span_annotations("default", [root.span_id for root in roots.values()])
        assert len(annotations) == 12
        found = {(a["span_id"], a["name"]): a for a in annotations}
        assert len(found) == 12  # one per judged span and metric: no search_relevance, the search is the question
        for root in roots.values():
            bad = "HALLUCINATE" in str(root.attributes["output.value"])
            grounded = found[(root.span_id, "groundedness")]
            assert (grounded["result"]["label"], grounded["result"]["score"]) == (("hallucination", 1) if bad else ("grounded", 5))
            assert grounded["annotator_kind"] == "LLM" and grounded["identifier"] == "ragpulse"
            assert grounded["metadata"]["judge"] == "llm" and grounded["metadata"].get("stage") == ("generation" if bad else None)
            assert grounded["result"]["explanation"]  # include_content is set
            for name in ("answer_relevancy", "context_relevance"):
                assert found[(root.span_id, name)]["result"]["label"] == "relevant"
        if shot := os.environ.get("TEST_PHOENIX_SCREENSHOT"):  # docs/interop.md's picture: a hallucinated trace in Phoenix
            trace_id = next(t for t, root in roots.items() if "HALLUCINATE" in str(root.attributes["output.value"]))
            screenshot(f"{phoenix.url}/redirects/traces/{trace_id}", Path(shot))
    finally:
        rp.terminate()


def screenshot(url: str, path: Path) -> None:
    """The page as headless Chromium (Debian's chromium) renders it, with its annotations panel opened (a click
    through the DevTools protocol, over aiohttp's websocket client)."""
    with page(1600, 1000) as websocket_url:
        path.write_bytes(asyncio.run(_open_and_shoot(websocket_url, url)))


async def _open_and_shoot(websocket_url: str, url: str) -> bytes:
    import base64

    import aiohttp

    async with aiohttp.ClientSession() as session, session.ws_connect(websocket_url, max_msg_size=0) as ws:
        call = caller(ws)

        async def evaluate(script: str) -> Any:
            return (await call("Runtime.evaluate", expression=script, returnByValue=True)).get("result", {}).get("value")

        await call("Page.navigate", url=url)
        opened = "document.querySelector('button[aria-label=Annotations]')"  # the span's annotations card, collapsed
        for _ in range(200):  # the app renders after its data arrives
            if await evaluate(f"!!({opened})"):
                break
            await asyncio.sleep(0.1)
        await evaluate(f"({opened}).click()")
        for _ in range(200):  # the opened card lists every annotation, groundedness among them
            if await evaluate("document.body.innerText.includes('groundedness')"):
                break
            await asyncio.sleep(0.1)
        return base64.b64decode((await call("Page.captureScreenshot", format="png"))["data"])
