"""Agentic RAG over OTLP, with the real frameworks (issue: agentic traces): a LangGraph ReAct agent with a
retriever tool (OpenInference's LangChain instrumentor), the same agent searching twice in one turn, and a
LlamaIndex FunctionAgent with a QueryEngineTool (OpenInference's LlamaIndex instrumentor), each in its own
process through the real OTLP exporter into one running sidecar, and a Node.js agent on the Vercel AI SDK with its
OpenTelemetry integration, against the fake OpenAI-compatible server answering with tool calls (plain for LangChain
and the AI SDK, streamed for LlamaIndex). Checked exactly: the user's question
(not the agent's search), every search, the chunks of each retrieval with their ids, the answer, the model,
the usage (whole, or partial with the calls that reported none), session and user; and end to end in the
sidecar's metrics and judgment records."""

from __future__ import annotations

import gzip
import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from helpers.fake_openai import AGENT_MODEL
from helpers.instrumented import Sidecar, labels, running_sidecar
from helpers.instrumented_apps import AGENT_DOCS, AGENT_QUESTION
from helpers.net import http

from ragpulse._native import decode_otlp_json
from ragpulse.collector.events import TraceEvent, Usage
from ragpulse.sources.otlp.spans import MAPPED_KEYS, Span, SpanEvent, decode_json_generally


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sidecar]:
    with running_sidecar(tmp_path_factory.mktemp("agents")) as running:  # for the whole module
        yield running



def test_a_langgraph_agent_is_read_as_the_users_question_and_its_search(sidecar: Sidecar) -> None:
    sidecar.fake.agent_searches = {AGENT_QUESTION: ["capital of France"]}
    event, seen = sidecar.run("langgraph_agent", "lg-agent")
    assert isinstance(event, TraceEvent)
    assert seen["found"] == [["kb-de", "kb-fr"]]
    # The question is the user's, from the graph's input messages; the tool's search string is a search.
    assert (event.query, event.retrieval_queries, event.answer) == (
        AGENT_QUESTION, ["capital of France"], "Paris is the capital of France.")
    # The retriever span's documents carry no ids; its output does (matched by position and text).
    assert [(c.id, c.text, c.retrieval) for c in event.chunks or []] == [
        ("kb-de", AGENT_DOCS["kb-de"], None), ("kb-fr", AGENT_DOCS["kb-fr"], None)]
    assert event.retrievals == 1
    # Two model calls, both with usage: 30 and 90 prompt tokens (30 a message), 9 for the tool call, 12 for the answer.
    assert (event.model, event.usage) == (AGENT_MODEL, Usage(prompt_tokens=120, completion_tokens=21))
    assert (event.session_id, event.user_id) == ("agent-session", "agent-user")
    record = sidecar.judged("lg-agent")
    assert (record["query"], record["retrieval_queries"]) == (AGENT_QUESTION, ["capital of France"])
    s = sidecar.metrics()
    assert s.get_value("ragpulse_tokens_total", **labels("lg-agent", AGENT_MODEL), kind="prompt") == 120
    assert s.get_value("ragpulse_usage_partial_total", **labels("lg-agent", AGENT_MODEL), reason="calls_without_usage") == 0
    assert s.get_value("ragpulse_retrievals_sum", **labels("lg-agent", AGENT_MODEL)) == 1


def test_an_agent_that_searches_twice_keeps_every_retrieval(sidecar: Sidecar) -> None:
    sidecar.fake.agent_searches = {AGENT_QUESTION: ["capital of France", "population of Paris"]}
    event, seen = sidecar.run("langgraph_agent", "lg-twice")
    assert isinstance(event, TraceEvent)
    assert seen["found"] == [["kb-de", "kb-fr"], ["kb-pop", "kb-fr"]]
    assert (event.query, event.retrieval_queries) == (AGENT_QUESTION, ["capital of France", "population of Paris"])
    # The union the answer could use, each chunk from the first retrieval that returned it.
    assert [(c.id, c.retrieval) for c in event.chunks or []] == [("kb-de", 0), ("kb-fr", 0), ("kb-pop", 1)]
    assert event.retrievals == 2
    assert event.usage == Usage(prompt_tokens=30 + 90 + 150, completion_tokens=9 + 9 + 12)
    sidecar.judged("lg-twice")
    s = sidecar.metrics()
    assert s.get_value("ragpulse_retrievals_bucket", **labels("lg-twice", AGENT_MODEL), le="1.0") == 0
    assert s.get_value("ragpulse_retrievals_bucket", **labels("lg-twice", AGENT_MODEL), le="2.0") == 1
    assert s.get_value("ragpulse_retrieval_chunks_sum", **labels("lg-twice", AGENT_MODEL)) == 3
    # Per search: the first found two chunks, the second one new one (kb-fr it had found again).
    assert s.get_value("ragpulse_search_new_chunks_count", **labels("lg-twice", AGENT_MODEL)) == 2
    assert s.get_value("ragpulse_search_new_chunks_sum", **labels("lg-twice", AGENT_MODEL)) == 3
    assert s.get_value("ragpulse_search_new_chunks_bucket", **labels("lg-twice", AGENT_MODEL), le="1.0") == 1


def test_a_llamaindex_function_agent_with_partial_usage_says_so(sidecar: Sidecar) -> None:
    """The agent's two streamed calls report usage (asked for); the query engine's LLM inside the tool reports
    none: the usage is partial, 1 call unreported, and counted as such, never shown as the whole."""
    sidecar.fake.agent_searches = {AGENT_QUESTION: ["capital of France"]}
    event, seen = sidecar.run("llamaindex_agent", "li-agent")
    assert isinstance(event, TraceEvent)
    assert (event.query, event.retrieval_queries) == (AGENT_QUESTION, ["capital of France"])
    assert event.answer == seen["answer"] == "Paris is the capital of France. "
    assert [c.id for c in event.chunks or []] == ["kb-fr", "kb-de"]
    assert [c.text for c in event.chunks or []] == [AGENT_DOCS["kb-fr"], AGENT_DOCS["kb-de"]]
    assert event.usage == Usage(prompt_tokens=60 + 120, completion_tokens=9 + 12, unreported_calls=1)
    assert event.session_id == "llamaindex-agent-session"
    sidecar.judged("li-agent")
    s = sidecar.metrics()
    assert s.get_value("ragpulse_usage_partial_total", **labels("li-agent", AGENT_MODEL), reason="calls_without_usage") == 1
    assert s.get_value("ragpulse_tokens_total", **labels("li-agent", AGENT_MODEL), kind="completion") == 21


NODE_APP = Path(__file__).resolve().parent / "node_aisdk"


def run_node_app(sidecar: Sidecar, service: str, *variant: str, endpoint: str | None = None) -> None:
    """tests/node_aisdk/app.mjs asks the agent question once; its packages (pinned in package-lock.json) are
    installed with npm ci when one is missing. It exports to the sidecar unless `endpoint` says otherwise."""
    wanted = json.loads((NODE_APP / "package.json").read_text())["dependencies"]
    if not all((NODE_APP / "node_modules" / name / "package.json").exists() for name in wanted):
        installed = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_APP, capture_output=True,
                                   text=True, timeout=300)
        assert installed.returncode == 0, installed.stderr
    sidecar.fake.agent_searches = {AGENT_QUESTION: ["capital of France"]}
    done = subprocess.run(
        ["node", "app.mjs", endpoint or f"http://127.0.0.1:{sidecar.rp.otlp_port}/v1/traces", sidecar.fake.base_url, service,
         AGENT_MODEL, AGENT_QUESTION, *variant], cwd=NODE_APP, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"answer": "Paris is the capital of France."}


def assert_the_agents_record(record: dict, session: str) -> None:  # type: ignore[type-arg]
    """The AI SDK agent's judged record, whichever exporter and span processor carried it."""
    assert (record["query"], record["retrieval_queries"], record["answer"]) == (
        AGENT_QUESTION, ["capital of France"], "Paris is the capital of France.")
    assert [(c["id"], c["text"]) for c in record["chunks"]] == [
        ("kb-fr", "Paris is the capital and largest city of France."), ("kb-de", "Berlin is the capital of Germany.")]
    assert (record["model"], record["session_id"]) == (AGENT_MODEL, session)


def test_a_vercel_ai_sdk_agent_in_node_through_its_opentelemetry_integration(sidecar: Sidecar) -> None:
    """The AI SDK 7 with @ai-sdk/otel (pinned in tests/node_aisdk/package-lock.json, installed with npm ci): its
    invoke_agent, chat and execute_tool spans (GenAI conventions) under the app's own turn span, exported by the
    OTLP/HTTP protobuf exporter of the OpenTelemetry JS SDK. The tool's result is documents: a retrieval."""
    run_node_app(sidecar, "aisdk-agent")
    record = sidecar.judged("aisdk-agent")
    assert_the_agents_record(record, "aisdk-session")
    s = sidecar.metrics()
    assert s.get_value("ragpulse_tokens_total", **labels("aisdk-agent", AGENT_MODEL), kind="prompt") == 30 + 90
    assert s.get_value("ragpulse_tokens_total", **labels("aisdk-agent", AGENT_MODEL), kind="completion") == 9 + 12
    assert s.get_value("ragpulse_retrieval_top_score_sum", **labels("aisdk-agent", AGENT_MODEL)) == 0.91


def test_a_vercel_ai_sdk_agent_through_openinference_vercel(sidecar: Sidecar) -> None:
    """The same agent with @arizeai/openinference-vercel's span processor, as its README sets it up: OpenInference
    spans beside the GenAI ones, the session from the AI SDK's runtime context as metadata.sessionId."""
    run_node_app(sidecar, "aisdk-oi", "openinference")
    record = sidecar.judged("aisdk-oi")
    assert_the_agents_record(record, "oi-session")  # records keep no user id
    s = sidecar.metrics()
    assert s.get_value("ragpulse_tokens_total", **labels("aisdk-oi", AGENT_MODEL), kind="prompt") == 30 + 90
    assert s.get_value("ragpulse_tokens_total", **labels("aisdk-oi", AGENT_MODEL), kind="completion") == 9 + 12
    assert s.get_value("ragpulse_retrieval_top_score_sum", **labels("aisdk-oi", AGENT_MODEL)) == 0.91
    assert s.get_value("ragpulse_retrievals_sum", **labels("aisdk-oi", AGENT_MODEL)) == 1
    assert s.get_value("ragpulse_otlp_message_parts_skipped_total") == 0


class _Relay(BaseHTTPRequestHandler):
    """Keeps what an exporter posts and hands it on to the sidecar, answering with the sidecar's answer."""

    bodies: list[tuple[str, bytes]] = []
    target = ""

    def do_POST(self) -> None:  # noqa: N802 - the handler's name
        if self.headers["Content-Length"] is not None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
        else:  # Node's http sends chunks
            body = b""
            while size := int(self.rfile.readline().split(b";")[0], 16):
                body += self.rfile.read(size)
                self.rfile.readline()
            self.rfile.readline()
        gzipped = self.headers["Content-Encoding"] == "gzip"
        type(self).bodies.append((self.headers["Content-Type"], gzip.decompress(body) if gzipped else body))
        answer = http("POST", type(self).target, body, {"Content-Type": self.headers["Content-Type"],
                                                        **({"Content-Encoding": "gzip"} if gzipped else {})})
        self.send_response(answer.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        self.wfile.write(answer.body)

    def log_message(self, *args: object) -> None:
        pass


def test_the_same_agent_through_the_otlp_json_exporter(sidecar: Sidecar) -> None:
    """The JS SDK's OTLP/HTTP JSON exporter (@opentelemetry/exporter-trace-otlp-http): every request it sends is
    one the crate's OTLP/JSON reader reads itself (native/src/otlp_json.rs, not the general path), into the records
    the general path makes; the sidecar records the trace it records through the protobuf exporter."""
    _Relay.bodies, _Relay.target = [], f"http://127.0.0.1:{sidecar.rp.otlp_port}/v1/traces"
    relay = ThreadingHTTPServer(("127.0.0.1", 0), _Relay)
    threading.Thread(target=relay.serve_forever, daemon=True).start()
    try:
        run_node_app(sidecar, "aisdk-json", "json", endpoint=f"http://127.0.0.1:{relay.server_port}/v1/traces")
    finally:
        relay.shutdown()
    assert _Relay.bodies and {kind for kind, _ in _Relay.bodies} == {"application/json"}
    for _, body in _Relay.bodies:
        read = decode_otlp_json(body, MAPPED_KEYS, Span, SpanEvent)
        assert read is not None
        general = decode_json_generally(body)
        assert (read[0], len(read[1])) == (general.spans, general.rejected)
    record = sidecar.judged("aisdk-json")
    assert_the_agents_record(record, "aisdk-session")
