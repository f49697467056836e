"""A trace's spans -> one v1 TraceEvent, for OpenInference and OpenTelemetry GenAI spans.

Feedback: `gen_ai.evaluation.result` span events become feedback events (sources/otlp/evaluations.py).

Also OpenLLMetry (Traceloop): chunks from vector-DB span events `db.query.result`
(`db.query.result.{id,score,document}`) or a retriever task's `traceloop.entity.output`
(a JSON list whose items may themselves be JSON); query and answer from the workflow
root's `traceloop.entity.input` / `output`, else `gen_ai.prompt.{i}` / `gen_ai.completion.{i}`;
session and user from `traceloop.association.properties.{session_id,user_id}`.

| event field | OpenInference | OpenTelemetry GenAI |
|---|---|---|
| chunks | RERANKER `reranker.output_documents.{i}.document.*`, else RETRIEVER `retrieval.documents.{i}.document.{id,content,score,metadata}` (retrievers without documents ignored, duplicates removed) | `gen_ai.retrieval.documents` (JSON or structured: id, content, score) |
| query | the retriever's `input.value`, else the root's | `gen_ai.retrieval.query.text`, else the root's `input.value`, else the last user message of `gen_ai.input.messages` / `gen_ai.prompt` |
| answer | the root's `output.value` (JSON: its `response`), else the last LLM span's `llm.output_messages` | the root's `output.value`, else the last chat span's `gen_ai.output.messages` / `gen_ai.completion` |
| model, usage | leaf LLM spans: `llm.model_name`, `llm.token_count.{prompt,completion}` | leaf chat spans: `gen_ai.response.model` / `gen_ai.request.model`, `gen_ai.usage.{input,output}_tokens` (or `prompt_`/`completion_tokens`) |
| session_id, user_id | `session.id`, `user.id` | `gen_ai.conversation.id` |
| attributes | `metadata` (JSON), `tag.tags`, `ragpulse.probe` (a probe's request) | |
| app, release, route | resource `service.name`, `service.version`; route from `otlp.route_attribute` | same |
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import msgspec

from ragpulse.collector.events import Chunk, TraceEvent, Usage
from ragpulse.sources.otlp.spans import Span
from ragpulse.sources.otlp.values import add_count as _add_count
from ragpulse.sources.otlp.values import float_value as _float
from ragpulse.sources.otlp.values import text_value as _str

OI_KIND = "openinference.span.kind"
TRACELOOP_KIND = "traceloop.span.kind"
DB_QUERY_RESULT = "db.query.result"
ASSOCIATION = "traceloop.association.properties."
GENAI_OPERATION = "gen_ai.operation.name"
_LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
# Indexes of at most 9 digits: a longer one is no real list position (and int() of 4,300 digits raises).
_DOC_KEY = re.compile(r"^(?P<prefix>retrieval\.documents|reranker\.output_documents)\.(?P<i>\d{1,9})\.document\.(?P<field>\w+)$")
_OUTPUT_MESSAGE = re.compile(r"^llm\.output_messages\.(?P<i>\d{1,9})\.message\.content$")
_OI_INPUT_MESSAGE = re.compile(r"^llm\.input_messages\.(?P<i>\d{1,9})\.message\.(?P<field>role|content)$")
_OI_PROMPT = re.compile(r"^llm\.prompts\.(?P<i>\d{1,9})(?:\.prompt\.text)?$")
_GENAI_INDEXED = re.compile(r"^gen_ai\.(?P<kind>prompt|completion)\.(?P<i>\d{1,9})\.(?P<field>role|content)$")


@dataclass(frozen=True, slots=True)
class NotMapped:
    """Why a trace's spans make no trace event: `not_rag` (no retrieval, no LLM span) or
    `content_not_captured` (no question or no answer text: the app does not record content)."""

    reason: str
    hint: str = ""  # for content_not_captured: the setting that turns content capture on


# Which setting records content, by the instrumentation scope's name (the first prefix that matches).
CONTENT_SETTINGS: tuple[tuple[str | tuple[str, ...], str], ...] = (
    ("openinference.", "unset OPENINFERENCE_HIDE_INPUTS / OPENINFERENCE_HIDE_OUTPUTS (TraceConfig hide_inputs, hide_outputs)"),
    # The official GenAI instrumentations (openai-v2 and others) emit through opentelemetry-util-genai.
    (("opentelemetry.instrumentation.openai_v2", "opentelemetry.util.genai"), "set OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental and "
     "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only (or span_and_event): content on spans, not only in log events"),
    ("opentelemetry.instrumentation.", "set TRACELOOP_TRACE_CONTENT=true (OpenLLMetry), or turn on the instrumentation's "
     "message content capture"),
)
ANY_CONTENT_SETTING = "turn on the instrumentation's message content capture (see README, OTLP)"


def content_setting(spans: list[Span]) -> str:
    for prefixes, setting in CONTENT_SETTINGS:
        if any(span.scope.startswith(prefixes) for span in spans):
            return setting
    return ANY_CONTENT_SETTING


class TraceMapper:
    def __init__(self, route_attribute: str | None = None) -> None:
        self._route_attribute = route_attribute

    def map(self, spans: list[Span]) -> TraceEvent | NotMapped:
        """The trace event of these spans, or why there is none. Never an event with a question or
        an answer ragpulse would have had to make up."""
        retrievers = [s for s in spans if is_retrieval(s)]
        llms = [s for s in spans if is_llm(s)]
        if not retrievers and not llms:
            return NotMapped("not_rag")
        spans = sorted(spans, key=lambda s: s.start_unix_nano)
        root = _root(spans)
        query, answer = _query(root, retrievers, llms), _answer(root, llms)
        if not query or not answer:
            return NotMapped("content_not_captured", content_setting(spans))
        leaf_llms = _leaves(llms)
        prompt: int | None = 0
        completion: int | None = 0
        counted = False  # whether any leaf LLM span reports a token count: else usage is not reported
        model = None
        for span in leaf_llms:
            attrs = span.attributes
            # The response model where a convention carries it: OpenInference's llm.model_name is the request's.
            model = _str(attrs.get("gen_ai.response.model") or attrs.get("llm.model_name") or attrs.get("gen_ai.request.model")) or model
            prompt_count = attrs.get("llm.token_count.prompt", attrs.get("gen_ai.usage.input_tokens",
                                                                         attrs.get("gen_ai.usage.prompt_tokens")))
            completion_count = attrs.get("llm.token_count.completion", attrs.get(
                "gen_ai.usage.output_tokens", attrs.get("gen_ai.usage.completion_tokens")))
            counted = counted or prompt_count is not None or completion_count is not None
            prompt, completion = _add_count(prompt, prompt_count), _add_count(completion, completion_count)
        session = _first(spans, "session.id", "gen_ai.conversation.id", ASSOCIATION + "session_id")
        attributes: dict[str, Any] = {}
        metadata = _first(spans, "metadata")
        if metadata is not None:
            attributes["metadata"] = _json_or_text(metadata)
        tags = _first(spans, "tag.tags")
        if tags is not None:
            attributes["tags"] = tags
        probe = _first(spans, "ragpulse.probe")  # a probe's request, marked by the app (probes/marker.py)
        if probe is not None:
            attributes["ragpulse.probe"] = str(probe)[:256]
        route = _str(_first(spans, self._route_attribute)) if self._route_attribute else None
        return TraceEvent(
            trace_id=root.trace_id,
            query=query,
            answer=answer,
            timestamp=root.start_unix_nano / 1e6,  # epoch milliseconds, as the contract takes them
            session_id=_str(session),
            user_id=_str(_first(spans, "user.id", ASSOCIATION + "user_id")),
            app=_str(root.resource.get("service.name")),
            release=_str(root.resource.get("service.version")),
            route=route,
            model=model,
            chunks=_chunks(retrievers),
            latency_ms=root.duration_seconds * 1000.0,
            # A count that is no count (+Inf, text, past 2^53) makes the trace's usage "not reported".
            usage=Usage(prompt_tokens=prompt, completion_tokens=completion)
            if counted and prompt is not None and completion is not None else None,
            attributes=attributes,
        )


def is_retrieval(span: Span) -> bool:
    attrs = span.attributes
    return (
        attrs.get(OI_KIND) in ("RETRIEVER", "RERANKER")
        or attrs.get(GENAI_OPERATION) == "retrieval"
        or "gen_ai.retrieval.documents" in attrs
        or any(e.name == DB_QUERY_RESULT for e in span.events)
        or (attrs.get(TRACELOOP_KIND) == "task" and "retriev" in str(attrs.get("traceloop.entity.name", span.name)).lower())
    )


def is_llm(span: Span) -> bool:
    attrs = span.attributes
    operation = _str(attrs.get(GENAI_OPERATION))  # any attribute may be an array or a kvlist
    return (
        attrs.get(OI_KIND) == "LLM"
        or operation in _LLM_OPERATIONS
        or attrs.get("llm.request.type") in ("chat", "completion")
        # A framework's LLM task (OpenLLMetry on a LlamaIndex LLM) says so only by its output messages.
        or (operation is None and attrs.get(OI_KIND) is None and "gen_ai.output.messages" in attrs)
    )


def _root(spans: list[Span]) -> Span:
    ids = {s.span_id for s in spans}
    roots = [s for s in spans if s.parent_span_id is None] or [s for s in spans if s.parent_span_id not in ids]
    return roots[0] if roots else spans[0]


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


def _reports_documents(span: Span) -> bool:
    """Whether a retrieval span says what it retrieved (zero documents included), or only that it ran:
    without content capture a retriever records no documents, which is not an empty retrieval."""
    attrs = span.attributes
    return (
        _has_documents(span)  # OpenInference document keys, or gen_ai.retrieval.documents
        or any(e.name == DB_QUERY_RESULT for e in span.events)
        or "traceloop.entity.output" in attrs
        or (attrs.get(OI_KIND) in ("RETRIEVER", "RERANKER") and "output.value" in attrs)
    )


def _chunks(retrievers: list[Span]) -> list[Chunk] | None:
    """The retrieved chunks; None when no retrieval span reports its documents (retrieval not reported)."""
    retrievers = [s for s in retrievers if _reports_documents(s)]
    if not retrievers:
        return None
    rerankers = [s for s in retrievers if s.attributes.get(OI_KIND) == "RERANKER"]
    for span in reversed(rerankers):
        documents = _documents(span, "reranker.output_documents")
        if documents:
            return documents
    chunks: list[Chunk] = []
    seen: set[tuple[str | None, str]] = set()
    for span in retrievers:
        documents = (
            _documents(span, "retrieval.documents") or _genai_documents(span) or _db_result_documents(span)
            or _traceloop_documents(span)
        )
        for chunk in documents:
            key = (chunk.id, chunk.text if chunk.id is None else "")
            if key not in seen:
                seen.add(key)
                chunks.append(chunk)
    return chunks


def _documents(span: Span, prefix: str) -> list[Chunk]:
    fields: dict[int, dict[str, Any]] = {}
    for key, value in span.attributes.items():
        match = _DOC_KEY.match(key)
        if match and match["prefix"] == prefix:
            fields.setdefault(int(match["i"]), {})[match["field"]] = value
    chunks = []
    for _, doc in sorted(fields.items()):
        metadata = _json_or_text(doc.get("metadata")) if doc.get("metadata") is not None else None
        source = _str(metadata.get("source") or metadata.get("file_name")) if isinstance(metadata, dict) else None
        chunks.append(Chunk(text=_str(doc.get("content")), id=_str(doc.get("id")), score=_float(doc.get("score")), source=source))
    return chunks


def _genai_documents(span: Span) -> list[Chunk]:
    documents = span.attributes.get("gen_ai.retrieval.documents")
    if isinstance(documents, str):
        documents = _json_or_text(documents)
    if not isinstance(documents, list):
        return []
    return [
        # Spec-shaped documents carry id and score only: their text is not reported (None), not "".
        Chunk(text=_str(d.get("content") if d.get("content") is not None else d.get("text")), id=_str(d.get("id")),
              score=_float(d.get("score")))
        for d in documents
        if isinstance(d, dict)
    ]


def _db_result_documents(span: Span) -> list[Chunk]:
    """OpenLLMetry vector-DB instrumentations: one `db.query.result` event per returned document."""
    return [
        Chunk(
            text=_str(e.attributes.get("db.query.result.document")),
            id=_str(e.attributes.get("db.query.result.id")),
            score=_float(e.attributes.get("db.query.result.score")),
        )
        for e in span.events
        if e.name == DB_QUERY_RESULT
    ]


def _traceloop_documents(span: Span) -> list[Chunk]:
    """A Traceloop retriever task's output: a JSON list of nodes, each possibly JSON itself."""
    output = _json_or_text(span.attributes.get("traceloop.entity.output"))
    if isinstance(output, dict):
        output = next((v for k, v in output.items() if k in ("nodes", "documents", "source_nodes") and isinstance(v, list)), None)
    if not isinstance(output, list):
        return []
    chunks = []
    for item in output:
        item = _json_or_text(item)
        if isinstance(item, str):
            chunks.append(Chunk(text=item))
            continue
        if not isinstance(item, dict):
            continue
        node = item.get("node") if isinstance(item.get("node"), dict) else item
        text = node.get("text") or node.get("page_content") or node.get("content")
        chunks.append(Chunk(text=_str(text), id=_str(node.get("id_") or node.get("id") or node.get("node_id")),
                            score=_float(item.get("score"))))
    return chunks


def _query(root: Span, retrievers: list[Span], llms: list[Span]) -> str:
    # Retrievers that returned documents first: a framework's inner retriever span often
    # carries only a serialised call (LlamaIndex's _retrieve with its query_bundle).
    retrievers = sorted(retrievers, key=lambda s: (not _has_documents(s), s.start_unix_nano))
    for span in retrievers:
        attrs = span.attributes
        text = _input_text(attrs.get("gen_ai.retrieval.query.text") or attrs.get("input.value")
                           or attrs.get("traceloop.entity.input"))
        if text:
            return text
    text = _input_text(root.attributes.get("input.value") or root.attributes.get("traceloop.entity.input"))
    if text:
        return text
    for span in (root, *llms):  # a GenAI workflow or agent span carries its input messages too
        text = _last_user_message(span)
        if text:
            return text
    return ""


def _answer(root: Span, llms: list[Span]) -> str:
    """The root's output when it is the answer's text; else the last LLM span's output. A generator
    (a streamed response), a framework's serialised structure or JSON without a text field is not
    the answer, and is never stored as one."""
    attrs = root.attributes
    for key in ("output.value", "traceloop.entity.output"):
        text = _output_text(attrs.get(key))
        if text:
            return text
    text = _message_output(root)
    if text:
        return text
    for span in sorted(llms, key=lambda s: s.end_unix_nano, reverse=True):
        text = _llm_output(span) or _output_text(span.attributes.get("output.value"))
        if text:
            return text
    return ""


# The fields frameworks put the text in, in order: LlamaIndex {"response"}, a streamed response's
# {"response_txt"}, LangChain's {"outputs": ...} and {"answer"}, Traceloop's {"output"}...
_OUTPUT_KEYS = ("response", "response_txt", "answer", "outputs", "output", "result", "text", "content")
_QUERY_KEYS = ("query_str", "query", "question", "input", "inputs", "str_or_query_bundle", "query_bundle", "prompt")


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
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str):
        return _text_in(value[0], keys, depth + 1)
    return None


def _is_object_repr(text: str) -> bool:
    """"<generator object ...>", "ChatMessage(_role=...)": a Python repr, not text a user read."""
    return (text.startswith("<") and text.endswith(">")) or bool(_REPR.match(text))


_REPR = re.compile(r"^[A-Z][A-Za-z0-9_]*\((?:_?[a-z_]+=|\))")


def _message_output(span: Span) -> str | None:
    """A GenAI workflow or agent span's `gen_ai.output.messages`: the last assistant text."""
    parsed = _json_or_text(span.attributes.get("gen_ai.output.messages"))
    if isinstance(parsed, list):
        texts = [_message_text(m) for m in parsed if isinstance(m, dict)]
        return next((t for t in reversed(texts) if t), None)
    return None


def _llm_output(span: Span) -> str | None:
    attrs = span.attributes
    messages = {int(m["i"]): v for k, v in attrs.items() if (m := _OUTPUT_MESSAGE.match(k))}
    if messages:
        return _str(messages[max(messages)])
    output = attrs.get("gen_ai.output.messages")
    if output is not None:
        parsed = _json_or_text(output)
        if isinstance(parsed, list):
            texts = [_message_text(m) for m in parsed if isinstance(m, dict)]
            return next((t for t in reversed(texts) if t), None)
    indexed = _indexed_messages(span, "completion")
    if indexed:
        return indexed[-1][1]
    for event in reversed(span.events):  # the older GenAI message events
        if event.name == "gen_ai.choice":
            message = _json_or_text(event.attributes.get("message"))
            text = _message_text(message) if isinstance(message, dict) else _str(event.attributes.get("content"))
            if text:
                return text
    completion = attrs.get("gen_ai.completion")
    return _str(completion) if completion else None


def _indexed_messages(span: Span, kind: str) -> list[tuple[str | None, str]]:
    """OpenLLMetry's flattened `gen_ai.prompt.{i}.{role,content}` / `gen_ai.completion.{i}.*`, in order."""
    messages: dict[int, dict[str, Any]] = {}
    for key, value in span.attributes.items():
        match = _GENAI_INDEXED.match(key)
        if match and match["kind"] == kind:
            messages.setdefault(int(match["i"]), {})[match["field"]] = value
    return [(_str(m.get("role")), _str(m.get("content")) or "") for _, m in sorted(messages.items()) if m.get("content")]


def _last_user_message(span: Span) -> str | None:
    indexed = [content for role, content in _indexed_messages(span, "prompt") if role == "user"]
    indexed += [content for role, content in _oi_input_messages(span) if role == "user"]
    if indexed:
        return indexed[-1]
    prompts = _oi_prompts(span)
    if prompts:
        return prompts[-1]
    events = [_str(e.attributes.get("content")) for e in span.events if e.name == "gen_ai.user.message"]
    if any(events):
        return [e for e in events if e][-1]
    parsed = _json_or_text(span.attributes.get("gen_ai.input.messages") or span.attributes.get("gen_ai.prompt") or "")
    if isinstance(parsed, list):
        users = [_message_text(m) for m in parsed if isinstance(m, dict) and m.get("role") == "user"]
        return next((t for t in reversed(users) if t), None)
    return _str(parsed) if parsed else None


def _oi_input_messages(span: Span) -> list[tuple[str | None, str]]:
    messages: dict[int, dict[str, Any]] = {}
    for key, value in span.attributes.items():
        match = _OI_INPUT_MESSAGE.match(key)
        if match:
            messages.setdefault(int(match["i"]), {})[match["field"]] = value
    return [(_str(m.get("role")), _str(m.get("content")) or "") for _, m in sorted(messages.items()) if m.get("content")]


def _oi_prompts(span: Span) -> list[str]:
    """`llm.prompts` as the spec's flattened `llm.prompts.{i}.prompt.text`, or as a plain string array."""
    plain = span.attributes.get("llm.prompts")
    if isinstance(plain, list):
        return [p for p in (_str(v) for v in plain) if p]
    flattened = {int(m["i"]): v for k, v in span.attributes.items() if (m := _OI_PROMPT.match(k))}
    return [p for p in (_str(flattened[i]) for i in sorted(flattened)) if p]


def _message_text(message: dict[str, Any]) -> str | None:
    if isinstance(message.get("content"), str):
        return message["content"]
    parts = message.get("parts")
    if isinstance(parts, list):
        texts = [p.get("content") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
        return "".join(t for t in texts if isinstance(t, str)) or None
    return None


def _has_documents(span: Span) -> bool:
    return "gen_ai.retrieval.documents" in span.attributes or any(_DOC_KEY.match(k) for k in span.attributes)


def _input_text(value: Any) -> str:
    """The question in a span's input: plain text, or inside a framework's JSON wrapper: LlamaIndex's
    {"query_bundle": {"query_str": ...}} and OpenLLMetry's {"str_or_query_bundle": ...}, LangChain's
    {"inputs": ..., "tags": ..., "kwargs": ...}, Traceloop's call {"args": [...], "kwargs": {...}}."""
    parsed = _json_or_text(value)
    if isinstance(parsed, dict):
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


def _first(spans: list[Span], *keys: str | None) -> Any:
    for span in spans:
        for key in keys:
            if key and span.attributes.get(key) is not None:
                return span.attributes[key]
    return None


def _json_or_text(value: Any) -> Any:
    # A JSON object, array or string (Traceloop serialises a str output as "\"...\""), else the text.
    if isinstance(value, str) and value[:1] in ("{", "[", '"'):
        try:
            return msgspec.json.decode(value)
        except (msgspec.DecodeError, RecursionError):
            return value
    return value
