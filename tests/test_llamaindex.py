"""A real LlamaIndex query pipeline, instrumented by openinference-instrumentation-llama-index.

Offline and deterministic: MockLLM, and a bag-of-words embedding (crc32 buckets), so retrieval
ranks for real. The spans go through the real OTLP exporters to a running ragpulse, and through
the exporters' own encoder to the mapper for exact field checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from helpers.fake_openai import FakeOpenAI
from helpers.llamaindex_data import QUESTION, TEXTS, WordEmbedding, expected_chunks
from helpers.otlp_shapes import RESOURCE, Collect
from helpers.sidecar import RagpulseProcess
from helpers.waiting import wait_until
from llama_index.core import Document, Settings, VectorStoreIndex
from llama_index.core.llms import MockLLM
from openinference.instrumentation import using_session
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

from ragpulse.sources.otlp.mapping import TraceMapper
from ragpulse.sources.otlp.spans import decode_protobuf


@pytest.fixture(scope="module")
def instrumented() -> Iterator[Callable[[TracerProvider], str]]:
    """Run one query under a tracer provider; returns the answer."""
    Settings.embed_model = WordEmbedding()
    Settings.llm = MockLLM(max_tokens=8)
    Settings.tokenizer = lambda text: text.split()  # no tokenizer download offline
    index = VectorStoreIndex.from_documents([Document(text=t, doc_id=k) for k, t in TEXTS.items()])
    engine = index.as_query_engine(similarity_top_k=2)
    instrumentor = LlamaIndexInstrumentor()

    def run(tracer_provider: TracerProvider) -> str:
        instrumentor.instrument(tracer_provider=tracer_provider)
        try:
            with using_session("li-session-1"):
                return str(engine.query(QUESTION))
        finally:
            instrumentor.uninstrument()

    yield run


@pytest.mark.unit
def test_llamaindex_trace_maps_to_the_right_event(instrumented: Callable[[TracerProvider], str]) -> None:
    collect = Collect()
    tracer_provider = TracerProvider(resource=RESOURCE)
    tracer_provider.add_span_processor(SimpleSpanProcessor(collect))
    answer = instrumented(tracer_provider)
    spans = decode_protobuf(encode_spans(collect.spans).SerializeToString()).spans
    events = [e for e in (TraceMapper().map([s for s in spans if s.trace_id == t]) for t in {s.trace_id for s in spans}) if e]
    [event] = events  # index building happened before instrumentation; only the query is a RAG trace
    assert event.query == QUESTION
    assert event.answer == answer == "text text text text text text text text"
    chunks = event.chunks or []
    assert [(c.text, round(c.score or 0, 9)) for c in chunks] == [(t, round(s, 9)) for t, s in expected_chunks()]
    assert chunks[0].text == TEXTS["returns"]  # ranking is real
    assert all(c.id for c in chunks)
    assert event.session_id == "li-session-1"
    assert event.model == "unknown"  # what MockLLM reports as llm.model_name
    assert (event.app, event.release) == ("shop-bot", "1.2.3")


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_llamaindex_over_the_real_otlp_exporters(
    instrumented: Callable[[TracerProvider], str], ragpulse_factory: Callable[..., RagpulseProcess], protocol: str
) -> None:
    rp = ragpulse_factory("--set", "otlp.grace_seconds=0.2")
    exporter = (HttpExporter(endpoint=f"http://127.0.0.1:{rp.otlp_port}/v1/traces") if protocol == "http"
                else GrpcExporter(endpoint=f"127.0.0.1:{rp.grpc_port}", insecure=True))
    tracer_provider = TracerProvider(resource=RESOURCE)
    tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
    instrumented(tracer_provider)
    assert tracer_provider.force_flush(10_000)
    labels = {"app": "shop-bot", "release": "1.2.3", "route": "unknown", "model": "unknown"}
    wait_until(lambda: rp.metrics().get_value("ragpulse_traces_total", **labels) == 1, what="the LlamaIndex trace")
    s = rp.metrics()
    assert s.get_value("ragpulse_retrieval_chunks_sum", **labels) == 2
    top = expected_chunks()[0][1]
    assert s.get_value("ragpulse_retrieval_top_score_sum", **labels) == pytest.approx(top)
    assert s.total("ragpulse_fallbacks_total") == 0
    assert s.get_value("ragpulse_otlp_traces_total", outcome="complete") == 1
    tracer_provider.shutdown()


def test_a_llamaindex_answer_is_judged_with_its_retrieved_chunks(
    instrumented: Callable[[TracerProvider], str], ragpulse_factory: Callable[..., RagpulseProcess], fake: FakeOpenAI
) -> None:
    rp = ragpulse_factory("--set", "otlp.grace_seconds=0.2", "--set", f"judge.base_url={fake.base_url}",
                          "--set", "judge.model=judge-model", "--set", "judge.sample_rate=1.0")
    tracer_provider = TracerProvider(resource=RESOURCE)
    tracer_provider.add_span_processor(BatchSpanProcessor(HttpExporter(endpoint=f"http://127.0.0.1:{rp.otlp_port}/v1/traces")))
    answer = instrumented(tracer_provider)
    assert tracer_provider.force_flush(10_000)
    wait_until(lambda: rp.metrics().total("ragpulse_judge_judged_total") == 1, what="the LlamaIndex answer judged")
    [prompt] = fake.prompts()
    assert f"<question>\n{QUESTION}\n</question>" in prompt
    assert f"<answer>\n{answer}\n</answer>" in prompt
    for number, (text, _) in enumerate(expected_chunks(), start=1):  # the retrieved chunks, in rank order, from 1
        assert f'<chunk index="{number}"' in prompt and f"\n{text}\n</chunk>" in prompt
    s = rp.metrics()
    labels = {"app": "shop-bot", "release": "1.2.3", "route": "unknown", "model": "unknown"}
    assert s.get_value("ragpulse_judgments_total", **labels, judge="llm", sample="routine",
                       metric="groundedness", verdict="grounded") == 1
    tracer_provider.shutdown()