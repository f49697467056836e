"""Agents whose retrieval is a tool, with the real frameworks as their docs teach them (issue 45): Pydantic AI under
its own instrumentation (versions 2 and 5), the OpenAI Agents SDK and smolagents under OpenInference. Each app runs
in its own process (tests/helpers/tool_agents.py) through the real OTLP exporter into one running `ragpulse run`,
against the fake OpenAI-compatible server answering with tool calls, or failing with a 500. Checked exactly: the
user's question, the searches, the chunks (documents with ids and scores; a retrieval tool's text), the answer, the
model, the usage; a failed run's event and error; and end to end in the sidecar's metrics and judgment records."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.crewai_venv import crewai_python
from helpers.fake_openai import AGENT_MODEL
from helpers.instrumented import Sidecar, labels, largest_trace, running_sidecar
from helpers.tool_agents import DOCS, QUESTION, SCORES, as_text, search
from helpers.waiting import wait_until

from ragpulse.collector.events import Chunk, RunError, TraceEvent, Usage
from ragpulse.sources.otlp.mapping import TraceMapper
from ragpulse.sources.otlp.spans import decode_protobuf

ANSWER = "Paris is the capital of France."


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sidecar]:
    with running_sidecar(tmp_path_factory.mktemp("tool_agents")) as running:  # for the whole module
        yield running


@pytest.fixture(autouse=True)
def agent_model(sidecar: Sidecar) -> Iterator[None]:
    sidecar.fake.agent_searches = {QUESTION: ["capital of France"]}
    yield
    sidecar.fake.agent_status = 200


def tool_results(sidecar: Sidecar, kind: str, read_as: str) -> float:
    return sidecar.metrics().get_value("ragpulse_otlp_tool_results_total", kind=kind, read_as=read_as)



def chunks_of(query: str) -> list[Chunk]:
    return [Chunk(id=d["id"], text=d["content"], score=d["score"]) for d in search(query)]


def test_a_pydantic_ai_tool_returning_documents_is_a_retrieval(sidecar: Sidecar) -> None:
    before = tool_results(sidecar, "documents", "retrieval")
    event, seen = sidecar.run("pydantic_ai", "pa-documents", INSTRUMENTATION_VERSION="5", TOOL_RESULT="documents")
    assert isinstance(event, TraceEvent)
    assert seen == {"answer": ANSWER, "found": [["kb-fr", "kb-de"]]}
    assert (event.query, event.answer, event.retrieval_queries, event.retrievals) == (
        QUESTION, ANSWER, ["capital of France"], 1)
    assert event.chunks == [Chunk(id="kb-fr", text=DOCS["kb-fr"], score=SCORES["kb-fr"]),
                            Chunk(id="kb-de", text=DOCS["kb-de"], score=SCORES["kb-de"])]
    # Two calls: 60 and 120 prompt tokens (30 a message), 9 for the search, 12 for the answer.
    assert (event.model, event.usage, event.error) == (AGENT_MODEL, Usage(prompt_tokens=180, completion_tokens=21), None)
    record = sidecar.judged("pa-documents")
    assert ([c["id"] for c in record["chunks"]], record["retrieval_queries"]) == (["kb-fr", "kb-de"], ["capital of France"])
    s = sidecar.metrics()
    assert s.get_value("ragpulse_retrieval_top_score_sum", **labels("pa-documents", AGENT_MODEL)) == SCORES["kb-fr"]
    assert tool_results(sidecar, "documents", "retrieval") == before + 1


@pytest.mark.parametrize("version", [2, 5])
def test_a_pydantic_ai_retrieval_tool_returning_text_in_either_instrumentation_version(sidecar: Sidecar,
                                                                                    version: int) -> None:
    """The RAG example's retrieve tool returns the documents as text; version 2 writes `running tool` spans with
    tool_arguments and tool_response, version 5 `execute_tool retrieve` with gen_ai.tool.call.*."""
    app = f"pa-text-v{version}"
    before = tool_results(sidecar, "text", "retrieval")
    event, seen = sidecar.run("pydantic_ai", app, INSTRUMENTATION_VERSION=str(version), TOOL_RESULT="text")
    assert isinstance(event, TraceEvent) and seen["answer"] == ANSWER
    assert (event.query, event.answer, event.retrieval_queries, event.retrievals) == (
        QUESTION, ANSWER, ["capital of France"], 1)
    assert event.chunks == [Chunk(text=as_text(search("capital of France")))]
    assert sidecar.judged(app)["chunks"][0]["text"] == as_text(search("capital of France"))
    assert tool_results(sidecar, "text", "retrieval") == before + 1


def test_a_streamed_pydantic_ai_run_that_searches_twice_keeps_both_retrievals(sidecar: Sidecar) -> None:
    sidecar.fake.agent_searches = {QUESTION: ["capital of France", "population of Paris"]}
    event, seen = sidecar.run("pydantic_ai", "pa-stream", INSTRUMENTATION_VERSION="5", TOOL_RESULT="documents",
                              STREAM="1")
    assert isinstance(event, TraceEvent)
    assert seen == {"answer": ANSWER + " ", "found": [["kb-fr", "kb-de"], ["kb-pop", "kb-fr"]]}  # streamed by word
    assert (event.query, event.answer, event.retrieval_queries, event.retrievals) == (
        QUESTION, ANSWER + " ", ["capital of France", "population of Paris"], 2)
    assert [(c.id, c.retrieval) for c in event.chunks or []] == [("kb-fr", 0), ("kb-de", 0), ("kb-pop", 1)]
    # Three calls, 60, 120 and 180 prompt tokens; 9, 9 and 12 completion tokens: the stream asked for usage.
    assert event.usage == Usage(prompt_tokens=360, completion_tokens=30)
    sidecar.judged("pa-stream")


@pytest.mark.parametrize("version", [2, 5])
def test_a_pydantic_ai_run_failing_on_a_provider_500_is_a_failed_event(sidecar: Sidecar, version: int) -> None:
    app = f"pa-failed-v{version}"
    sidecar.fake.agent_status = 500
    before = sidecar.metrics().get_value("ragpulse_otlp_traces_total", outcome="failed")
    event, seen = sidecar.run("pydantic_ai", app, INSTRUMENTATION_VERSION=str(version), TOOL_RESULT="documents")
    assert seen == {"error": "ModelHTTPError", "status": 500}
    assert isinstance(event, TraceEvent)
    assert (event.query, event.answer, event.chunks, event.model, event.usage) == (QUESTION, None, None, AGENT_MODEL, None)
    assert event.error == RunError(
        type="pydantic_ai.exceptions.ModelHTTPError", span=f"chat {AGENT_MODEL}",
        message="ModelHTTPError: status_code: 500, model_name: gpt-4.1-nano, body: {'message': 'the model is down', "
                "'type': 'server_error'}")
    wait_until(lambda: sidecar.metrics().get_value("ragpulse_traces_failed_total", **labels(app, AGENT_MODEL)) == 1,
               what="the failed run counted")
    s = sidecar.metrics()
    assert s.get_value("ragpulse_traces_total", **labels(app, AGENT_MODEL)) == 1
    assert s.get_value("ragpulse_otlp_traces_total", outcome="failed") == before + 1
    assert s.total("ragpulse_fallbacks_total", app=app) == 0
    assert sidecar.records(app) == []  # never judged


@pytest.mark.parametrize(("api", "result", "stream"), [
    ("chat", "documents", False), ("responses", "text", False), ("chat", "documents", True)])
def test_an_openai_agents_sdk_function_tool_under_openinference(sidecar: Sidecar, api: str, result: str,
                                                               stream: bool) -> None:
    """The SDK's trace has no input on its root (an AGENT span named for the workflow): the question is the first
    model call's user message. A function tool is a TOOL span whose output.value is the tool's output (documents as
    JSON, text as it is). Streamed, the Chat Completions call records a Responses API response as its output."""
    app = f"oa-{api}-{result}" + ("-stream" if stream else "")
    before = tool_results(sidecar, result, "retrieval")
    event, seen = sidecar.run("openai_agents", app, AGENTS_API=api, TOOL_RESULT=result, STREAM="1" if stream else "0")
    answer = ANSWER + " " if stream else ANSWER  # streamed by word
    assert seen == {"answer": answer, "found": [["kb-fr", "kb-de"]]}
    assert isinstance(event, TraceEvent)
    assert (event.query, event.answer, event.retrieval_queries, event.retrievals, event.model) == (
        QUESTION, answer, ["capital of France"], 1, AGENT_MODEL)
    assert event.chunks == (chunks_of("capital of France") if result == "documents"
                            else [Chunk(text=as_text(search("capital of France")))])
    # Two calls: chat 60 + 120 prompt tokens (30 a message), Responses 30 + 90 (30 an input item); 9 + 12 completion.
    # Streamed, the SDK asks for no usage: not reported.
    assert event.usage == (None if stream else Usage(prompt_tokens=180 if api == "chat" else 120, completion_tokens=21))
    sidecar.judged(app)
    assert tool_results(sidecar, result, "retrieval") == before + 1


def test_an_openai_agents_sdk_run_failing_on_a_provider_500_is_a_failed_event(sidecar: Sidecar) -> None:
    """The SDK records the error as its generation's and its agent's span status (SpanError), no exception: the
    error's type is not reported, its message is the status's."""
    sidecar.fake.agent_status = 500
    event, seen = sidecar.run("openai_agents", "oa-failed", AGENTS_API="chat", TOOL_RESULT="documents", STREAM="0")
    assert seen == {"error": "InternalServerError", "status": 500}
    assert isinstance(event, TraceEvent)
    assert (event.query, event.answer, event.model) == (QUESTION, None, AGENT_MODEL)
    assert event.error == RunError(type="not reported", span="generation", message=(
        "Error getting response: {'error': \"Error code: 500 - {'error': {'message': 'the model is down', "
        "'type': 'server_error'}}\"}"))
    wait_until(lambda: sidecar.metrics().get_value("ragpulse_traces_failed_total", **labels("oa-failed", AGENT_MODEL)) == 1,
               what="the failed run counted")
    assert sidecar.records("oa-failed") == []


@pytest.mark.parametrize("kind", ["tool_calling", "code"])
def test_a_smolagents_retriever_tool_under_openinference(sidecar: Sidecar, kind: str) -> None:
    """The RAG example's RetrieverTool, named `retriever`, returns its documents as text: a retrieval. The run's
    input is {"task": ...}: the question, not the framework's prompt ("New task:\\n..."). The final answer is a tool
    call too (final_answer), after the last model call: ignored. A code agent calls the tools from its code."""
    app = f"smol-{kind}"
    sidecar.fake.agent_searches = {f"New task:\n{QUESTION}": ["capital of France"]}
    sidecar.fake.agent_code = kind == "code"
    retrieved, ignored = tool_results(sidecar, "text", "retrieval"), tool_results(sidecar, "text", "ignored")
    try:
        event, seen = sidecar.run("smolagents", app, SMOLAGENTS=kind)
    finally:
        sidecar.fake.agent_code = False
    assert seen == {"answer": ANSWER, "found": [["kb-fr", "kb-de"]]}
    assert isinstance(event, TraceEvent)
    assert (event.query, event.answer, event.retrieval_queries, event.retrievals, event.context) == (
        QUESTION, ANSWER, ["capital of France"], 1, None)
    assert event.chunks == [Chunk(text="\nRetrieved documents:\n\n\n===== Document 0 =====\n" + DOCS["kb-fr"]
                                  + "\n\n===== Document 1 =====\n" + DOCS["kb-de"])]
    assert (event.model, event.usage) == (AGENT_MODEL, Usage(prompt_tokens=180, completion_tokens=21))
    assert sidecar.judged(app)["query"] == QUESTION
    assert (tool_results(sidecar, "text", "retrieval"), tool_results(sidecar, "text", "ignored")) == (
        retrieved + 1, ignored + 1)


LANGGRAPH_JS = Path(__file__).resolve().parent / "node_langgraph"


def run_langgraph_js(sidecar: Sidecar, service: str, *variant: str) -> None:
    """tests/node_langgraph/app.mjs asks the question once; its packages (pinned in package-lock.json) are installed
    with npm ci when one is missing."""
    wanted = json.loads((LANGGRAPH_JS / "package.json").read_text())["dependencies"]
    if not all((LANGGRAPH_JS / "node_modules" / name / "package.json").exists() for name in wanted):
        installed = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=LANGGRAPH_JS, capture_output=True,
                                   text=True, timeout=300)
        assert installed.returncode == 0, installed.stderr
    done = subprocess.run(["node", "app.mjs", f"http://127.0.0.1:{sidecar.rp.otlp_port}/v1/traces", sidecar.fake.base_url,
                           service, AGENT_MODEL, QUESTION, *variant], cwd=LANGGRAPH_JS, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"answer": ANSWER}


def test_a_langgraph_js_agent_passing_its_config_on_is_one_trace_with_its_retrieval(sidecar: Sidecar) -> None:
    """OpenInference's LangChain.js instrumentation: the tool's span holds the retriever's, whose documents carry
    no ids but its output does; the tool's own output (the serialised ToolMessage) is read through the retriever."""
    run_langgraph_js(sidecar, "lgjs-config")
    record = sidecar.judged("lgjs-config")
    assert (record["query"], record["answer"], record["retrieval_queries"]) == (QUESTION, ANSWER, ["capital of France"])
    assert [(c["id"], c["text"]) for c in record["chunks"]] == [("kb-fr", DOCS["kb-fr"]), ("kb-de", DOCS["kb-de"])]
    assert sidecar.metrics().get_value("ragpulse_tokens_total", **labels("lgjs-config", AGENT_MODEL), kind="prompt") == 120


def test_a_langgraph_js_retriever_called_without_its_config_is_a_detached_retrieval(sidecar: Sidecar) -> None:
    """retriever.invoke(query) in the tool, without the tool's config: the retriever's span begins a trace of its own
    (detached_retrieval, logged with the cause and the scope); the turn's trace reads the tool's text as its retrieval."""
    before = sidecar.metrics().get_value("ragpulse_otlp_traces_total", outcome="detached_retrieval")
    run_langgraph_js(sidecar, "lgjs-detached", "detached")
    record = sidecar.judged("lgjs-detached")
    assert (record["query"], record["retrieval_queries"]) == (QUESTION, ["capital of France"])
    assert [c["text"] for c in record["chunks"]] == [DOCS["kb-fr"] + "\n" + DOCS["kb-de"]]
    wait_until(lambda: sidecar.metrics().get_value("ragpulse_otlp_traces_total", outcome="detached_retrieval")
               == before + 1, what="the detached retrieval counted")
    logged = [json.loads(line) for line in sidecar.rp.log_path.read_text().splitlines() if "detached_retrieval" in line]
    assert [(e["service"], e["why"].rsplit("scope: ", 1)[1]) for e in logged] == [
        ("lgjs-detached", "@arizeai/openinference-instrumentation-langchain")]


def test_a_crewai_crew_with_a_search_tool_under_openinference(sidecar: Sidecar) -> None:
    """CrewAI under OpenInference as its README sets it up (CrewAIInstrumentor alone): the kickoff's CHAIN span holds
    the inputs ({"question": ...}) and the crew's output ({"raw": ...}), the tool a TOOL span; CrewAI calls its model
    itself, with no span of it: model and usage not reported. Its own virtualenv (helpers/crewai_venv.py)."""
    sidecar.fake.agent_searches = {"*": ["capital of France"]}  # CrewAI's prompt wraps the question
    spans_file = sidecar.tmp / "crewai.pb"
    done = subprocess.run(
        [str(crewai_python()), "app.py", "crewai", f"http://127.0.0.1:{sidecar.rp.otlp_port}/v1/traces",
         sidecar.fake.base_url, AGENT_MODEL, QUESTION, str(spans_file)],
        cwd=Path(__file__).resolve().parent / "crewai", capture_output=True, text=True, timeout=300,
        env={"PATH": os.environ["PATH"], "HOME": str(sidecar.tmp), "CREWAI_DISABLE_TELEMETRY": "true"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"answer": ANSWER}
    event = TraceMapper().map(largest_trace(decode_protobuf(spans_file.read_bytes()).spans))
    assert isinstance(event, TraceEvent)
    assert (event.query, event.answer, event.retrieval_queries, event.retrievals) == (
        QUESTION, ANSWER, ["capital of France"], 1)
    assert event.chunks == [Chunk(text=DOCS["kb-fr"] + "\n" + DOCS["kb-de"])]
    assert (event.model, event.usage) == (None, None)
    record = sidecar.judged("crewai")
    assert (record["query"], record["answer"]) == (QUESTION, ANSWER)
