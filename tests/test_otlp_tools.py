"""Tool results as context, failed runs, embedding-only and detached traces: spans shaped as the instrumentors write
them (the source each shape was read from is named), recorded through the real OpenTelemetry SDK and decoded as the
receiver decodes them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from helpers.clocks import Clock
from helpers.otlp_shapes import Collect, provider
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode, Tracer
from prometheus_client import CollectorRegistry, Counter

from ragpulse.collector.events import Chunk, RunError, TraceEvent, Usage
from ragpulse.sources.otlp.assembler import TraceAssembler
from ragpulse.sources.otlp.mapping import NotMapped, TraceMapper
from ragpulse.sources.otlp.spans import Span, decode_protobuf

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

QUESTION = "What is the capital of France?"
DOCUMENTS = [{"id": "kb-fr", "content": "Paris is the capital of France.", "score": 0.707},
             {"id": "kb-de", "content": "Berlin is the capital of Germany.", "score": 0.312}]
PARIS = "Paris is the capital of France."
Build = Callable[[Callable[[str], Tracer]], None]


def spans_of(build: Build) -> list[Span]:
    """`build` gets a tracer per instrumentation scope; the spans as the receiver decodes them (the mapping's keys)."""
    collect = Collect()
    tracer_provider = provider(SimpleSpanProcessor(collect))
    build(tracer_provider.get_tracer)
    decoded = decode_protobuf(encode_spans(collect.spans).SerializeToString())
    assert decoded.rejected == 0
    return decoded.spans


def oi_llm(tracer: Tracer, user: str, *, answer: str | None = None, tool_call: str | None = None,
           model: str = "gpt-4o-mini", **extra: Any) -> None:
    """An OpenInference LLM span as openinference-instrumentation-openai-agents writes a chat completion
    (_get_attributes_from_generation_span_data): the request's model, messages flattened, usage."""
    attributes: dict[str, Any] = {
        "openinference.span.kind": "LLM", "llm.model_name": model, "llm.system": "openai",
        "llm.input_messages.0.message.role": "system", "llm.input_messages.0.message.content": "Answer from the docs.",
        "llm.input_messages.1.message.role": "user", "llm.input_messages.1.message.content": user,
        "llm.output_messages.0.message.role": "assistant", "llm.token_count.prompt": 40, "llm.token_count.completion": 9,
        **extra,
    }
    if answer is not None:
        attributes["llm.output_messages.0.message.content"] = answer
    if tool_call is not None:
        attributes["llm.output_messages.0.message.tool_calls.0.tool_call.function.name"] = tool_call
    with tracer.start_as_current_span("generation", attributes=attributes):
        pass


def agents_sdk_run(tool_output: Any, *, tool: str = "search_docs", description: str = "Search the knowledge base.",
                   model_output: str | None = None, handoff: bool = False) -> Build:
    """The OpenAI Agents SDK under OpenInference (_processor.py): the trace's root AGENT span with no input, the
    agent's AGENT span, a generation choosing the tool, the function tool's TOOL span (tool.name, tool.description,
    input.value the arguments' JSON, output.value the output, JSON when not a string), the answering generation; a
    handoff is a TOOL span with no tool.name, from the agent's name to the other's."""
    def build(tracers: Callable[[str], Tracer]) -> None:
        tracer = tracers("openinference.instrumentation.openai_agents")
        with tracer.start_as_current_span("Agent workflow", attributes={"openinference.span.kind": "AGENT"}):
            if handoff:
                with tracer.start_as_current_span("handoff to Assistant", attributes={
                        "openinference.span.kind": "TOOL", "input.value": "Triage", "output.value": "Assistant"}):
                    pass
            with tracer.start_as_current_span("Assistant", attributes={
                    "openinference.span.kind": "AGENT", "graph.node.id": "Assistant", "agent.name": "Assistant"}):
                oi_llm(tracer, QUESTION, tool_call=tool)
                with tracer.start_as_current_span(tool, attributes={
                    "openinference.span.kind": "TOOL", "tool.name": tool, "tool.description": description,
                    "input.value": json.dumps({"query": "capital of France"}), "input.mime_type": "application/json",
                    "output.value": tool_output if isinstance(tool_output, str) else json.dumps(tool_output),
                }):
                    pass
                extra = {"output.value": model_output} if model_output else {}
                oi_llm(tracer, QUESTION, answer=PARIS, **extra)
    return build


def test_an_openinference_tool_returning_documents_is_a_retrieval_with_ids_texts_scores_and_its_query() -> None:
    mapper = TraceMapper()
    event = mapper.map(spans_of(agents_sdk_run(DOCUMENTS)))
    assert isinstance(event, TraceEvent)
    assert (event.query, event.answer, event.retrieval_queries, event.retrievals) == (
        QUESTION, PARIS, ["capital of France"], 1)
    assert event.chunks == [Chunk(id="kb-fr", text="Paris is the capital of France.", score=0.707),
                            Chunk(id="kb-de", text="Berlin is the capital of Germany.", score=0.312)]
    assert (event.context, event.error, event.model) == (None, None, "gpt-4o-mini")
    assert event.usage == Usage(prompt_tokens=80, completion_tokens=18)
    assert mapper.tool_results == {("documents", "retrieval"): 1}


@pytest.mark.parametrize(("tool", "description", "read_as"), [
    ("search_docs", "", "retrieval"),  # the name says it
    ("searchDocs", "", "retrieval"),  # spelled out: "search docs"
    ("kb", "Looks up the knowledge base.", "retrieval"),  # the description says it
    ("get_weather", "The weather in a city.", "context"),  # neither: context, no retrieval
    ("storage_stats", "", "context"),  # "rag" is no whole word of "storage"
])
def test_a_text_result_is_a_retrieval_when_the_tool_retrieves_else_context(tool: str, description: str,
                                                                         read_as: str) -> None:
    text = "Paris is the capital and largest city of France."
    mapper = TraceMapper()
    event = mapper.map(spans_of(agents_sdk_run(text, tool=tool, description=description)))
    assert isinstance(event, TraceEvent)
    assert (event.query, event.answer) == (QUESTION, PARIS)
    if read_as == "retrieval":
        assert (event.chunks, event.retrievals, event.retrieval_queries, event.context) == (
            [Chunk(text=text)], 1, ["capital of France"], None)
    else:  # judged against, never counted as retrieval: no chunks, retrieval not reported
        assert (event.chunks, event.retrievals, event.retrieval_queries, event.context) == (
            None, None, None, [Chunk(text=text, source=tool)])
    assert mapper.tool_results == {("text", read_as): 1}


def test_an_agents_sdk_handoff_is_no_tool_result() -> None:
    """A handoff is a TOOL span without tool.name, its input and output the two agents' names."""
    mapper = TraceMapper()
    event = mapper.map(spans_of(agents_sdk_run(DOCUMENTS, handoff=True)))
    assert isinstance(event, TraceEvent) and event.context is None
    assert mapper.tool_results == {("documents", "retrieval"): 1}


def test_otlp_retrieval_tools_names_the_tools_whose_text_is_a_retrieval() -> None:
    mapper = TraceMapper(retrieval_tools=["^get_weather$"])
    event = mapper.map(spans_of(agents_sdk_run("Sunny, 21 C.", tool="get_weather", description="Weather.")))
    assert isinstance(event, TraceEvent) and event.chunks == [Chunk(text="Sunny, 21 C.")] and event.context is None
    assert TraceMapper(retrieval_tools=["^get_weather$"]).map(spans_of(agents_sdk_run("x", tool="search"))).context == [
        Chunk(text="x", source="search")]  # the list replaces the default: search is no retrieval tool now


def test_the_response_model_in_an_llm_spans_json_output_wins_over_the_request_alias() -> None:
    """The Agents SDK's streamed chat completion records the response (its model) as output.value, and the
    request's alias as llm.model_name."""
    output = json.dumps([{"id": "resp-1", "model": "gpt-4o-mini-2024-07-18", "object": "response", "output": []}])
    event = TraceMapper().map(spans_of(agents_sdk_run(DOCUMENTS, model_output=output)))
    assert isinstance(event, TraceEvent) and event.model == "gpt-4o-mini-2024-07-18"


def test_a_responses_api_response_as_an_llm_spans_output_gives_the_answer() -> None:
    """The Agents SDK's streamed Chat Completions call records a Responses API response as the generation's output,
    and no output messages: the answer is its output's message text."""
    response = [{"id": "__fake_id__", "object": "response", "model": "gpt-4o-mini", "text": None, "output": [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": PARIS, "annotations": []}]}]}]

    def build(tracers: Callable[[str], Tracer]) -> None:
        tracer = tracers("openinference.instrumentation.openai_agents")
        with tracer.start_as_current_span("Agent workflow", attributes={"openinference.span.kind": "AGENT"}):
            with tracer.start_as_current_span("generation", attributes={
                "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
                "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": QUESTION,
                "output.value": json.dumps(response),
            }):
                pass

    event = TraceMapper().map(spans_of(build))
    assert isinstance(event, TraceEvent) and (event.query, event.answer) == (QUESTION, PARIS)


def pydantic_ai_run(version: int, result: Any) -> Build:
    """Pydantic AI's own instrumentation (capabilities/instrumentation.py, _instrumentation.py): the run span
    (`invoke_agent agent`, version 2 `agent run`), chat spans with gen_ai.input/output.messages, and the tool's span:
    `execute_tool retrieve` with gen_ai.tool.call.arguments/result, version 2 `running tool` with tool_arguments/
    tool_response; both with gen_ai.operation.name execute_tool and gen_ai.tool.name."""
    arguments_key, result_key = ("tool_arguments", "tool_response") if version == 2 else (
        "gen_ai.tool.call.arguments", "gen_ai.tool.call.result")

    def chat(tracer: Tracer, output: list[dict[str, Any]]) -> None:
        with tracer.start_as_current_span("chat gpt-4o-mini", attributes={
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.response.model": "gpt-4o-mini-2024-07-18", "gen_ai.usage.input_tokens": 60,
            "gen_ai.usage.output_tokens": 7,
            "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]),
            "gen_ai.output.messages": json.dumps(output),
        }):
            pass

    def build(tracers: Callable[[str], Tracer]) -> None:
        tracer = tracers("pydantic-ai")
        with tracer.start_as_current_span("agent run" if version == 2 else "invoke_agent agent", attributes={
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "agent", "agent_name": "agent"}):
            chat(tracer, [{"role": "assistant", "parts": [
                {"type": "tool_call", "id": "c1", "name": "retrieve", "arguments": {"search_query": "capital"}}]}])
            with tracer.start_as_current_span("running tool" if version == 2 else "execute_tool retrieve", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "retrieve", "gen_ai.tool.call.id": "c1",
                arguments_key: json.dumps({"search_query": "capital of France"}),
                result_key: result if isinstance(result, str) else json.dumps(result),
            }):
                pass
            chat(tracer, [{"role": "assistant", "parts": [{"type": "text", "content": PARIS}]}])
    return build


@pytest.mark.parametrize("version", [2, 5])
def test_pydantic_ais_tool_spans_of_either_instrumentation_version_are_read(version: int) -> None:
    text = "# France\nParis is the capital of France."  # the RAG example's retrieve returns text
    mapper = TraceMapper()
    event = mapper.map(spans_of(pydantic_ai_run(version, text)))
    assert isinstance(event, TraceEvent)
    assert (event.query, event.answer, event.model) == (QUESTION, PARIS, "gpt-4o-mini-2024-07-18")
    assert (event.chunks, event.retrieval_queries, event.retrievals) == ([Chunk(text=text)], ["capital of France"], 1)
    assert mapper.tool_results == {("text", "retrieval"): 1}
    documents = TraceMapper().map(spans_of(pydantic_ai_run(version, DOCUMENTS)))
    assert isinstance(documents, TraceEvent) and [c.id for c in documents.chunks or []] == ["kb-fr", "kb-de"]


def smolagents_run(final_answer_tool: bool = True) -> Build:
    """smolagents under OpenInference (_wrappers.py): the run's AGENT span with input.value the bound arguments
    ({"task": ...}) and output.value the answer; model spans whose user message is the framework's prompt; each tool
    call a TOOL span named by the tool's class, input.value its bound arguments ({"args": [...], "kwargs": {...}}),
    output.value the text it returned; the final answer is a tool call too, after the last model call."""
    retrieved = "\nRetrieved documents:\n\n\n===== Document 0 =====\nParis is the capital of France."

    def build(tracers: Callable[[str], Tracer]) -> None:
        tracer = tracers("openinference.instrumentation.smolagents")
        with tracer.start_as_current_span("ToolCallingAgent.run", attributes={
            "openinference.span.kind": "AGENT", "smolagents.task": QUESTION, "output.value": "Paris",
            "input.value": json.dumps({"task": QUESTION, "stream": False, "reset": True, "images": None,
                                       "additional_args": None, "max_steps": None}),
        }):
            with tracer.start_as_current_span("Step 1", attributes={"openinference.span.kind": "CHAIN"}):
                oi_llm(tracer, f"New task:\n{QUESTION}", tool_call="retriever")
                with tracer.start_as_current_span("RetrieverTool", attributes={
                    "openinference.span.kind": "TOOL", "tool.name": "retriever",
                    "tool.description": "Uses semantic search to retrieve the parts of the documentation.",
                    "input.value": json.dumps({"args": [{"query": "capital of France"}], "sanitize_inputs_outputs": True,
                                               "kwargs": {}}),
                    "output.value": retrieved, "output.mime_type": "text/plain",
                }):
                    pass
            with tracer.start_as_current_span("Step 2", attributes={"openinference.span.kind": "CHAIN"}):
                oi_llm(tracer, f"New task:\n{QUESTION}", tool_call="final_answer")
                if final_answer_tool:
                    with tracer.start_as_current_span("FinalAnswerTool", attributes={
                        "openinference.span.kind": "TOOL", "tool.name": "final_answer",
                        "tool.description": "Provides a final answer to the given problem.",
                        "input.value": json.dumps({"args": [{"answer": "Paris"}], "sanitize_inputs_outputs": True,
                                                   "kwargs": {}}),
                        "output.value": "Paris",
                    }):
                        pass
    return build


def test_smolagents_task_is_the_question_and_its_final_answer_tool_is_not_context() -> None:
    mapper = TraceMapper()
    event = mapper.map(spans_of(smolagents_run()))
    assert isinstance(event, TraceEvent)
    assert (event.query, event.answer, event.retrieval_queries) == (QUESTION, "Paris", ["capital of France"])
    assert event.chunks == [Chunk(text="\nRetrieved documents:\n\n\n===== Document 0 =====\nParis is the capital of France.")]
    assert event.context is None  # final_answer ran after the last model call: the model never read it
    assert mapper.tool_results == {("text", "retrieval"): 1, ("text", "ignored"): 1}


def test_a_retriever_tool_is_read_through_its_retriever_span_not_twice() -> None:
    """LangChain's retriever tool: a TOOL span (its output the documents joined as text) over the RETRIEVER span
    that holds them."""
    def build(tracers: Callable[[str], Tracer]) -> None:
        tracer = tracers("openinference.instrumentation.langchain")
        with tracer.start_as_current_span("LangGraph", attributes={
                "openinference.span.kind": "CHAIN", "input.value": json.dumps({"messages": [["user", QUESTION]]})}):
            oi_llm(tracer, QUESTION, tool_call="search_docs")
            with tracer.start_as_current_span("search_docs", attributes={
                    "openinference.span.kind": "TOOL", "tool.name": "search_docs", "input.value": "capital of France",
                    "output.value": "Paris is the capital of France.\n\nBerlin is the capital of Germany."}):
                with tracer.start_as_current_span("VectorStoreRetriever", attributes={
                    "openinference.span.kind": "RETRIEVER", "input.value": "capital of France",
                    **{f"retrieval.documents.{i}.document.{k}": d[k] for i, d in enumerate(DOCUMENTS)
                       for k in ("id", "content", "score")},
                }):
                    pass
            oi_llm(tracer, QUESTION, answer=PARIS)

    mapper = TraceMapper()
    event = mapper.map(spans_of(build))
    assert isinstance(event, TraceEvent)
    assert ([c.id for c in event.chunks or []], event.retrievals, event.context) == (["kb-fr", "kb-de"], 1, None)
    assert mapper.tool_results == {}


def test_a_langchain_js_tool_message_is_read_for_its_content() -> None:
    """OpenInference's LangChain.js writes a tool's output as the serialised ToolMessage under `output`."""
    message = {"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "ToolMessage"],
               "kwargs": {"status": "success", "content": PARIS, "tool_call_id": "call_0", "name": "search_docs"}}

    def build(tracers: Callable[[str], Tracer]) -> None:
        tracer = tracers("@arizeai/openinference-instrumentation-langchain")
        with tracer.start_as_current_span("LangGraph", attributes={
                "openinference.span.kind": "CHAIN", "input.value": json.dumps({"messages": [{"role": "user", "content": QUESTION}]})}):
            oi_llm(tracer, QUESTION, tool_call="search_docs")
            with tracer.start_as_current_span("search_docs", attributes={
                    "openinference.span.kind": "TOOL", "tool.name": "search_docs", "input.value": "capital of France",
                    "output.value": json.dumps({"output": message})}):
                pass
            oi_llm(tracer, QUESTION, answer=PARIS)

    event = TraceMapper().map(spans_of(build))
    assert isinstance(event, TraceEvent)
    assert (event.query, event.chunks, event.retrieval_queries) == (QUESTION, [Chunk(text=PARIS)], ["capital of France"])


def failed_agents_sdk_run(with_question: bool = True) -> Build:
    """A provider's HTTP 500 under the Agents SDK and OpenInference: the generation fails (no output), the agent
    span's status is ERROR with the SDK's SpanError ("Error in agent run: ..."), the workflow root ends OK."""
    def build(tracers: Callable[[str], Tracer]) -> None:
        tracer = tracers("openinference.instrumentation.openai_agents")
        with tracer.start_as_current_span("Agent workflow", attributes={"openinference.span.kind": "AGENT"}):
            with tracer.start_as_current_span("Assistant", attributes={"openinference.span.kind": "AGENT"}) as agent:
                attributes = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini"}
                if with_question:
                    attributes |= {"llm.input_messages.0.message.role": "user",
                                   "llm.input_messages.0.message.content": QUESTION}
                with tracer.start_as_current_span("generation", attributes=attributes):
                    pass
                agent.set_status(Status(StatusCode.ERROR, "Error in agent run: {'error': 'Error code: 500'}"))
    return build


def test_a_failed_run_is_an_event_with_the_question_no_answer_and_what_failed() -> None:
    event = TraceMapper().map(spans_of(failed_agents_sdk_run()))
    assert isinstance(event, TraceEvent)
    assert (event.query, event.answer, event.chunks, event.model) == (QUESTION, None, None, "gpt-4o-mini")
    assert event.error == RunError(type="not reported", span="Assistant",
                                   message="Error in agent run: {'error': 'Error code: 500'}")
    assert TraceMapper().map(spans_of(failed_agents_sdk_run(with_question=False))) == NotMapped(
        "failed", "not reported in 'Assistant', and no question recorded")


def test_the_failing_span_is_the_innermost_and_its_exception_names_the_type() -> None:
    """Pydantic AI on a provider's 500: the chat span records the exception (its type in the `exception` event) and
    is ERROR; the run span fails after it."""
    def build(tracers: Callable[[str], Tracer]) -> None:
        tracer = tracers("pydantic-ai")
        with pytest.raises(RuntimeError), tracer.start_as_current_span("invoke_agent agent", attributes={
                "gen_ai.operation.name": "invoke_agent"}):
            with tracer.start_as_current_span("chat gpt-4o-mini", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]),
            }):
                raise RuntimeError("status_code: 500, model_name: gpt-4o-mini, body: boom")

    event = TraceMapper().map(spans_of(build))
    assert isinstance(event, TraceEvent) and (event.query, event.answer) == (QUESTION, None)
    assert event.error == RunError(type="RuntimeError", span="chat gpt-4o-mini",
                                   message="RuntimeError: status_code: 500, model_name: gpt-4o-mini, body: boom")


def test_an_answered_run_with_a_failed_tool_call_inside_did_not_fail() -> None:
    def build(tracers: Callable[[str], Tracer]) -> None:
        tracer = tracers("openinference.instrumentation.openai_agents")
        with tracer.start_as_current_span("Agent workflow", attributes={"openinference.span.kind": "AGENT"}):
            with tracer.start_as_current_span("search_docs", attributes={
                    "openinference.span.kind": "TOOL", "tool.name": "search_docs"}) as tool:
                tool.set_status(Status(StatusCode.ERROR, "timeout"))
            oi_llm(tracer, QUESTION, answer=PARIS)

    event = TraceMapper().map(spans_of(build))
    assert isinstance(event, TraceEvent) and (event.answer, event.error) == (PARIS, None)


def test_a_retrieval_alone_in_its_trace_is_detached_and_the_hint_names_the_scope() -> None:
    """LangGraph.js calling retriever.invoke(query) in a tool without the tool's config: the retriever's spans
    begin a trace of their own, with no model call."""
    def build(tracers: Callable[[str], Tracer]) -> None:
        tracer = tracers("@arizeai/openinference-instrumentation-langchain")
        with tracer.start_as_current_span("VectorStoreRetriever", attributes={
            "openinference.span.kind": "RETRIEVER", "input.value": "capital of France",
            **{f"retrieval.documents.{i}.document.{k}": d[k] for i, d in enumerate(DOCUMENTS) for k in ("id", "content")},
        }):
            pass

    outcome = TraceMapper().map(spans_of(build))
    assert outcome == NotMapped("detached_retrieval", (
        "a retrieval with no model call in its trace: the retriever ran outside its turn's trace context, so its spans "
        "began a trace of their own (LangChain.js: pass the tool's config on, retriever.invoke(query, config)); "
        "scope: @arizeai/openinference-instrumentation-langchain"))


def test_the_content_hint_covers_openinference_js_scopes() -> None:
    def build(tracers: Callable[[str], Tracer]) -> None:
        tracer = tracers("@arizeai/openinference-instrumentation-langchain")
        with tracer.start_as_current_span("RunnableSequence", attributes={"openinference.span.kind": "CHAIN"}):
            with tracer.start_as_current_span("ChatOpenAI", attributes={"openinference.span.kind": "LLM"}):
                pass

    outcome = TraceMapper().map(spans_of(build))
    assert isinstance(outcome, NotMapped) and outcome.reason == "content_not_captured"
    assert outcome.hint.startswith("unset OPENINFERENCE_HIDE_INPUTS")


def test_the_decoder_carries_a_spans_status() -> None:
    def build(tracers: Callable[[str], Tracer]) -> None:
        tracer = tracers("s")
        for name, status in (("failed", Status(StatusCode.ERROR, "boom")), ("ok", Status(StatusCode.OK)), ("unset", None)):
            with tracer.start_as_current_span(name) as span:
                if status is not None:
                    span.set_status(status)

    assert [(s.name, s.status_code, s.status_message) for s in spans_of(build)] == [
        ("failed", 2, "boom"), ("ok", 1, ""), ("unset", 0, "")]


def test_the_assembler_counts_failed_runs_and_detached_retrievals_and_logs_each_once(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A failed run's event goes on, counted `failed`; a detached retrieval makes none, and says why once."""
    registry, clock = CollectorRegistry(), Clock(100.0)
    assembler = TraceAssembler(
        TraceMapper(), grace_seconds=1.0, max_wait_seconds=6.0, ttl_seconds=10.0, max_traces=10, max_bytes=1 << 30,
        max_spans_per_trace=100, outcomes=Counter("outcomes_total", "t", ["outcome"], registry=registry),
        dropped_spans=Counter("dropped_total", "t", ["reason"], registry=registry),
        late_spans=Counter("late_total", "t", ["kind"], registry=registry), clock=clock)

    def detached(tracers: Callable[[str], Tracer]) -> None:
        with tracers("@arizeai/openinference-instrumentation-langchain").start_as_current_span("retriever", attributes={
                "openinference.span.kind": "RETRIEVER", "retrieval.documents.0.document.content": PARIS}):
            pass

    for build in (failed_agents_sdk_run(), detached, detached):
        assembler.add(spans_of(build))
    clock.now += 1.0
    [(event, _)] = assembler.due()
    assert event.error is not None and event.answer is None
    assert [registry.get_sample_value("outcomes_total", {"outcome": o}) for o in ("failed", "detached_retrieval")] == [1, 2]
    logged = capsys.readouterr().out
    assert logged.count("traces that make no event") == 1
    assert logged.count("runs failed: counted, never judged") == 1 and "not reported in 'Assistant'" in logged
