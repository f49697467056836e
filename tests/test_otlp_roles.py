"""What a span is (LLM, tool call, retrieval): the decoder's answer (native/src/otlp/roles.rs, by role_rules.py's
tables) is the Python rules' (roles.py) for every span it answers, and it leaves to them the spans it cannot."""

from __future__ import annotations

import itertools

import pytest
from helpers.otlp_payload import batches
from helpers.otlp_shapes import Collect, genai_trace, http_server_trace, openinference_trace, openllmetry_trace, provider
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from ragpulse.sources.otlp.role_rules import (
    AI_OPERATION, AI_SDK_CALLS, GENAI_OPERATION, LLM, OI_KIND, RETRIEVAL, ROLE_RULES,
)
from ragpulse.sources.otlp.roles import span_roles
from ragpulse.sources.otlp.spans import Span, SpanEvent, decode_protobuf

pytestmark = pytest.mark.unit

NAMES = ("query", "ai.generateText.doGenerate", "ai.toolCall", "ai.embed")
KINDS = (None, "LLM", "TOOL", "RETRIEVER", "RERANKER", "CHAIN", "")
OPERATIONS = (None, "chat", "text_completion", "generate_content", "execute_tool", "retrieval", "invoke_agent", "")
CALLS = (None, "", "ai.streamText.doStream", "ai.toolCall", "ai.generateText")
EVENTS = ((), ("db.query.result",), ("exception",))
RARE = (None, ("llm.request.type", "chat"), ("gen_ai.output.messages", "[]"), ("traceloop.span.kind", "task"))


def python_roles(name: str, attributes: dict[str, str | None], events: tuple[str, ...]) -> int:
    return span_roles(Span(trace_id="a" * 32, span_id="b" * 16, parent_span_id=None, name=name, start_unix_nano=1,
                           end_unix_nano=2, attributes=attributes, resource={},
                           events=[SpanEvent(event, 1, {}) for event in events]))


def test_the_decoders_rules_are_the_python_rules_or_leave_the_span_to_them() -> None:
    answered = 0
    for name, kind, operation, call, events, rare in itertools.product(NAMES, KINDS, OPERATIONS, CALLS, EVENTS, RARE):
        pairs = [(key, value) for key, value in ((OI_KIND, kind), (GENAI_OPERATION, operation), (AI_OPERATION, call))
                 if value is not None] + ([rare] if rare else [])
        crate = ROLE_RULES.of(name, pairs, list(events))
        if rare is not None:
            assert crate == -1
            continue
        assert crate == python_roles(name, dict(pairs), events), (name, pairs, events)
        answered += 1
    assert answered == len(NAMES) * len(KINDS) * len(OPERATIONS) * len(CALLS) * len(EVENTS)
    assert ROLE_RULES.of("query", [(OI_KIND, "LLM"), (OI_KIND, "TOOL")], []) == 2  # a key twice: the last value
    assert ROLE_RULES.of(next(iter(AI_SDK_CALLS)), [(AI_OPERATION, None)], []) == 1  # an empty value: the name


def recorded(shape) -> list[Span]:  # type: ignore[no-untyped-def]
    collect = Collect()
    shape(provider(SimpleSpanProcessor(collect)))
    return decode_protobuf(encode_spans(collect.spans).SerializeToString()).spans


@pytest.mark.parametrize("shape", [openinference_trace, genai_trace, openllmetry_trace, http_server_trace])
def test_decoded_spans_carry_the_roles_the_python_rules_give(shape) -> None:  # type: ignore[no-untyped-def]
    spans = recorded(shape) + decode_protobuf(batches(1, payload="realistic")[0]).spans  # and LlamaIndex's 8
    decided = [span.roles for span in spans]
    for span in spans:
        span.roles = -1
    python = [span_roles(span) for span in spans]
    assert [d for d in decided if d >= 0] == [p for d, p in zip(decided, python, strict=True) if d >= 0]
    assert decided[-8:] == python[-8:] == [LLM, LLM, 0, 0, 0, RETRIEVAL, RETRIEVAL, 0]  # the payload's, children first
