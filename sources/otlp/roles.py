"""What a span is to the mapping, in every convention: a model call (LLM), a tool call, a retrieval. Every span of
every trace is asked, so the three are answered together (span_roles): the keys they share are looked up once a
span, and the keys only some conventions set only when the span holds one of them (one set test, not a lookup each).
"""

from __future__ import annotations

from ragpulse.sources.otlp.documents import DB_QUERY_RESULT, OI_KIND
from ragpulse.sources.otlp.spans import Span
from ragpulse.sources.otlp.tool_calls import AI_SDK_CALLS, TOOL_CALL
from ragpulse.sources.otlp.values import text_value

TRACELOOP_KIND = "traceloop.span.kind"
GENAI_OPERATION = "gen_ai.operation.name"
_LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
LLM, TOOL, RETRIEVAL = 1, 2, 4
# OpenLLMetry's request type and span kind, GenAI's output messages and retrieved documents: what the rules below
# read besides the OpenInference kind, the GenAI operation and the AI SDK's operation, which every rule reads.
_RARE_KEYS = frozenset({"llm.request.type", "gen_ai.output.messages", "gen_ai.retrieval.documents", TRACELOOP_KIND})


def span_roles(span: Span) -> int:
    """LLM | TOOL | RETRIEVAL, those the span is. An LLM span: OpenInference's kind LLM, a GenAI model operation,
    OpenLLMetry's request type chat or completion, a framework's LLM task that says so only by its output messages
    (OpenLLMetry on a LlamaIndex LLM), an AI SDK doGenerate/doStream. A tool call: OpenInference's TOOL, GenAI's
    execute_tool, the AI SDK's ai.toolCall. A retrieval: a retriever or reranker, GenAI's retrieval operation or
    documents, a vector store's db.query.result events, a Traceloop retriever task (the mapping reads a span that is
    a tool call and a retrieval as a tool call)."""
    attrs = span.attributes
    kind = attrs.get(OI_KIND)
    raw_operation = attrs.get(GENAI_OPERATION)
    # any attribute may be an array or a kvlist; most spans have no operation (OpenInference's), or a str
    operation = raw_operation if raw_operation is None or type(raw_operation) is str else text_value(raw_operation)
    ai_operation = attrs.get("ai.operationId")  # tool_calls.operation(span), inlined
    called = span.name if ai_operation is None else text_value(ai_operation) or span.name
    roles = 0
    if kind == "LLM" or operation in _LLM_OPERATIONS or called in AI_SDK_CALLS:
        roles |= LLM
    if kind == "TOOL" or raw_operation == "execute_tool" or called == TOOL_CALL:
        roles |= TOOL
    if (kind in ("RETRIEVER", "RERANKER") or raw_operation == "retrieval"
            or (span.events and any(event.name == DB_QUERY_RESULT for event in span.events))):
        roles |= RETRIEVAL
    if attrs.keys().isdisjoint(_RARE_KEYS):
        return roles
    if (attrs.get("llm.request.type") in ("chat", "completion")
            or (operation is None and kind is None and "gen_ai.output.messages" in attrs)):
        roles |= LLM
    traceloop_retriever = (attrs.get(TRACELOOP_KIND) == "task"
                           and "retriev" in str(attrs.get("traceloop.entity.name", span.name)).lower())
    if "gen_ai.retrieval.documents" in attrs or traceloop_retriever:
        roles |= RETRIEVAL
    return roles


def is_llm(span: Span) -> bool:
    return bool(span_roles(span) & LLM)
