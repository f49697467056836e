"""Tool calls that retrieve, and the Vercel AI SDK's older telemetry (`ai.*` spans).

A tool call whose result is documents is a retrieval: a GenAI `execute_tool` span (`gen_ai.tool.call.arguments`,
`gen_ai.tool.call.result`: the AI SDK 7's OpenTelemetry integration `@ai-sdk/otel` writes these, with
`invoke_agent` and `chat` spans the GenAI mapping reads), or an AI SDK `ai.toolCall` span (versions 4 to 6).

The AI SDK's `experimental_telemetry` before its OpenTelemetry integration:
`ai.generateText` / `ai.streamText` / `ai.generateObject` / `ai.streamObject` wrap a call: `ai.prompt` (JSON:
`prompt` or `messages`), `ai.response.text`, `ai.telemetry.metadata.*`. Their provider calls,
`ai.generateText.doGenerate` and the like, are the LLM spans: `gen_ai.request.model`/`gen_ai.response.model`,
`gen_ai.usage.input_tokens`/`output_tokens` (or `ai.usage.promptTokens`/`completionTokens`, and in v5
`ai.usage.inputTokens`/`outputTokens`), `ai.prompt.messages`, `ai.response.text`. A tool call is an `ai.toolCall`
span with `ai.toolCall.name`, `.args` and `.result`: a tool whose result is documents is a retrieval, and its
args' query is a retrieval query. The SDK sets no `gen_ai.operation.name`.
"""

from __future__ import annotations

from typing import Any

from ragpulse.collector.events import Chunk
from ragpulse.sources.otlp.messages import json_or_text, user_message_in
from ragpulse.sources.otlp.role_rules import TOOL_CALL
from ragpulse.sources.otlp.spans import Span
from ragpulse.sources.otlp.values import float_value, text_value

PROMPT_TOKENS = ("ai.usage.promptTokens", "ai.usage.inputTokens")
COMPLETION_TOKENS = ("ai.usage.completionTokens", "ai.usage.outputTokens")
# Where a document's text, id and score are, in the shapes tools return (LangChain-style, plain, search APIs).
_TEXT_KEYS = ("pageContent", "page_content", "content", "text", "chunk", "snippet")
_ID_KEYS = ("id", "documentId", "doc_id", "chunkId")


def operation(span: Span) -> str:
    return text_value(span.attributes.get("ai.operationId")) or span.name


def vercel_query(span: Span) -> str | None:
    """The user's question of an `ai.*` call: `ai.prompt`'s prompt, or its last user message."""
    prompt = json_or_text(span.attributes.get("ai.prompt"))
    if isinstance(prompt, dict):
        if isinstance(prompt.get("prompt"), str) and prompt["prompt"].strip():
            return prompt["prompt"]
        if isinstance(prompt.get("messages"), list):
            return user_message_in(prompt["messages"])
    messages = json_or_text(span.attributes.get("ai.prompt.messages"))
    return user_message_in(messages) if isinstance(messages, list) else None


def documents_in(result: Any) -> list[Chunk] | None:
    """A list of documents (objects with a text), bare or under `documents` / `results` / `chunks`."""
    if isinstance(result, dict):
        result = next((result[k] for k in ("documents", "results", "chunks", "docs") if isinstance(result.get(k), list)), None)
    if not isinstance(result, list) or not result or not all(isinstance(d, dict) for d in result):
        return None
    chunks = []
    for document in result:
        text = next((document[k] for k in _TEXT_KEYS if isinstance(document.get(k), str)), None)
        if text is None:
            return None  # not documents: a list of records of some other kind
        metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
        identity = next((document.get(k) for k in _ID_KEYS if document.get(k) is not None),
                        next((metadata.get(k) for k in _ID_KEYS if metadata.get(k) is not None), None))
        chunks.append(Chunk(text=text, id=text_value(identity), score=float_value(document.get("score"))))
    return chunks
