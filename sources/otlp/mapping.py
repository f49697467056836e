"""A trace's spans -> one v1 TraceEvent: OpenInference, OpenTelemetry GenAI, OpenLLMetry (Traceloop) and the Vercel
AI SDK, plain RAG pipelines and agents. docs/otlp.md has the table of which span gives each field in each
convention. The documents are read in sources/otlp/documents.py, the messages in sources/otlp/messages.py, tool
calls and the AI SDK's older spans in sources/otlp/tool_calls.py. Feedback: `gen_ai.evaluation.result` span events
become feedback events (sources/otlp/evaluations.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import structlog

from ragpulse.collector.events import MAX_ID_CHARS, Chunk, RunError, TraceEvent, Usage
from ragpulse.config.sources import RETRIEVAL_TOOLS
from ragpulse.sources.otlp.documents import chunks_of as _chunks
from ragpulse.sources.otlp.documents import has_documents as _has_documents
from ragpulse.sources.otlp.messages import json_or_text as _json_or_text
from ragpulse.sources.otlp.messages import last_user_message, llm_output, message_output, message_text, user_message_in
from ragpulse.sources.otlp.failures import failure
from ragpulse.sources.otlp.spans import Span
from ragpulse.sources.otlp.role_rules import OI_KIND
from ragpulse.sources.otlp.roles import GENAI_OPERATION, LLM, RETRIEVAL, TOOL, span_roles
from ragpulse.sources.otlp.tool_calls import COMPLETION_TOKENS, PROMPT_TOKENS, vercel_query
from ragpulse.sources.otlp.tool_results import RetrievalTools, ToolResult, tool_documents, tool_results
from ragpulse.sources.otlp.values import add_count as _add_count
from ragpulse.sources.otlp.values import text_value as _str

ASSOCIATION = "traceloop.association.properties."
_START, _END = attrgetter("start_unix_nano"), attrgetter("end_unix_nano")  # sort keys in C: every trace sorts a few times
_USER_KEYS = ("user.id", ASSOCIATION + "user_id", "ai.telemetry.metadata.userId", "ai.settings.context.userId",
              "metadata.userId")
MAX_TOOLS_TOLD = 1_000  # tool names logged once each, at most: they come from clients
log = structlog.get_logger("ragpulse.otlp")


@dataclass(frozen=True, slots=True)
class NotMapped:
    """Why a trace's spans make no trace event: `not_rag` (no retrieval, no LLM span: embeddings alone too),
    `unmapped_genai`, `content_not_captured` (no question or no answer text: the app does not record content),
    `detached_retrieval` (a retrieval with no model call in its trace: it ran outside its turn's trace) or `failed`
    (a failed run without a question to make its event of)."""

    reason: str
    hint: str = ""  # what is missing, or the setting or fix that would make an event


# Which setting records content, by the instrumentation scope's name (the first prefix that matches).
CONTENT_SETTINGS: tuple[tuple[str | tuple[str, ...], str], ...] = (
    (("openinference.", "@arizeai/openinference"), "unset OPENINFERENCE_HIDE_INPUTS / OPENINFERENCE_HIDE_OUTPUTS (TraceConfig hide_inputs, hide_outputs)"),
    # The official GenAI instrumentations (openai-v2 and others) emit through opentelemetry-util-genai.
    (("opentelemetry.instrumentation.openai_v2", "opentelemetry.util.genai"), "set OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental and "
     "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only (or span_and_event): content on spans, not only in log events"),
    ("opentelemetry.instrumentation.", "set TRACELOOP_TRACE_CONTENT=true (OpenLLMetry), or turn on the instrumentation's "
     "message content capture"),
)
ANY_CONTENT_SETTING = "turn on the instrumentation's message content capture (see docs/otlp.md)"


def content_setting(spans: list[Span]) -> str:
    for prefixes, setting in CONTENT_SETTINGS:
        if any(span.scope.startswith(prefixes) for span in spans):
            return setting
    return ANY_CONTENT_SETTING


class TraceMapper:
    def __init__(self, route_attribute: str | None = None, retrieval_tools: Sequence[str] = RETRIEVAL_TOOLS) -> None:
        self._route_attribute = route_attribute
        self._tools = RetrievalTools(retrieval_tools)
        # Message parts that are not text (image, audio, file...), skipped while reading questions, and tool results by
        # (kind, read_as): the receiver's metrics read and reset them.
        self.skipped_parts: dict[str, int] = {}
        self.tool_results: dict[tuple[str, str], int] = {}
        self._tools_told: set[str] = set()

    def map(self, spans: list[Span]) -> TraceEvent | NotMapped:
        """The trace event of these spans, or why there is none. Never an event with a question or
        an answer ragpulse would have had to make up."""
        spans = sorted(spans, key=_START)
        # Each span asked what it is once (this runs on every trace); a tool call is never also a retrieval span.
        llms: list[Span] = []
        tool_calls: list[Span] = []
        retrievers: list[Span] = []
        for span in spans:
            roles = span_roles(span)
            if roles & LLM:
                llms.append(span)
            if roles & TOOL:
                tool_calls.append(span)
            elif roles & RETRIEVAL:
                retrievers.append(span)
        leaves = _leaves(llms)
        calls = [s for s in leaves if _is_call(s)]
        answering = max(calls, key=_END, default=None)
        tools = tool_results(tool_calls, spans, retrievers, answering.start_unix_nano if answering else None,
                             self._tools) if tool_calls else []
        if tools:
            self._count(tools)
            retrievers = sorted([*retrievers, *(t.span for t in tools if t.read_as == "retrieval")], key=_START)
        if not retrievers and not llms:
            missing = _genai_looking(spans)
            return NotMapped("unmapped_genai", missing) if missing else NotMapped("not_rag")
        root = _root(spans)
        searches = _retrieval_queries(retrievers, {t.span.span_id: t.query for t in tools})
        query, answer = _query(root, retrievers, llms, searches, self.skipped_parts), _answer(root, llms)
        error = failure(spans, root, bool(answer))
        if error is not None:
            if not query:
                return NotMapped("failed", f"{error.type} in {error.span!r}, and no question recorded")
            answer = None
        elif not query or not answer:
            if not llms:
                return NotMapped("detached_retrieval", detached_hint(retrievers))
            return NotMapped("content_not_captured", content_setting(spans))
        chunks, retrievals = _chunks(retrievers, {t.span.span_id: t.chunks for t in tools if t.read_as == "retrieval"})
        context = [chunk for t in tools if t.read_as == "context" for chunk in t.chunks]
        return self._event(spans, root, llms, (leaves, calls), query, answer, chunks, retrievals, searches, context, error)

    def _event(self, spans: list[Span], root: Span, llms: list[Span], leaves: tuple[list[Span], list[Span]], query: str,
               answer: str | None, chunks: list[Chunk] | None, retrievals: int | None, searches: list[str],
               context: list[Chunk], error: RunError | None) -> TraceEvent:
        model, usage = _model_and_usage(*leaves)
        present = set().union(*[s.attributes for s in spans])  # every key the spans hold: most keys asked, none does
        session = _first(spans, present, "session.id", "gen_ai.conversation.id", ASSOCIATION + "session_id",
                         "ai.telemetry.metadata.sessionId", "ai.settings.context.sessionId", "metadata.sessionId")
        attributes: dict[str, Any] = {}
        metadata = _first(spans, present, "metadata")
        if metadata is not None:
            attributes["metadata"] = _json_or_text(metadata)
        tags = _first(spans, present, "tag.tags")
        if tags is not None:
            attributes["tags"] = tags
        probe = _first(spans, present, "ragpulse.probe")  # a probe's request, marked by the app (probes/marker.py)
        if probe is not None:
            attributes["ragpulse.probe"] = str(probe)[:256]
        route = _str(_first(spans, present, self._route_attribute)) if self._route_attribute else None
        answering, response_id = _answering(spans if GENAI_OPERATION in present else [], llms, present) or (root, None)
        event = TraceEvent(
            trace_id=root.trace_id,
            query=query,
            answer=answer,
            timestamp=root.start_unix_nano / 1e6,  # epoch milliseconds, as the contract takes them
            app=_str(root.resource.get("service.name")),
            release=_str(root.resource.get("service.version")),
            model=model,
            chunks=chunks,
            latency_ms=root.duration_seconds * 1000.0,
            usage=usage,
            attributes=attributes,
            retrieval_queries=searches or None,
            retrievals=retrievals,
            span_id=answering.span_id,
        )
        # The fields most traces leave at their default (None) set only when given: each keyword costs the event's
        # construction a look-up, a third of it for these six.
        optional = (("session_id", _str(session)), ("user_id", _str(_first(spans, present, *_USER_KEYS))),
                    ("route", route), ("response_id", response_id), ("error", error), ("context", context or None))
        for name, value in optional:
            if value is not None:
                setattr(event, name, value)
        return event

    def _count(self, tools: list[ToolResult]) -> None:
        """Counts each tool result; a tool whose results are not read as retrievals is logged once by name, with the
        setting that would read them."""
        for result in tools:
            key = (result.kind, result.read_as)
            self.tool_results[key] = self.tool_results.get(key, 0) + 1
            if result.read_as == "retrieval" or result.name in self._tools_told or len(self._tools_told) >= MAX_TOOLS_TOLD:
                continue
            self._tools_told.add(result.name)
            if result.read_as == "context":
                log.info("a tool's text results are context the answer is judged against, not retrievals",
                         tool=result.name, fix="add a pattern matching its name to otlp.retrieval_tools to read them as "
                         "retrievals")
            else:
                log.info("a tool's results are not read: the model answered before they came, or they were empty",
                         tool=result.name)


def detached_hint(retrievers: list[Span]) -> str:
    """Why a retrieval is alone in its trace, and which instrumentation made it."""
    scopes = sorted({s.scope for s in retrievers if s.scope})
    return ("a retrieval with no model call in its trace: the retriever ran outside its turn's trace context, so its "
            "spans began a trace of their own (LangChain.js: pass the tool's config on, retriever.invoke(query, config)); "
            f"scope: {', '.join(scopes) or 'not reported'}")


def _answering(spans: list[Span], llms: list[Span], present: set[str]) -> tuple[Span, str] | None:
    """The span that produced the answer and its response id (gen_ai.response.id): the last LLM span that carries
    one, else the last agent span (invoke_agent, among `spans`) that does. The verdicts go on it, as the GenAI
    conventions parent an evaluation to the operation it evaluates: under an HTTP server's root (`POST /ask`), the
    root made no answer. `present`: every key the spans hold (no span holding a response id, none is looked for)."""
    if "gen_ai.response.id" not in present:
        return None
    agents = [s for s in spans if s.attributes.get(GENAI_OPERATION) == "invoke_agent"]
    for group in (llms, agents):
        for span in sorted(group, key=_START, reverse=True):
            value = _str(span.attributes.get("gen_ai.response.id"))
            if value:
                return span, value[:MAX_ID_CHARS]
    return None


def _model_and_usage(leaf_llms: list[Span], calls: list[Span]) -> tuple[str | None, Usage | None]:
    """The answering model, and the usage summed over the LLM calls (`calls`: the leaves that are model calls,
    _is_call): None when no call reports a count (not reported), partial (`unreported_calls`) when some do not. A
    count that is no count (+Inf, text, past 2^53) makes the usage not reported."""
    prompt: int | None = 0
    completion: int | None = 0
    counted = unreported = 0
    model = requested = None
    called = {id(span) for span in calls}
    for span in leaf_llms:
        attrs = span.attributes
        if id(span) not in called:
            # A framework's step around a call (preparing the tools), or a call that failed: its model is the one
            # asked for, the label of a failed run.
            requested = requested or _str(attrs.get("llm.model_name") or attrs.get("gen_ai.request.model"))
            continue
        # The response model where a convention carries it: OpenInference's llm.model_name is the request's.
        model = _str(attrs.get("gen_ai.response.model") or _output_model(attrs.get("output.value"))
                     or attrs.get("llm.model_name") or attrs.get("gen_ai.request.model") or attrs.get("ai.model.id")) or model
        prompt_count = _count(attrs, "llm.token_count.prompt", "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
                              *PROMPT_TOKENS)
        completion_count = _count(attrs, "llm.token_count.completion", "gen_ai.usage.output_tokens",
                                  "gen_ai.usage.completion_tokens", *COMPLETION_TOKENS)
        if prompt_count is None and completion_count is None:
            unreported += 1
            continue
        counted += 1
        prompt, completion = _add_count(prompt, prompt_count), _add_count(completion, completion_count)
    model = model or requested
    if not counted or prompt is None or completion is None:
        return model, None
    return model, Usage(prompt_tokens=prompt, completion_tokens=completion, unreported_calls=unreported)


def _is_call(span: Span) -> bool:
    """Whether an LLM span is a model call that could have reported usage: it has token counts, or output."""
    attrs = span.attributes
    return (any(key.startswith(("llm.token_count.", "gen_ai.usage.", "ai.usage.")) for key in attrs)
            or llm_output(span) is not None or _output_text(attrs.get("output.value")) is not None
            or _output_text(attrs.get("ai.response.text")) is not None)


def _output_model(value: Any) -> str | None:
    """The response's model in an LLM span's JSON output (the OpenAI Agents SDK's streamed call records the response
    there, and the request's alias as llm.model_name)."""
    parsed = _json_or_text(value) if isinstance(value, str) and value[:1] in ("{", "[") else None
    if isinstance(parsed, list) and parsed:
        parsed = parsed[-1]
    return _str(parsed.get("model")) if isinstance(parsed, dict) and isinstance(parsed.get("model"), str) else None


def _count(attrs: dict[str, Any], *keys: str) -> Any:
    for key in keys:  # a loop, not a generator: twice for each model call
        value = attrs.get(key)
        if value is not None:
            return value
    return None


def _genai_looking(spans: list[Span]) -> str:
    """What is missing when spans look like GenAI telemetry (gen_ai.*, llm.*, ai.* attributes) but have no LLM
    or retrieval span ragpulse can read; "" for spans that are no GenAI at all."""
    keys = {key.split(".", 1)[0] for span in spans if not _is_embedding(span) for key in span.attributes if "." in key}
    if not keys & {"gen_ai", "llm", "ai"}:
        return ""
    return ("no LLM call ragpulse can map: none has gen_ai.operation.name chat/text_completion/generate_content, "
            "openinference.span.kind LLM, llm.request.type, or is an AI SDK doGenerate/doStream span")


_EMBEDDING_OPERATIONS = frozenset({"ai.embed", "ai.embedMany", "ai.embed.doEmbed", "ai.embedMany.doEmbed"})


def _is_embedding(span: Span) -> bool:
    """An embedding call (indexing, a cache lookup): in a trace of these alone there is nothing to judge."""
    attrs = span.attributes
    return (attrs.get(OI_KIND) == "EMBEDDING" or attrs.get(GENAI_OPERATION) in ("embeddings", "embedding")
            or attrs.get("llm.request.type") == "embedding" or _str(attrs.get("ai.operationId")) in _EMBEDDING_OPERATIONS)


def is_retrieval(span: Span) -> bool:
    # a tool call that returned documents (OpenInference TOOL, GenAI execute_tool, AI SDK ai.toolCall): what the
    # assembler's waiting looks for; the mapping reads every tool call's result (tool_results.py)
    roles = span_roles(span)
    return bool(roles & RETRIEVAL) or bool(roles & TOOL and tool_documents(span) is not None)


def _root(spans: list[Span]) -> Span:
    root = next((s for s in spans if s.parent_span_id is None), None)
    if root is not None:
        return root
    ids = {s.span_id for s in spans}  # no span without a parent: the first whose parent did not come
    return next((s for s in spans if s.parent_span_id not in ids), spans[0])


def _leaves(llms: list[Span]) -> list[Span]:
    """LLM spans with no LLM span below them: a wrapper and its inner call count once."""
    by_id = {s.span_id: s for s in llms}
    parents_of_llms: set[str] = set()
    # Any LLM ancestor of an LLM span is not a leaf; walk up through the LLM spans we know.
    for span in llms:
        parent = span.parent_span_id
        while parent is not None and parent in by_id:
            parents_of_llms.add(parent)
            parent = by_id[parent].parent_span_id
    return [s for s in llms if s.span_id not in parents_of_llms]


def _query(root: Span, retrievers: list[Span], llms: list[Span], searches: list[str], skipped: dict[str, int]) -> str:
    """The user's question of the turn, not an agent's search: the root's input (a plain question, a framework's
    wrapper, or a message list: its last user message, or an AI SDK prompt); else, when a model was called
    before anything was retrieved (an agent deciding to search), the first call's last user message; else the
    retriever's input (a pipeline retrieves with the question itself); else any recorded user message."""
    text = _input_text(root.attributes.get("input.value") or root.attributes.get("traceloop.entity.input")) or vercel_query(root)
    if text:
        return text
    first_search = min((s.start_unix_nano for s in retrievers), default=None)
    for span in sorted(llms, key=_START):
        if first_search is not None and span.start_unix_nano >= first_search:
            break
        text = last_user_message(span, skipped) or vercel_query(span)
        if text:
            return text
    if searches:
        return searches[0]
    for span in (root, *llms):  # a GenAI workflow or agent span carries its input messages too
        text = last_user_message(span, skipped)
        if text:
            return text
    return ""


def _retrieval_queries(retrievers: list[Span], tools: dict[str, str | None]) -> list[str]:
    """What each retrieval was asked, in the order they ran, each once: retrievers that returned documents
    first (a framework's inner retriever span often carries only a serialised call); a tool call's (by span id in
    `tools`) its arguments' query."""
    found: list[str] = []
    for span in sorted(retrievers, key=lambda s: (not _has_documents(s) and s.span_id not in tools, s.start_unix_nano)):
        attrs = span.attributes
        text = tools.get(span.span_id) if span.span_id in tools else _input_text(
            attrs.get("gen_ai.retrieval.query.text") or attrs.get("input.value") or attrs.get("traceloop.entity.input"))
        if text and text not in found:
            found.append(text)
    return found


def _answer(root: Span, llms: list[Span]) -> str:
    """The root's output when it is the answer's text; else the last LLM span's output. A generator
    (a streamed response), a framework's serialised structure or JSON without a text field is not
    the answer, and is never stored as one."""
    attrs = root.attributes
    for key in ("output.value", "traceloop.entity.output", "ai.response.text"):
        text = _output_text(attrs.get(key))
        if text:
            return text
    text = message_output(root)
    if text:
        return text
    for span in sorted(llms, key=_END, reverse=True):
        text = (llm_output(span) or _output_text(span.attributes.get("output.value"))
                or _output_text(span.attributes.get("ai.response.text")))
        if text:
            return text
    return ""


# The fields frameworks put the text in, in order: LlamaIndex {"response"}, a streamed response's
# {"response_txt"}, LangChain's {"outputs": ...} and {"answer"}, Traceloop's {"output"}, CrewAI's crew output {"raw"}...
_OUTPUT_KEYS = ("response", "response_txt", "answer", "outputs", "output", "result", "text", "content", "raw")
# smolagents' run({"task": ...}); the Agents SDK's, CrewAI's and LangChain's {"input": ...}.
_QUERY_KEYS = ("query_str", "query", "question", "user_msg", "input", "inputs", "str_or_query_bundle", "query_bundle",
               "prompt", "task", "user_prompt")


def _output_text(value: Any) -> str | None:
    return _text_in(value, _OUTPUT_KEYS, depth=0)


def _text_in(value: Any, keys: tuple[str, ...], depth: int) -> str | None:
    """The text a framework's value holds: a plain string as it is; JSON (a string holding JSON, too)
    through the known wrapper keys; never the JSON itself, a repr of an object or a generator."""
    if depth > 4 or value is None:
        return None
    if isinstance(value, str):
        parsed = _json_or_text(value)
        if parsed is not value:
            return _text_in(parsed, keys, depth + 1)
        stripped = value.strip()
        return None if not stripped or _is_object_repr(stripped) else value
    if isinstance(value, dict):
        for key in keys:
            if key in value:
                text = _text_in(value[key], keys, depth + 1)
                if text:
                    return text
        return None
    if not isinstance(value, list):
        return None
    # A Responses API response's output items (the Agents SDK's streamed call records a response): its messages.
    texts = [message_text(item) for item in value
             if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "assistant"]
    if texts:
        return next((text for text in reversed(texts) if text), None)
    return _text_in(value[0], keys, depth + 1) if len(value) == 1 and isinstance(value[0], str | dict) else None


def _is_object_repr(text: str) -> bool:
    """"<generator object ...>", "ChatMessage(_role=...)": a Python repr, not text a user read."""
    return (text.startswith("<") and text.endswith(">")) or bool(_REPR.match(text))


_REPR = re.compile(r"^[A-Z][A-Za-z0-9_]*\((?:_?[a-z_]+=|\))")


def _input_text(value: Any) -> str:
    """The question in a span's input: plain text, or inside a framework's JSON wrapper: LlamaIndex's
    {"query_bundle": {"query_str": ...}} and OpenLLMetry's {"str_or_query_bundle": ...}, LangChain's
    {"inputs": ..., "tags": ..., "kwargs": ...}, Traceloop's call {"args": [...], "kwargs": {...}}."""
    parsed = _json_or_text(value)
    if isinstance(parsed, list):  # a message list
        return user_message_in(parsed) or ""
    if isinstance(parsed, dict):
        if isinstance(parsed.get("messages"), list):  # LangGraph's {"messages": [["user", "..."]]}, a chat request
            return user_message_in(parsed["messages"]) or ""
        args = parsed.get("args")
        if isinstance(args, list) and args and isinstance(args[0], str):
            return args[0]
        text = _text_in(parsed, _QUERY_KEYS, depth=0)
        if text is None and isinstance(parsed.get("kwargs"), dict):
            text = _text_in(parsed["kwargs"], _QUERY_KEYS, depth=0)
        return text or ""
    if parsed is not value:  # JSON, but no object: a JSON string is the text, anything else is not
        return parsed if isinstance(parsed, str) else ""
    return _str(value) or ""


def _first(spans: list[Span], present: set[str], *keys: str) -> Any:
    """The first span's value of the first of `keys` it holds; `present`: every key the spans hold, so a key no
    span holds (most of those asked) costs one set test, not a lookup a span."""
    if present.isdisjoint(keys):
        return None
    for span in spans:
        for key in keys:
            if span.attributes.get(key) is not None:
                return span.attributes[key]
    return None
