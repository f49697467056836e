"""A real LangChain LCEL retrieval chain, instrumented by openinference-instrumentation-langchain.

Offline: langchain-core's deterministic fake embedding, in-memory vector store and fake chat model.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers.langchain_data import ANSWER, DOCS, QUESTION
from helpers.otlp_shapes import RESOURCE, Collect
from helpers.sidecar import RagpulseProcess
from helpers.waiting import wait_until
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore
from openinference.instrumentation import using_session
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

from ragpulse.sources.otlp.mapping import TraceMapper
from ragpulse.sources.otlp.spans import decode_protobuf


def run_chain(tracer_provider: TracerProvider) -> list[str]:
    """Invoke a retrieval chain under the instrumentation; returns the documents the retriever returned."""
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    store.add_documents([Document(page_content=text, id=f"doc-{i}") for i, text in enumerate(DOCS)])
    retriever = store.as_retriever(search_kwargs={"k": 2})
    retrieved = [d.page_content for d in retriever.invoke(QUESTION)]
    prompt = ChatPromptTemplate.from_template("Answer from the context.\nContext: {context}\nQuestion: {question}")
    chain = {"context": retriever, "question": RunnablePassthrough()} | prompt | FakeListChatModel(responses=[ANSWER]) | StrOutputParser()
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=tracer_provider)
    try:
        with using_session("lc-session"):
            assert chain.invoke(QUESTION) == ANSWER
    finally:
        instrumentor.uninstrument()
    return retrieved


@pytest.mark.unit
def test_langchain_trace_maps_to_the_right_event() -> None:
    collect = Collect()
    tracer_provider = TracerProvider(resource=RESOURCE)
    tracer_provider.add_span_processor(SimpleSpanProcessor(collect))
    retrieved = run_chain(tracer_provider)
    spans = decode_protobuf(encode_spans(collect.spans).SerializeToString()).spans
    assert len({s.trace_id for s in spans}) == 1
    event = TraceMapper().map(spans)
    assert event is not None
    assert (event.query, event.answer, event.session_id) == (QUESTION, ANSWER, "lc-session")
    assert [c.text for c in event.chunks or []] == retrieved  # the retriever's order
    assert sorted(retrieved) == sorted(DOCS)


def test_langchain_over_otlp_http(ragpulse_factory: Callable[..., RagpulseProcess]) -> None:
    rp = ragpulse_factory("--set", "otlp.grace_seconds=0.2")
    tracer_provider = TracerProvider(resource=RESOURCE)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"http://127.0.0.1:{rp.otlp_port}/v1/traces")))
    run_chain(tracer_provider)
    assert tracer_provider.force_flush(10_000)
    labels = {"app": "shop-bot", "release": "1.2.3", "route": "unknown", "model": "unknown"}
    wait_until(lambda: rp.metrics().get_value("ragpulse_traces_total", **labels) == 1, what="the LangChain trace")
    s = rp.metrics()
    assert s.get_value("ragpulse_retrieval_chunks_sum", **labels) == 2
    assert s.get_value("ragpulse_retrieval_top_score_count", **labels) == 0  # this retriever reports no scores
    tracer_provider.shutdown()
