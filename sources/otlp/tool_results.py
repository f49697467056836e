"""Tool calls' results as the context an answer rests on.

A tool span, in each convention: OpenInference's TOOL span (`tool.name`, `tool.description`, `input.value`,
`output.value`: the OpenAI Agents SDK, smolagents, CrewAI, LangChain), a GenAI `execute_tool` span
(`gen_ai.tool.name`, `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`: Pydantic AI, the AI SDK's
OpenTelemetry integration; Pydantic AI's instrumentation version 2 writes `tool_arguments` and `tool_response`), an AI
SDK `ai.toolCall` span (`ai.toolCall.name`, `.args`, `.result`).

What its result is read as (`ragpulse_otlp_tool_results_total{kind, read_as}`):
- documents (a list of objects with a text): a retrieval, with the documents' ids, texts and scores, its arguments
  the search string;
- text from a retrieval tool (`otlp.retrieval_tools`: its name or description says it searches): a retrieval of
  one text chunk;
- text from any other tool (a calculator, an API): context, judged against but no retrieval;
- a result the model could not have seen before answering (the tool ran after the answering call: smolagents'
  final_answer) or an empty one: ignored.
A tool span with a retrieval span under it (LangChain's retriever tool, LlamaIndex's QueryEngineTool) is read
through that retrieval, not twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from ragpulse.collector.events import Chunk
from ragpulse.sources.otlp.messages import json_or_text
from ragpulse.sources.otlp.spans import Span
from ragpulse.sources.otlp.role_rules import OI_KIND, TOOL_CALL
from ragpulse.sources.otlp.tool_calls import documents_in, operation
from ragpulse.sources.otlp.values import text_value

_NAME_KEYS = ("tool.name", "gen_ai.tool.name", "ai.toolCall.name")
_DESCRIPTION_KEYS = ("tool.description", "gen_ai.tool.description")
_ARGUMENT_KEYS = ("gen_ai.tool.call.arguments", "tool_arguments", "ai.toolCall.args", "input.value")
_RESULT_KEYS = ("gen_ai.tool.call.result", "tool_response", "ai.toolCall.result", "output.value")
_QUERY_KEYS = ("query", "question", "q", "search", "search_query", "input", "text")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[\s_\-.:/]+")


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One tool call's result and what it is read as."""

    span: Span
    name: str
    kind: str  # documents, text
    read_as: str  # retrieval, context, ignored
    chunks: list[Chunk]
    query: str | None  # what it was asked: the search string of a retrieval


class RetrievalTools:
    """Which tools retrieve, by `otlp.retrieval_tools`: patterns searched in a tool's name and description."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self._patterns = [re.compile(p, re.IGNORECASE) for p in patterns]

    def retrieves(self, name: str, description: str | None) -> bool:
        spelled = _SEPARATORS.sub(" ", _CAMEL.sub(" ", name)).strip()
        texts = [name, spelled] + ([description] if description else [])
        return any(p.search(text) for p in self._patterns for text in texts)


def tool_results(tool_calls: list[Span], spans: list[Span], retrievals: list[Span], answered_at: int | None,
                 tools: RetrievalTools) -> list[ToolResult]:
    """The results of `tool_calls` (the trace's tool spans (roles.py), in the order they ran; `spans`: all of the
    trace's). `retrievals`: the retrieval spans that are no tool calls; `answered_at`: when the answering model call
    started (None: no call, every result counts as seen)."""
    by_id = {s.span_id: s for s in spans}
    under_retrieval = {_ancestor_ids(s, by_id) for s in retrievals}
    read_through = set().union(*under_retrieval) if under_retrieval else set()
    found = []
    for span in tool_calls:
        if span.span_id in read_through or _handoff(span):
            continue
        result = _result(span)
        if result is None:
            continue  # no result recorded: the app records no content, or the call failed
        found.append(_read(span, result, answered_at, tools))
    return found


def _handoff(span: Span) -> bool:
    """The Agents SDK's handoff: a TOOL span with no tool name, from one agent's name to another's, no tool result."""
    return span.attributes.get(OI_KIND) == "TOOL" and "tool.name" not in span.attributes


def _ancestor_ids(span: Span, by_id: dict[str, Span]) -> frozenset[str]:
    ids = []
    parent = span.parent_span_id
    while parent is not None and parent in by_id and len(ids) < 64:
        ids.append(parent)
        parent = by_id[parent].parent_span_id
    return frozenset(ids)


def _read(span: Span, result: Any, answered_at: int | None, tools: RetrievalTools) -> ToolResult:
    name = tool_name(span)
    documents = documents_in(result)
    kind = "documents" if documents is not None else "text"
    text = None if documents is not None else _text(result)
    seen = answered_at is None or span.end_unix_nano <= answered_at
    query = tool_query(span)
    if not seen or (documents is None and not text):
        return ToolResult(span, name, kind, "ignored", [], query)
    if documents is not None:
        return ToolResult(span, name, kind, "retrieval", documents, query)
    description = next((d for k in _DESCRIPTION_KEYS if (d := text_value(span.attributes.get(k)))), None)
    if tools.retrieves(name, description):
        return ToolResult(span, name, kind, "retrieval", [Chunk(text=text)], query)
    return ToolResult(span, name, kind, "context", [Chunk(text=text, source=name)], query)


def tool_name(span: Span) -> str:
    attrs = span.attributes
    name = next((n for k in _NAME_KEYS if (n := text_value(attrs.get(k)))), None)
    return name or span.name.removeprefix("execute_tool ").removeprefix("running tool: ")


def tool_documents(span: Span) -> list[Chunk] | None:
    """The documents a tool call returned, or None when it returned something else (or nothing recorded)."""
    result = _result(span)
    return documents_in(result) if result is not None else None


def _result(span: Span) -> Any:
    attrs = span.attributes
    for key in _RESULT_KEYS:
        if attrs.get(key) is not None and (key != "ai.toolCall.result" or operation(span) == TOOL_CALL):
            return _unwrapped(json_or_text(attrs[key]))
    return None


def _unwrapped(result: Any) -> Any:
    """The tool's output inside a framework's wrapper: OpenInference's LangChain.js writes `{"output": ToolMessage}`,
    the message serialised (`{"lc": 1, "kwargs": {"content": ..., "tool_call_id": ...}}`)."""
    for _ in range(3):
        if isinstance(result, dict) and list(result) == ["output"]:
            result = result["output"]
        elif isinstance(result, dict) and result.get("lc") == 1 and isinstance(result.get("kwargs"), dict):
            result = result["kwargs"]
        else:
            break
    if isinstance(result, dict) and "tool_call_id" in result and "content" in result:  # a ToolMessage
        return json_or_text(result["content"])
    return result


def _text(result: Any) -> str | None:
    """A result's text as the model read it: text as it is, anything else (a JSON object, a number) as JSON."""
    if isinstance(result, str):
        return result if result.strip() else None
    if result is None or result == [] or result == {}:
        return None
    return msgspec.json.encode(result).decode()  # the JSON the framework wrote, which the model read


def tool_query(span: Span) -> str | None:
    """What a tool was asked: its arguments' query (or their one string); smolagents' bound arguments
    (`{"args": [{...}], "kwargs": {...}}`) are read through."""
    attrs = span.attributes
    raw = next((attrs[k] for k in _ARGUMENT_KEYS if attrs.get(k) is not None
                and (k != "ai.toolCall.args" or operation(span) == TOOL_CALL)), None)
    args = json_or_text(raw)
    if isinstance(args, dict) and ("args" in args or "kwargs" in args):
        bound = [a for a in args.get("args") or [] if isinstance(a, dict | str)]
        merged: dict[str, Any] = dict(args["kwargs"]) if isinstance(args.get("kwargs"), dict) else {}
        if len(bound) == 1 and isinstance(bound[0], str):
            return bound[0]
        if bound and isinstance(bound[0], dict):
            merged.update(bound[0])
        args = merged
    if isinstance(args, dict):
        for key in _QUERY_KEYS:
            if isinstance(args.get(key), str) and args[key].strip():
                return str(args[key])
        strings = [v for v in args.values() if isinstance(v, str) and v.strip()]
        return strings[0] if len(strings) == 1 else None
    return args if isinstance(args, str) and args.strip() else None
