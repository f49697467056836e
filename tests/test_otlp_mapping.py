"""Spans recorded by the real OpenTelemetry SDK, encoded as its OTLP exporters encode them, mapped to events."""

from __future__ import annotations

import json

import pytest
from helpers.clocks import Clock
from helpers.otlp_shapes import Collect, genai_trace, http_server_trace, openinference_trace, openllmetry_trace, provider
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from prometheus_client import CollectorRegistry, Counter

from ragpulse.collector.events import TraceEvent, Usage
from ragpulse.sources.otlp.assembler import TraceAssembler
from ragpulse.sources.otlp.keys import key_filter
from ragpulse.sources.otlp.mapping import NotMapped, TraceMapper
from ragpulse.sources.otlp.spans import Span, decode_protobuf


pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


def recorded(shape, route_attribute: str | None = None) -> list[Span]:  # type: ignore[no-untyped-def]
    """The spans as the receiver decodes them: only the attributes the mapping (and the route) reads."""
    collect = Collect()
    shape(provider(SimpleSpanProcessor(collect)))
    decoded = decode_protobuf(encode_spans(collect.spans).SerializeToString(), key_filter(route_attribute))
    assert decoded.rejected == 0
    return decoded.spans


def test_openinference_trace_maps_query_chunks_answer_model_tokens_and_session() -> None:
    spans = recorded(openinference_trace, "rag.route")
    event = TraceMapper(route_attribute="rag.route").map(spans)
    assert event is not None
    assert event.trace_id == spans[0].trace_id and len(event.trace_id) == 32
    assert event.query == "Can I return opened headphones?"
    assert event.answer == "You can return it within 30 days."  # the response field of the JSON output
    assert [(c.id, c.score) for c in event.chunks or []] == [("kb-1", 0.91), ("kb-2", 0.74), ("kb-3", 0.33)]
    assert (event.chunks or [])[0].text == "Returns are accepted within 30 days of delivery."
    assert event.model == "gpt-4o-mini"  # the leaf LLM, not its wrapper
    assert event.usage is not None and (event.usage.prompt_tokens, event.usage.completion_tokens) == (420, 17)
    assert (event.session_id, event.user_id, event.route) == ("sess-1", "user-7", "returns")
    assert (event.app, event.release) == ("shop-bot", "1.2.3")
    assert event.attributes == {"metadata": {"tenant": "acme"}, "tags": ["beta"]}
    root = next(s for s in spans if s.parent_span_id is None)
    assert event.latency_ms == root.duration_seconds * 1000
    assert event.timestamp == root.start_unix_nano / 1e6


def test_genai_trace_maps_retrieval_documents_and_chat_output() -> None:
    event = TraceMapper().map(recorded(genai_trace))
    assert event is not None
    assert event.query == "Do you ship to Canada?"
    assert event.answer == "Yes, in 5-8 days."
    assert [(c.id, c.text, c.score) for c in event.chunks or []] == [
        ("ship-1", "We ship to Canada in 5-8 days.", 0.88), ("ship-2", "Duties at checkout.", None)]  # garbage score dropped
    assert event.model == "gpt-4o-2024-08-06"
    assert event.usage is not None and (event.usage.prompt_tokens, event.usage.completion_tokens) == (300, 12)
    assert event.session_id == "conv-9"


def test_traces_without_retrieval_or_llm_are_not_rag() -> None:
    collect = Collect()
    tracer = provider(SimpleSpanProcessor(collect)).get_tracer("x")
    with tracer.start_as_current_span("GET /healthz"):
        pass
    spans = decode_protobuf(encode_spans(collect.spans).SerializeToString()).spans
    assert TraceMapper().map(spans) == NotMapped("not_rag")


def assembler(clock: Clock, registry: CollectorRegistry, **overrides: float) -> TraceAssembler:
    options = {"grace_seconds": 1.0, "max_wait_seconds": 6.0, "ttl_seconds": 10.0, "max_traces": 2, "max_bytes": 1 << 30,
               "max_spans_per_trace": 100, **overrides}
    return TraceAssembler(
        TraceMapper(),
        outcomes=Counter("outcomes_total", "t", ["outcome"], registry=registry),
        dropped_spans=Counter("dropped_total", "t", ["reason"], registry=registry),
        late_spans=Counter("late_total", "t", ["kind"], registry=registry),
        clock=clock,
        **options,  # type: ignore[arg-type]
    )


def test_assembly_waits_for_the_grace_period_handles_any_order_and_duplicates() -> None:
    spans = recorded(openinference_trace)
    root = [s for s in spans if s.parent_span_id is None]
    children = [s for s in spans if s.parent_span_id is not None]
    clock, registry = Clock(100.0), CollectorRegistry()
    a = assembler(clock, registry)
    assert a.add(root) == []  # root first
    clock.now += 0.5
    a.add(children[:2])
    a.add(children[:2])  # a retried export: duplicates
    assert a.due() == []
    clock.now += 0.6  # the grace period since the root passed; later children still arrive in time if before
    a.add(children[2:])
    [(event, _)] = a.due()
    assert len(event.chunks or []) == 3 and event.usage is not None and event.usage.prompt_tokens == 420
    assert registry.get_sample_value("dropped_total", {"reason": "duplicate"}) == 2
    a.add(children[:1])  # a straggler after assembly
    assert registry.get_sample_value("dropped_total", {"reason": "late_span"}) == 1
    assert registry.get_sample_value("outcomes_total", {"outcome": "complete"}) == 1


def test_a_trace_without_root_is_assembled_after_the_ttl_and_the_cap_assembles_the_oldest() -> None:
    spans = recorded(openinference_trace)
    other = recorded(genai_trace)
    third = recorded(openinference_trace)
    clock, registry = Clock(100.0), CollectorRegistry()
    a = assembler(clock, registry)
    a.add([s for s in spans if s.parent_span_id is not None])  # the root never comes
    clock.now += 9.9
    assert a.due() == []
    clock.now += 0.2
    [(event, _)] = a.due()
    assert event.query == "Can I return opened headphones?"  # from the retriever, without the root
    assert registry.get_sample_value("outcomes_total", {"outcome": "ttl_expired"}) == 1
    def retriever(trace: list[Span]) -> list[Span]:  # the retriever and LLM spans: a question and an answer, no root
        return [s for s in trace if s.parent_span_id is not None]

    fourth = recorded(genai_trace)
    assert a.add(retriever(other)) == [] and a.add(retriever(third)) == []
    [(early, _)] = a.add(retriever(fourth))  # a third trace in flight, over max_traces=2: the oldest goes now
    assert early.trace_id == other[0].trace_id
    assert a.in_flight == 2
    assert registry.get_sample_value("outcomes_total", {"outcome": "capacity"}) == 1


def test_openllmetry_trace_with_vector_db_result_events() -> None:
    event = TraceMapper().map(recorded(openllmetry_trace))
    assert event is not None
    assert (event.query, event.answer) == ("Do you ship to Canada?", "Yes, within 5-8 business days.")
    assert [(c.id, c.score) for c in event.chunks or []] == [("c1", 0.81), ("c2", 0.64)]
    assert (event.chunks or [])[1].text == "Duties are shown at checkout."
    assert event.model == "gpt-4o-mini-2024-07-18"
    assert event.usage is not None and (event.usage.prompt_tokens, event.usage.completion_tokens) == (210, 9)
    assert (event.session_id, event.user_id) == ("tl-session", "tl-user")


def test_openllmetry_retriever_task_with_json_inside_json_nodes() -> None:
    event = TraceMapper().map(recorded(lambda tp: openllmetry_trace(tp, nodes_as_json_in_json=True)))
    assert event is not None
    assert [(c.id, c.text, c.score) for c in event.chunks or []] == [
        ("n1", "We ship to Canada in 5-8 business days.", 0.8), ("n2", "Duties are shown at checkout.", 0.6)]


def test_llm_only_traces_take_the_question_from_the_prompt() -> None:
    spans = [s for s in recorded(openllmetry_trace) if s.name == "openai.chat"]
    spans[0].parent_span_id = None  # the chat span alone, as its own root
    event = TraceMapper().map(spans)
    assert event is not None
    assert (event.query, event.answer, event.chunks) == ("Do you ship to Canada?", "Yes, within 5-8 business days.", None)


def test_llm_only_shapes_prompts_input_messages_and_older_genai_events() -> None:
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor as Simple

    def llm_span(attributes: dict[str, object], events: list[tuple[str, dict[str, object]]] = ()) -> list[Span]:  # type: ignore[assignment]
        collect = Collect()
        with provider(Simple(collect)).get_tracer("x").start_as_current_span("llm", attributes=attributes) as span:
            for name, event_attributes in events:
                span.add_event(name, event_attributes)
        return decode_protobuf(encode_spans(collect.spans).SerializeToString()).spans

    mapper = TraceMapper()
    flattened = mapper.map(llm_span({"openinference.span.kind": "LLM", "llm.prompts.0.prompt.text": "first?",
                                     "llm.prompts.1.prompt.text": "second?", "output.value": "ok"}))
    plain = mapper.map(llm_span({"openinference.span.kind": "LLM", "llm.prompts": ["only?"], "output.value": "ok"}))
    chat = mapper.map(llm_span({"openinference.span.kind": "LLM", "llm.input_messages.0.message.role": "system",
                                "llm.input_messages.0.message.content": "Be brief.", "llm.input_messages.1.message.role": "user",
                                "llm.input_messages.1.message.content": "Where is my order?", "output.value": "ok"}))
    events = mapper.map(llm_span({"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"},
                                 [("gen_ai.user.message", {"content": "Old style question?"}),
                                  ("gen_ai.choice", {"message": '{"role": "assistant", "content": "Old style answer."}'})]))
    assert [e.query if e else None for e in (flattened, plain, chat, events)] == [
        "second?", "only?", "Where is my order?", "Old style question?"]
    assert events is not None and events.answer == "Old style answer."


def test_garbage_attribute_types_do_not_break_mapping() -> None:
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor as Simple

    collect = Collect()
    tracer = provider(Simple(collect)).get_tracer("x")
    with tracer.start_as_current_span("root", attributes={"input.value": 42, "output.value": ["not", "text"],
                                                          "session.id": 7, "metadata": "{broken json"}):
        with tracer.start_as_current_span("retrieve", attributes={
            "openinference.span.kind": "RETRIEVER", "retrieval.documents.0.document.content": 123,
            "retrieval.documents.0.document.score": "high", "retrieval.documents.0.document.id": True,
            "retrieval.documents.1.document.content": "fine", "retrieval.documents.1.document.score": 0.4}):
            pass
        with tracer.start_as_current_span("llm", attributes={
            "openinference.span.kind": "LLM", "llm.model_name": ["a", "b"], "llm.token_count.prompt": "many",
            "llm.token_count.completion": -5, "llm.output_messages.0.message.content": "An answer."}):
            pass
    event = TraceMapper().map(decode_protobuf(encode_spans(collect.spans).SerializeToString()).spans)
    assert event is not None
    assert isinstance(event, TraceEvent)  # the root's output is a list, not text: the answer is the LLM's
    assert (event.query, event.answer, event.session_id, event.model) == ("42", "An answer.", "7", None)
    assert [(c.text, c.score) for c in event.chunks or []] == [("123", None), ("fine", 0.4)]
    assert event.usage is None  # "many" and -5 are no token counts: not reported, rather than 0 made up
    assert event.attributes == {"metadata": "{broken json"}


def remote_call_trace(trace_id: str = "ab" * 16) -> tuple[list[Span], list[Span]]:
    """A gateway's root and its CLIENT call to a retrieval service; that service's SERVER span and retriever."""

    def make(span_id: str, parent: str | None, name: str, kind: int = 1, **attributes: object) -> Span:
        return Span(trace_id, span_id, parent, name, 0, 1, dict(attributes), {"service.name": name}, kind=kind, size=10)

    gateway = [make("01" * 8, None, "query", **{"openinference.span.kind": "CHAIN", "input.value": "Can I return it?",
                                                "output.value": "Within 30 days."}),
               make("02" * 8, "01" * 8, "POST /retrieve", kind=3)]
    retrieval = [make("03" * 8, "02" * 8, "POST /retrieve", kind=2),
                 make("04" * 8, "03" * 8, "retrieve", **{"openinference.span.kind": "RETRIEVER",
                                                         "retrieval.documents.0.document.content": "30 days."})]
    return gateway, retrieval


def test_a_call_out_with_no_span_of_the_other_side_yet_waits_up_to_max_wait() -> None:
    gateway, retrieval = remote_call_trace()
    clock, registry = Clock(100.0), CollectorRegistry()
    a = assembler(clock, registry, max_traces=10)
    a.add(gateway)
    clock.now += 1.5  # past the grace: but the CLIENT span has no child yet
    assert a.due() == []
    clock.now += 1.5
    a.add(retrieval[1:])  # the retriever first: its parent, the SERVER span, is still missing
    assert a.due() == []
    a.add(retrieval[:1])
    [(event, _)] = a.due()  # complete now, with its retrieval
    assert [c.text for c in event.chunks or []] == ["30 days."]
    # The other side never comes: assembled at max_wait after the root, and a straggler is counted by kind.
    later_gateway, later_retrieval = remote_call_trace("cd" * 16)
    a.add(later_gateway)
    clock.now += 5.9
    assert a.due() == [] and a.in_flight == 1
    clock.now += 0.2
    assert a.due() == [] and a.in_flight == 0  # assembled at max_wait: no retrieval nor model call, so not RAG
    assert registry.get_sample_value("outcomes_total", {"outcome": "not_rag"}) == 1
    a.add(later_retrieval)
    assert registry.get_sample_value("late_total", {"kind": "retriever"}) == 1
    assert registry.get_sample_value("late_total", {"kind": "other"}) == 1
    assert registry.get_sample_value("dropped_total", {"reason": "late_span"}) == 2



def by_hand_trace(trace_id: str) -> tuple[list[Span], list[Span]]:
    """A gateway that propagates its root's context by hand (no CLIENT span) and calls its model; the retrieval
    service's SERVER span, a child of the gateway's root, and its retriever."""

    def make(span_id: str, parent: str | None, name: str, service: str, kind: int = 1, **attributes: object) -> Span:
        return Span(trace_id, span_id, parent, name, 0, 1, dict(attributes), {"service.name": service}, kind=kind, size=10)

    text = {"input.value": "Can I return it?", "output.value": "Within 30 days."}
    gateway = [make("01" * 8, None, "query", "gateway", **{"openinference.span.kind": "CHAIN", **text}),
               make("02" * 8, "01" * 8, "llm", "gateway", **{"openinference.span.kind": "LLM", **text})]
    retrieval = [make("03" * 8, "01" * 8, "POST /retrieve", "retrieval", kind=2),
                 make("04" * 8, "03" * 8, "retrieve", "retrieval", **{"openinference.span.kind": "RETRIEVER",
                                                                       "retrieval.documents.0.document.content": "30 days."})]
    return gateway, retrieval


def test_late_retrievals_make_their_root_service_wait_and_the_warning_names_the_setting_and_how_late() -> None:
    """Nothing pending at the grace: the first trace goes without its retrieval, which comes 3.1 s after the root;
    the warning names grace_seconds, and the gateway's later traces wait for their retrieval (up to max_wait).
    A chat trace of another service, and the gateway's trace that came with its retrieval, still go at the grace."""
    from structlog.testing import capture_logs

    clock, registry = Clock(100.0), CollectorRegistry()
    a = assembler(clock, registry, max_traces=10)
    traces = {name: by_hand_trace(name * 16) for name in ("a1", "a2", "a3", "a4")}
    chat = Span("c" * 32, "05" * 8, None, "chat", 0, 1, {"openinference.span.kind": "LLM", "input.value": "Hi?",
                                                          "output.value": "Hello."}, {"service.name": "chat"}, size=10)
    with capture_logs() as logs:
        a.add(traces["a1"][0])
        clock.now += 1.1
        [(first, _)] = a.due()
        clock.now += 2.0
        a.add(traces["a1"][1])
        assert first.chunks is None and a.in_flight == 0
        assert logs == [
            {"event": "spans came after their trace was assembled and were dropped", "log_level": "warning",
             "service": "retrieval", "span": "POST /retrieve", "trace_service": "gateway", "late_seconds": 3.1,
             "fix": "raise otlp.grace_seconds (now 1) above 3.1"},
            {"event": "retrievals came after their trace was assembled: this service's traces without a retrieval now "
                      "wait for one, up to otlp.max_wait_seconds (6)", "log_level": "warning", "service": "gateway"}]

        a.add(traces["a2"][0])
        clock.now += 1.1
        assert a.due() == [] and a.in_flight == 1  # past the grace, no retrieval yet: it waits
        clock.now += 1.9
        a.add(traces["a2"][1])
        [(second, _)] = a.due()
        assert [c.text for c in second.chunks or []] == ["30 days."]

        a.add([chat, *traces["a3"][0], *traces["a3"][1]])
        clock.now += 1.1
        assert sorted(event.trace_id for event, _ in a.due()) == ["a3" * 16, "c" * 32]  # no extra wait

        a.add(traces["a4"][0])  # its retrieval never comes in time: assembled at max_wait
        clock.now += 5.9
        assert a.due() == []
        clock.now += 0.2
        [(fourth, _)] = a.due()
        clock.now += 1.0
        a.add(traces["a4"][1])
        assert fourth.chunks is None
        assert logs[2:] == [{"event": "spans came after their trace was assembled and were dropped", "log_level": "warning",
                             "service": "retrieval", "span": "POST /retrieve", "trace_service": "gateway",
                             "late_seconds": 7.1, "fix": "raise otlp.max_wait_seconds (now 6) above 7.1"}]
    assert registry.get_sample_value("dropped_total", {"reason": "late_span"}) == 4
    assert registry.get_sample_value("late_total", {"kind": "retriever"}) == 2
    assert registry.get_sample_value("outcomes_total", {"outcome": "complete"}) == 5


def test_a_trace_another_service_reached_or_that_names_its_peer_waits_for_its_retrieval() -> None:
    """No CLIENT span, nothing learnt: a SERVER span of another service with no retrieval yet, or a span naming
    its peer (peer.service, url.full, http.url) with no span of another service under it, holds the trace past
    the grace, up to max_wait; its retrieval, 3 s after the root, is in it. What says nothing is still to come
    (the root service's own SERVER span naming its caller, another service's SERVER span once a retrieval has
    come, a model call's URL and its model server's SERVER span, a named peer that has answered) holds nothing."""
    from structlog.testing import capture_logs

    def make(trace: str, span_id: str, parent: str | None, service: str, kind: int = 1, **attributes: object) -> Span:
        return Span(trace * 16, span_id * 8, parent and parent * 8, span_id, 0, 1, dict(attributes),
                    {"service.name": service}, kind=kind, size=10)

    text = {"input.value": "Can I return it?", "output.value": "Within 30 days."}
    llm = {"openinference.span.kind": "LLM", **text}
    retriever = {"openinference.span.kind": "RETRIEVER", "retrieval.documents.0.document.content": "30 days."}
    clock, registry = Clock(100.0), CollectorRegistry()
    a = assembler(clock, registry, max_traces=20)
    held = {  # gateway spans at the grace; the rest 3 s after the root
        "server": ([make("a1", "01", None, "gateway", **text), make("a1", "02", "01", "gateway", **llm),
                    make("a1", "03", "01", "retrieval", kind=2)],  # the retrieval service hands the call on by hand
                   [make("a1", "04", "03", "search", **retriever)]),
        "root names its peer": ([make("a2", "01", None, "gateway", **{"peer.service": "retrieval", **text}),
                                 make("a2", "02", "01", "gateway", **llm)],
                                [make("a2", "03", "01", "retrieval", kind=2), make("a2", "04", "03", "retrieval", **retriever)]),
        "call by URL": ([make("a3", "01", None, "gateway", **text), make("a3", "02", "01", "gateway", **llm),
                         make("a3", "05", "01", "gateway", **{"url.full": "http://retrieval/search"})],
                        [make("a3", "03", "05", "retrieval", kind=2), make("a3", "04", "03", "retrieval", **retriever)]),
        "old URL": ([make("a4", "01", None, "gateway", **text), make("a4", "02", "01", "gateway", **llm),
                     make("a4", "05", "01", "gateway", **{"http.url": "http://retrieval/search"})],
                    [make("a4", "04", "05", "retrieval", **retriever)]),
    }
    plain = [  # assembled at the grace
        [make("b1", "01", None, "gateway", kind=2, **{"peer.service": "frontend", **text}),  # its own SERVER, naming
         make("b1", "02", "01", "gateway", **llm)],  # its caller (as OpenTracing did)
        [make("b2", "01", None, "gateway", **text), make("b2", "02", "01", "gateway", **retriever),
         make("b2", "03", "01", "chat", kind=2), make("b2", "04", "03", "chat", **llm)],  # its retrieval has come
        [make("b3", "01", None, "gateway", **text), make("b3", "02", "01", "gateway", **{"url.full": "http://llm", **llm}),
         make("b3", "03", "02", "vllm", kind=2, **{"gen_ai.operation.name": "chat"})],  # a model server's SERVER span
        [make("b4", "01", None, "gateway", **{"peer.service": "retrieval", **text}), make("b4", "02", "01", "gateway", **llm),
         make("b4", "03", "01", "retrieval", kind=2), make("b4", "04", "03", "retrieval", **retriever)],  # all there
    ]
    with capture_logs() as logs:
        a.add([span for gateway, _ in held.values() for span in gateway] + [span for spans in plain for span in spans])
        clock.now += 1.1
        assert sorted(event.trace_id[:2] for event, _ in a.due()) == ["b1", "b2", "b3", "b4"]
        assert a.in_flight == 4
        clock.now += 1.9
        a.add([span for _, rest in held.values() for span in rest])
        done = a.due()
        assert sorted((event.trace_id[:2], [c.text for c in event.chunks or []]) for event, _ in done) == [
            ("a1", ["30 days."]), ("a2", ["30 days."]), ("a3", ["30 days."]), ("a4", ["30 days."])]
        # Bounded as any wait: the other side never comes, assembled at max_wait after the root.
        a.add([make("c1", "01", None, "gateway", **text), make("c1", "02", "01", "gateway", **llm),
               make("c1", "03", "01", "retrieval", kind=2)])
        clock.now += 5.9
        assert a.due() == [] and a.in_flight == 1
        clock.now += 0.2
        assert [event.trace_id[:2] for event, _ in a.due()] == ["c1"]
    assert logs == []  # nothing came late, nothing was learnt
    assert registry.get_sample_value("dropped_total", {"reason": "late_span"}) is None


def _spans(build) -> list[Span]:  # type: ignore[no-untyped-def]
    collect = Collect()
    build(provider(SimpleSpanProcessor(collect)).get_tracer("shapes"))
    return decode_protobuf(encode_spans(collect.spans).SerializeToString()).spans


def test_multi_part_message_content_is_read_and_non_text_parts_are_skipped_and_counted() -> None:
    """OpenInference writes list content as `message.contents.{j}.message_content.{type,text}` (openinference-vercel
    always does): the question and the answer are there, not "content not captured"; an image part is skipped."""
    def build(tracer) -> None:  # type: ignore[no-untyped-def]
        with tracer.start_as_current_span("agent", attributes={"openinference.span.kind": "AGENT"}):
            with tracer.start_as_current_span("llm", attributes={
                "openinference.span.kind": "LLM", "llm.model_name": "m",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.contents.0.message_content.type": "text",
                "llm.input_messages.0.message.contents.0.message_content.text": "What does this receipt say",
                "llm.input_messages.0.message.contents.1.message_content.type": "image",
                "llm.input_messages.0.message.contents.1.message_content.image.image.url": "data:image/png;base64,AAAA",
                "llm.input_messages.0.message.contents.2.message_content.type": "text",
                "llm.input_messages.0.message.contents.2.message_content.text": "about returns?",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.contents.0.message_content.type": "text",
                "llm.output_messages.0.message.contents.0.message_content.text": "Returns within 30 days.",
            }):
                pass

    mapper = TraceMapper()
    event = mapper.map(_spans(build))
    assert isinstance(event, TraceEvent)
    assert (event.query, event.answer) == ("What does this receipt say\nabout returns?", "Returns within 30 days.")
    assert mapper.skipped_parts == {"image": 1}


@pytest.mark.parametrize("context", ["ai.telemetry.metadata", "ai.settings.context", "metadata"])
def test_vercel_ai_sdk_spans_map_question_answer_model_usage_session_and_tool_documents(context: str) -> None:
    """The AI SDK's `experimental_telemetry` spans, as the SDK writes them: ai.generateText around its provider
    calls (ai.generateText.doGenerate, no gen_ai.operation.name) and an ai.toolCall whose result is documents.
    Session and user as AI SDK 6 metadata, AI SDK 7 runtime context (@ai-sdk/otel, runtimeContext: true) or
    OpenInference metadata (@arizeai/openinference-vercel)."""
    documents = [{"id": "kb-fr", "pageContent": "Paris is the capital of France.", "score": 0.9},
                 {"id": "kb-de", "pageContent": "Berlin is the capital of Germany.", "score": 0.4}]

    def build(tracer) -> None:  # type: ignore[no-untyped-def]
        with tracer.start_as_current_span("ai.generateText", attributes={
            "ai.operationId": "ai.generateText", "ai.model.id": "gpt-4o-mini",
            "ai.prompt": json.dumps({"prompt": "What is the capital of France?"}),
            "ai.response.text": "Paris.", f"{context}.sessionId": "s-ai", f"{context}.userId": "u-ai",
        }):
            with tracer.start_as_current_span("ai.generateText.doGenerate", attributes={
                "ai.operationId": "ai.generateText.doGenerate", "gen_ai.system": "openai.chat",
                "gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
                "ai.prompt.messages": json.dumps([{"role": "user", "content": [{"type": "text", "text": "What is the capital of France?"}]}]),
                "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 8,
            }):
                pass
            with tracer.start_as_current_span("ai.toolCall", attributes={
                "ai.operationId": "ai.toolCall", "ai.toolCall.name": "search", "ai.toolCall.id": "call_0",
                "ai.toolCall.args": json.dumps({"query": "capital of France"}), "ai.toolCall.result": json.dumps(documents),
            }):
                pass
            with tracer.start_as_current_span("ai.generateText.doGenerate", attributes={
                "ai.operationId": "ai.generateText.doGenerate", "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
                "ai.response.text": "Paris.", "ai.usage.promptTokens": 90, "ai.usage.completionTokens": 3,
            }):
                pass

    event = TraceMapper().map(_spans(build))
    assert isinstance(event, TraceEvent)
    assert (event.query, event.answer, event.retrieval_queries) == ("What is the capital of France?", "Paris.", ["capital of France"])
    assert [(c.id, c.text, c.score) for c in event.chunks or []] == [
        ("kb-fr", "Paris is the capital of France.", 0.9), ("kb-de", "Berlin is the capital of Germany.", 0.4)]
    assert (event.model, event.usage) == ("gpt-4o-mini-2024-07-18", Usage(prompt_tokens=140, completion_tokens=11))
    assert (event.session_id, event.user_id) == ("s-ai", "u-ai")


def test_genai_looking_spans_that_cannot_be_mapped_are_unmapped_genai_not_not_rag() -> None:
    def build(tracer) -> None:  # type: ignore[no-untyped-def]
        with tracer.start_as_current_span("ai.embed", attributes={"ai.operationId": "ai.embed", "ai.model.id": "e"}):
            pass

    outcome = TraceMapper().map(_spans(build))
    assert isinstance(outcome, NotMapped) and outcome.reason == "unmapped_genai"
    assert "no LLM call ragpulse can map" in outcome.hint


@pytest.mark.parametrize(("ids", "on", "response_id"), [
    ({}, "chat answer", "chatcmpl-answer"),  # the call that answered, not the one that chose to search
    ({"answer_id": None}, "chat search", "chatcmpl-search"),  # the only call with a response id
    ({"search_id": None, "answer_id": None, "agent_id": "resp-agent"}, "invoke_agent shop", "resp-agent"),
    ({"search_id": None, "answer_id": None}, "POST /ask", None),  # no response id anywhere: the root
])
def test_the_verdicts_go_on_the_span_whose_response_id_they_carry_not_an_http_servers_root(
        ids: dict[str, str | None], on: str, response_id: str | None) -> None:
    """Under a web app's root (`POST /ask`, SERVER), the verdicts went on the root while their gen_ai.response.id
    named the chat call's completion: the GenAI conventions parent an evaluation to the operation it evaluates."""
    spans = recorded(lambda tracer_provider: http_server_trace(tracer_provider, **ids))
    event = TraceMapper().map(spans)
    assert isinstance(event, TraceEvent)
    assert (event.query, event.answer) == ("How long is the warranty?", "The warranty lasts 2 years.")
    assert event.span_id == next(s.span_id for s in spans if s.name == on)
    assert event.response_id == response_id
