"""RAG traces shaped as instrumentations emit them, recorded through the real OpenTelemetry SDK."""

from __future__ import annotations

import json

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanProcessor

RESOURCE = Resource.create({"service.name": "shop-bot", "service.version": "1.2.3"})
DOCS = [("kb-1", "Returns are accepted within 30 days of delivery.", 0.91),
        ("kb-2", "Opened electronics: 14 days, all accessories included.", 0.74),
        ("kb-3", "Gift cards never expire.", 0.33)]


def provider(processor: SpanProcessor) -> TracerProvider:
    tracer_provider = TracerProvider(resource=RESOURCE)
    tracer_provider.add_span_processor(processor)
    return tracer_provider


def openinference_trace(tracer_provider: TracerProvider, answer: str = "You can return it within 30 days.") -> None:
    """A LlamaIndex-shaped query: CHAIN root > RETRIEVER (+ a nested retriever without documents),
    RERANKER-less, > LLM wrapper > LLM leaf (tokens counted once)."""
    tracer = tracer_provider.get_tracer("openinference.instrumentation.llama_index")
    with tracer.start_as_current_span("query", attributes={
        "openinference.span.kind": "CHAIN", "input.value": "Can I return opened headphones?",
        "output.value": json.dumps({"response": answer}), "output.mime_type": "application/json",
        "session.id": "sess-1", "user.id": "user-7", "metadata": json.dumps({"tenant": "acme"}),
        "tag.tags": ["beta"], "rag.route": "returns",
    }):
        with tracer.start_as_current_span("retrieve", attributes={
            "openinference.span.kind": "RETRIEVER", "input.value": "Can I return opened headphones?",
            **{f"retrieval.documents.{i}.document.{k}": v for i, (doc_id, text, score) in enumerate(DOCS)
               for k, v in (("id", doc_id), ("content", text), ("score", score))},
        }):
            with tracer.start_as_current_span("vector_store", attributes={"openinference.span.kind": "RETRIEVER"}):
                pass
        with tracer.start_as_current_span("synthesize", attributes={"openinference.span.kind": "LLM", "llm.model_name": "wrapper"}):
            with tracer.start_as_current_span("llm", attributes={
                "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
                "llm.token_count.prompt": 420, "llm.token_count.completion": 17,
                "llm.output_messages.0.message.content": answer,
            }):
                pass


def genai_trace(tracer_provider: TracerProvider) -> None:
    """OpenTelemetry GenAI: a retrieval span with JSON documents and a chat span; no root input/output."""
    tracer = tracer_provider.get_tracer("genai-app")
    with tracer.start_as_current_span("rag"):
        with tracer.start_as_current_span("retrieval", attributes={
            "gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": "Do you ship to Canada?",
            "gen_ai.retrieval.documents": json.dumps([{"id": "ship-1", "content": "We ship to Canada in 5-8 days.", "score": 0.88},
                                                      {"id": "ship-2", "content": "Duties at checkout.", "score": "0.5x"}]),
        }):
            pass
        with tracer.start_as_current_span("chat gpt-4o", attributes={
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024-08-06",
            "gen_ai.usage.input_tokens": 300, "gen_ai.usage.output_tokens": 12, "gen_ai.conversation.id": "conv-9",
            "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Do you ship to Canada?"}]}]),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "Yes, in 5-8 days."}]}]),
        }):
            pass


class Collect(SpanExporter):
    def __init__(self) -> None:
        self.spans: list = []

    def export(self, spans):  # type: ignore[no-untyped-def]
        self.spans.extend(spans)
        from opentelemetry.sdk.trace.export import SpanExportResult
        return SpanExportResult.SUCCESS


def openllmetry_trace(tracer_provider: TracerProvider, nodes_as_json_in_json: bool = False) -> None:
    """Traceloop's OpenLLMetry: a workflow, a vector-DB query with result events (or a retriever
    task whose output nodes are JSON inside JSON), and an OpenAI chat span with flattened prompts."""
    tracer = tracer_provider.get_tracer("opentelemetry.instrumentation.openai")
    with tracer.start_as_current_span("support.workflow", attributes={
        "traceloop.span.kind": "workflow", "traceloop.entity.name": "support",
        "traceloop.entity.input": json.dumps({"args": ["Do you ship to Canada?"], "kwargs": {}}),
        "traceloop.entity.output": json.dumps("Yes, within 5-8 business days."),
        "traceloop.association.properties.session_id": "tl-session", "traceloop.association.properties.user_id": "tl-user",
    }):
        if nodes_as_json_in_json:
            nodes = [json.dumps({"node": {"id_": "n1", "text": "We ship to Canada in 5-8 business days."}, "score": 0.8}),
                     json.dumps({"node": {"id_": "n2", "text": "Duties are shown at checkout."}, "score": 0.6})]
            with tracer.start_as_current_span("retrieve.task", attributes={
                "traceloop.span.kind": "task", "traceloop.entity.name": "retrieve",
                "traceloop.entity.output": json.dumps(nodes)}):
                pass
        else:
            with tracer.start_as_current_span("chroma.query") as span:
                for doc_id, text, score in (("c1", "We ship to Canada in 5-8 business days.", 0.81),
                                            ("c2", "Duties are shown at checkout.", 0.64)):
                    span.add_event("db.query.result", {"db.query.result.id": doc_id, "db.query.result.score": score,
                                                       "db.query.result.document": text})
        with tracer.start_as_current_span("openai.chat", attributes={
            "llm.request.type": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
            "gen_ai.usage.prompt_tokens": 210, "gen_ai.usage.completion_tokens": 9,
            "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": "Answer from the context.",
            "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": "Do you ship to Canada?",
            "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "Yes, within 5-8 business days.",
        }):
            pass


def http_server_trace(tracer_provider: TracerProvider, search_id: str | None = "chatcmpl-search",
                      answer_id: str | None = "chatcmpl-answer", agent_id: str | None = None) -> None:
    """A web app's turn (FastAPI under OpenTelemetry's instrumentation, GenAI spans below): the HTTP server's
    root span `POST /ask` (SERVER), optionally an agent span (invoke_agent), a chat call that chooses to search,
    the search, and the chat call that answers; each call with its response id (gen_ai.response.id) when given."""
    from contextlib import nullcontext

    from opentelemetry.trace import SpanKind

    tracer = tracer_provider.get_tracer("genai-app")
    question = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "How long is the warranty?"}]}])

    def chat(name: str, output: str, response_id: str | None) -> None:
        with tracer.start_as_current_span(name, kind=SpanKind.CLIENT, attributes={
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.input.messages": question,
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": output}]}]),
            **({"gen_ai.response.id": response_id} if response_id else {})}):
            pass

    with tracer.start_as_current_span("POST /ask", kind=SpanKind.SERVER,
                                      attributes={"http.request.method": "POST", "http.route": "/ask"}):
        agent = tracer.start_as_current_span("invoke_agent shop", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.response.id": agent_id}) if agent_id else nullcontext()
        with agent:
            chat("chat search", "Let me look that up.", search_id)
            with tracer.start_as_current_span("retrieval", attributes={
                "gen_ai.operation.name": "retrieval", "gen_ai.retrieval.query.text": "warranty duration",
                "gen_ai.retrieval.documents": json.dumps([{"id": "w", "content": "The warranty lasts 2 years."}])}):
                pass
            chat("chat answer", "The warranty lasts 2 years.", answer_id)
