"""The chat messages a span records, in every convention ragpulse maps: OpenInference's flattened
`llm.{input,output}_messages.{i}.message.*` (plain `content`, or a list of parts under
`contents.{j}.message_content.{type,text}`: the Python instrumentors write parts for list content, the JS
openinference-vercel always does), OpenLLMetry's `gen_ai.{prompt,completion}.{i}.*`, OTel GenAI's
`gen_ai.{input,output}.messages` (JSON with `parts`) and the older message events, and the message lists
frameworks put in a span's input (LangGraph's `{"messages": [["user", "..."]]}`, LangChain's serialised
messages, OpenAI-style `{"role", "content"}`).

Parts that are not text (images, audio, files) are skipped: never read as text, and counted by the caller.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ragpulse.sources.otlp.spans import Span
from ragpulse.sources.otlp.values import text_value as _str

_OI_MESSAGE = re.compile(
    r"^llm\.(?P<direction>input|output)_messages\.(?P<i>\d{1,9})\.message\."
    r"(?:(?P<field>role|content)|contents\.(?P<j>\d{1,9})\.message_content\.(?P<part>type|text))$"
)
_OI_PROMPT = re.compile(r"^llm\.prompts\.(?P<i>\d{1,9})(?:\.prompt\.text)?$")
_GENAI_INDEXED = re.compile(r"^gen_ai\.(?P<kind>prompt|completion)\.(?P<i>\d{1,9})\.(?P<field>role|content)$")
# LangChain's message types, and the roles of [role, content] pairs, that are the user's.
_USER_ROLES = frozenset({"user", "human", "humanmessage"})


@dataclass(slots=True)
class Messages:
    """One span's messages of one direction, in order, as (role, text); `skipped` counts parts not text."""

    items: list[tuple[str | None, str]] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)


def oi_messages(span: Span, direction: str) -> Messages:
    """OpenInference's `llm.input_messages` or `llm.output_messages` ("input", "output")."""
    messages: dict[int, dict[str, Any]] = {}
    for key, value in span.attributes.items():
        match = _OI_MESSAGE.match(key)
        if match is None or match["direction"] != direction:
            continue
        message = messages.setdefault(int(match["i"]), {})
        if match["field"]:
            message[match["field"]] = value
        else:
            message.setdefault("parts", {}).setdefault(int(match["j"]), {})[match["part"]] = value
    found = Messages()
    for _, message in sorted(messages.items()):
        text = _str(message.get("content"))
        if not text and "parts" in message:
            texts = []
            for _, part in sorted(message["parts"].items()):
                kind = _str(part.get("type")) or "text"
                if kind == "text" and _str(part.get("text")):
                    texts.append(_str(part.get("text")))
                elif kind != "text":
                    found.skipped[kind] = found.skipped.get(kind, 0) + 1
            text = "\n".join(t for t in texts if t)
        if text:
            found.items.append((_str(message.get("role")), text))
    return found


def indexed_messages(span: Span, kind: str) -> list[tuple[str | None, str]]:
    """OpenLLMetry's flattened `gen_ai.prompt.{i}.{role,content}` / `gen_ai.completion.{i}.*`, in order."""
    messages: dict[int, dict[str, Any]] = {}
    for key, value in span.attributes.items():
        match = _GENAI_INDEXED.match(key)
        if match and match["kind"] == kind:
            messages.setdefault(int(match["i"]), {})[match["field"]] = value
    return [(_str(m.get("role")), _str(m.get("content")) or "") for _, m in sorted(messages.items()) if m.get("content")]


def oi_prompts(span: Span) -> list[str]:
    """`llm.prompts` as the spec's flattened `llm.prompts.{i}.prompt.text`, or as a plain string array."""
    plain = span.attributes.get("llm.prompts")
    if isinstance(plain, list):
        return [p for p in (_str(v) for v in plain) if p]
    flattened = {int(m["i"]): v for k, v in span.attributes.items() if (m := _OI_PROMPT.match(k))}
    return [p for p in (_str(flattened[i]) for i in sorted(flattened)) if p]


def message_text(message: dict[str, Any]) -> str | None:
    """An OpenAI-style or GenAI message's text: `content` as text, or its text parts (GenAI `parts`, OpenAI
    content parts `{"type": "text", "text": ...}`, the Responses API's `output_text`)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = message.get("parts") if isinstance(message.get("parts"), list) else content
    if isinstance(parts, list):
        texts = [p.get("content") if isinstance(p.get("content"), str) else p.get("text")
                 for p in parts if isinstance(p, dict) and p.get("type") in ("text", "output_text")]
        return "\n".join(t for t in texts if isinstance(t, str)) or None
    return None


def last_user_message(span: Span, skipped: dict[str, int] | None = None) -> str | None:
    """The last user message a span records as its input, in any convention."""
    oi = oi_messages(span, "input")
    if skipped is not None:
        for kind, count in oi.skipped.items():
            skipped[kind] = skipped.get(kind, 0) + count
    users = [text for role, text in indexed_messages(span, "prompt") if role == "user"]
    users += [text for role, text in oi.items if role == "user"]
    if users:
        return users[-1]
    prompts = oi_prompts(span)
    if prompts:
        return prompts[-1]
    events = [_str(e.attributes.get("content")) for e in span.events if e.name == "gen_ai.user.message"]
    if any(events):
        return [e for e in events if e][-1]
    # Pydantic AI's run span holds the run's messages, also when its model call failed before recording its own.
    parsed = json_or_text(span.attributes.get("gen_ai.input.messages") or span.attributes.get("gen_ai.prompt")
                          or span.attributes.get("pydantic_ai.all_messages") or "")
    if isinstance(parsed, list):
        return user_message_in(parsed)
    return _str(parsed) if parsed else None


def user_message_in(messages: list[Any]) -> str | None:
    """The last user message of a message list as frameworks write it: `{"role": "user", "content": ...}`,
    `["user", "..."]` (LangGraph's tuples), LangChain's `{"type": "human", "content": ...}` or its serialised
    `{"lc": 1, "kwargs": {"type": "human", "content": ...}}`."""
    for message in reversed(messages):
        if isinstance(message, list) and len(message) == 2 and isinstance(message[0], str):
            role, text = message[0], message[1] if isinstance(message[1], str) else None
        elif isinstance(message, dict):
            body = message.get("kwargs") if isinstance(message.get("kwargs"), dict) else message
            role = body.get("role") or body.get("type") or _lc_type(message)
            text = message_text(body)
        else:
            continue
        if isinstance(role, str) and role.lower() in _USER_ROLES and text:
            return text
    return None


def _lc_type(message: dict[str, Any]) -> str | None:
    """A serialised LangChain message's class name: {"id": ["langchain", "schema", "messages", "HumanMessage"]}."""
    ids = message.get("id")
    return ids[-1] if isinstance(ids, list) and ids and isinstance(ids[-1], str) else None


def llm_output(span: Span) -> str | None:
    """The last assistant text an LLM span records as its output, in any convention."""
    attrs = span.attributes
    outputs = oi_messages(span, "output").items
    if outputs:
        return outputs[-1][1]
    output = attrs.get("gen_ai.output.messages")
    if output is not None:
        parsed = json_or_text(output)
        if isinstance(parsed, list):
            texts = [message_text(m) for m in parsed if isinstance(m, dict)]
            return next((t for t in reversed(texts) if t), None)
    indexed = indexed_messages(span, "completion")
    if indexed:
        return indexed[-1][1]
    for event in reversed(span.events):  # the older GenAI message events
        if event.name == "gen_ai.choice":
            message = json_or_text(event.attributes.get("message"))
            text = message_text(message) if isinstance(message, dict) else _str(event.attributes.get("content"))
            if text:
                return text
    completion = attrs.get("gen_ai.completion")
    return _str(completion) if completion else None


def message_output(span: Span) -> str | None:
    """A GenAI workflow or agent span's `gen_ai.output.messages`: the last assistant text."""
    parsed = json_or_text(span.attributes.get("gen_ai.output.messages"))
    if isinstance(parsed, list):
        texts = [message_text(m) for m in parsed if isinstance(m, dict)]
        return next((t for t in reversed(texts) if t), None)
    return None


def json_or_text(value: Any) -> Any:
    # A JSON object, array or string (Traceloop serialises a str output as "\"...\""), else the text.
    if isinstance(value, str) and value[:1] in ("{", "[", '"'):
        try:
            return msgspec.json.decode(value)
        except (msgspec.DecodeError, RecursionError):
            return value
    return value
