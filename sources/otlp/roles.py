"""What a span is to the mapping, in every convention: a model call (LLM), a tool call, a retrieval. Every span of
every trace is asked, so the three are answered together (span_roles), by the tables of role_rules.py: the decoder
answers with them while it makes a span's record (Span.roles), these rules for any other span (and for the spans
holding a key only they read).
"""

from __future__ import annotations

from ragpulse.sources.otlp.role_rules import (
    AI_OPERATION, CALL_ROLES, EVENT_ROLES, GENAI_OPERATION, KIND_ROLES, LLM, OI_KIND, OPERATION_ROLES, RARE_KEYS,
    RETRIEVAL, TOOL, TRACELOOP_KIND,
)
from ragpulse.sources.otlp.spans import Span
from ragpulse.sources.otlp.values import text_value

__all__ = ["GENAI_OPERATION", "LLM", "RETRIEVAL", "TOOL", "TRACELOOP_KIND", "is_llm", "span_roles"]


def span_roles(span: Span) -> int:
    """LLM | TOOL | RETRIEVAL, those the span is. An LLM span: OpenInference's kind LLM, a GenAI model operation,
    OpenLLMetry's request type chat or completion, a framework's LLM task that says so only by its output messages
    (OpenLLMetry on a LlamaIndex LLM), an AI SDK doGenerate/doStream. A tool call: OpenInference's TOOL, GenAI's
    execute_tool, the AI SDK's ai.toolCall. A retrieval: a retriever or reranker, GenAI's retrieval operation or
    documents, a vector store's db.query.result events, a Traceloop retriever task (the mapping reads a span that is
    a tool call and a retrieval as a tool call)."""
    if span.roles >= 0:  # the decoder's answer, by the same tables
        return span.roles
    attrs = span.attributes
    kind = attrs.get(OI_KIND)
    # any attribute may be an array or a kvlist; most spans have no operation (OpenInference's), or a str
    raw_operation = attrs.get(GENAI_OPERATION)
    operation = raw_operation if raw_operation is None or type(raw_operation) is str else text_value(raw_operation)
    ai_operation = attrs.get(AI_OPERATION)  # tool_calls.operation(span), inlined
    called = span.name if ai_operation is None else text_value(ai_operation) or span.name
    roles = ((KIND_ROLES.get(kind, 0) if isinstance(kind, str) else 0) | OPERATION_ROLES.get(operation or "", 0)
             | CALL_ROLES.get(called, 0))
    for event in span.events:
        roles |= EVENT_ROLES.get(event.name, 0)
    if attrs.keys().isdisjoint(RARE_KEYS):
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
