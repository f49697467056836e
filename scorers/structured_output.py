"""An answer given as a JSON document (structured outputs, function calling), read as what the user is told.

An assistant called with a JSON schema logs the object its model emitted: `{"answer": …, "citations": […],
"confidence": 0.8}`, `{"response": …, "needs_human": true, "reason": …}`, `{"status": "unanswerable", "message": …}`,
or a tool call, `{"name": "handoff_to_agent", "arguments": {…}}`, `{"function_call": {"name": …, "arguments":
"<escaped JSON>"}}`; bare, in a ```json fence, as one escaped JSON string, or with a line of prose around it ("Here
is the JSON:", 以下是JSON格式的回复：). Read as words, its keys, quotes and braces were clauses ('"needs_human": true'
a claim) and its \\uXXXX escapes words of no language. Read as what the user is told:
- the values of its string fields, in their order, each a sentence of its own: a sentence (its end, four words, or
  Chinese punctuation) alone, its field's name being the schema's (answer, response, explanation, unresolved); a
  short value ("Yes", "订单满300元", a list of names) under its key, "key: value", as an answer template shows it
  (scorers/templates.py then reads a format field's label as no claim, a content field's as the claim's subject);
  never an identifier ("warranty_coverage_judgement", "NO_SUPPORTING_CONTEXT", N/A), nor a field of ids, sources,
  scores, codes or labels (citations, confidence, status, type, topic, …): keys, syntax, ids, enums, numbers and
  booleans are no words of claims;
- follow-up questions offered to the user ("follow_up_questions": […]) are questions, no claims: not read;
- a tool call tells the user nothing: its arguments are the call's (a hand-off's summary is a note to a colleague
  about the user's question, no claim to the user), except a tool whose job is to reply (respond, send_message).
- a prose line around the document is no claim.
The structure may decline by itself, and that is read as the refusal it is: `"answerable": false`, the answer field
null or empty, a status or decision of unanswerable, declined, out_of_scope, deferred…,
`"needs_human": true`, a field of what was left unanswered ("declined", "not_answered", "refusal_reason"), a tool call
that hands off, transfers, escalates or opens a ticket. The judge then reads the told text as it reads a prose answer
beside a refusal (judging/local_judge.py): with no claim of its own it is a refusal; a partial keeps its claims judged.

Only a document is read so: the whole answer one JSON object (or an escaped JSON string of one), with at most a
fence and a short line of prose before and after it. An answer without a "{" pays one substring test; any other (code,
a template's {{placeholder}}, a brace in prose) one failed parse at most, and stays as written.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ragpulse.scorers.templates import field_kind

_CJK_SENTENCE_CHARS = 10
_MAX_PROSE_LINE = 160  # "Sure, here's the response in the requested format:"; a paragraph is no wrapper
_MAX_FENCE = 16  # "\n```json\n"
_FENCE = re.compile(r"```[A-Za-z]*")  # a markdown fence's marks, its language named or not
_DECODER = json.JSONDecoder()

# Fields that hold no words of claims: ids, sources, scores, codes, labels, and what the user asked
_NEVER = frozenset(("citations", "citation", "sources", "source", "references", "refs", "source_ids", "doc_ids",
                    "chunk_ids", "ids", "id", "url", "urls", "link", "links", "link_hint", "confidence", "score",
                    "scores", "probability", "status", "code", "type", "kind", "category", "intent", "topic", "subject",
                    "question", "query", "queue", "priority", "language", "lang", "locale", "next_step", "tags",
                    "labels", "metadata", "meta", "name", "decision", "state", "answer_type", "error_code", "意图", "问题",
                    # questions offered to the user: no claims
                    "follow_up_questions", "followup_questions", "follow_ups", "followups", "suggested_questions",
                    "clarifying_questions", "questions"))
_ANSWER_FIELDS = ("answer", "response", "reply", "final_answer", "回答", "答复", "回复", "答案")
# The structure's own declines
_ABLE = frozenset(("answerable", "is_answerable", "can_answer", "answered", "in_scope", "has_answer", "found"))
_HUMAN = frozenset(("needs_human", "requires_human", "human_handoff", "handoff", "escalate", "escalation",
                    "needs_escalation", "transfer", "refused", "declined", "unanswerable", "out_of_scope", "partial", "拒答",
                    "转人工", "需要人工"))
_LEFT_OPEN = frozenset(("refusal_reason", "decline_reason", "declined", "declined_part", "unanswered",
                        "unanswered_part", "not_answered", "open_question", "open_questions", "unresolved"))
_STATE = frozenset(("status", "decision", "type", "result", "outcome", "answer_type", "state", "answerable", "状态",
                    "结论"))
_DECLINING_STATES = frozenset((
    "unanswerable", "not_answerable", "no_answer", "cannot_answer", "declined", "decline", "refused", "refusal",
    "out_of_scope", "deferred", "escalated", "escalate", "handoff", "needs_human", "insufficient_context",
    "insufficient_information", "no_context", "not_found", "unknown", "partial", "partially_answerable", "n/a", "tbd",
    "pending", "pending_review", "无法回答", "不予回答", "拒答", "转人工", "待确认", "暂不回答", "未知"))
# A short value under a field that signals a decline or a state ("answerable": "no") is the signal, not words told
_SIGNALS = _ABLE | _HUMAN | _LEFT_OPEN | _STATE
_HANDS_OFF = re.compile(r"hand_?off|transfer|escalat|ticket|human|live_?agent|to_agent|callback|route_to|connect_to",
                        re.IGNORECASE)
_REPLIES = re.compile(r"respond|reply|send_message|final_answer|answer_user|say\b", re.IGNORECASE)
# One token of a machine: warranty_coverage_judgement, NO_SUPPORTING_CONTEXT, N/A, a url (not "Yes", "$12.99", 可以)
_IDENTIFIER = re.compile(r"(?=.*[A-Za-z])(?:[\w.-]*[_/][\w./#?=&-]*|[A-Z][A-Z0-9]+)|[a-z][a-z0-9+.-]*://\S+")
_CJK_PUNCTUATION = re.compile(r"[，。！？；：、]")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_SENTENCE_END = re.compile(r"[.!?。！？…]\s*$")


@dataclass(frozen=True, slots=True)
class Told:
    """A structured answer read: what the user is told (fields a sentence apart) and the structure's own decline
    ('"answerable": false', a hand-off's tool name), None when it declines nothing."""

    text: str
    declines: str | None


def told(answer: str) -> Told | None:
    """The answer read as what the user is told when it is a JSON document (the module's docstring), else None."""
    if "{" not in answer:
        return None
    document = _document(answer)
    if document is None:
        return None
    texts: list[str] = []
    call = _tool_call(document)
    if call is not None:
        name, arguments = call
        if _HANDS_OFF.search(name):
            return Told("", f"a tool call that hands the question on ({name})")
        if _REPLIES.search(name) and isinstance(arguments, dict):
            _collect(arguments, texts)
        return Told("\n".join(texts), None)
    _collect(document, texts)
    return Told("\n".join(texts), _declines(document))


def _document(answer: str) -> dict[str, Any] | None:
    """The JSON object the whole answer is, a fence and a short prose line around it allowed; None otherwise."""
    text = answer.strip()
    if text.startswith('"') and text.endswith('"') and "{" in text[:8]:  # the object as one escaped JSON string
        try:
            text = json.loads(text).strip()
        except ValueError:
            return None
    start = text.find("{")
    if start > _MAX_PROSE_LINE + _MAX_FENCE:  # a brace late in an answer: no document (and no scan of what precedes it)
        return None
    before = _FENCE.sub("", text[:start]).strip()
    if "\n" in before or len(before) > _MAX_PROSE_LINE:
        return None
    try:
        document, end = _DECODER.raw_decode(text, start)
    except ValueError:
        return None
    after = _FENCE.sub("", text[end:]).strip()
    if not isinstance(document, dict) or "\n" in after or len(after) > _MAX_PROSE_LINE or "{" in after:
        return None
    return document


def _tool_call(document: dict[str, Any]) -> tuple[str, Any] | None:
    """(the tool's name, its arguments decoded) when the document is a function or tool call, else None."""
    call: Any = document
    for wrapper in ("function_call", "tool_call", "function"):
        if isinstance(call.get(wrapper), dict):
            call = call[wrapper]
    if isinstance(calls := document.get("tool_calls"), list) and calls and isinstance(calls[0], dict):
        call = calls[0].get("function", calls[0])
    name = call.get("name") if isinstance(call, dict) else None
    if not isinstance(name, str):
        return None
    arguments = next((call[k] for k in ("arguments", "parameters", "args", "input") if k in call), None)
    if arguments is None:
        return None
    if isinstance(arguments, str):  # the arguments as an escaped JSON string, as function calling logs them
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return name, None
    return name, arguments


def _collect(value: Any, texts: list[str], key: str = "") -> None:
    """The told strings of value, in order (the module's docstring): a sentence alone, a short value under its key."""
    if isinstance(value, dict):
        for inner, item in value.items():
            if not isinstance(inner, str) or inner.lower() not in _NEVER:
                _collect(item, texts, inner if isinstance(inner, str) else "")
    elif isinstance(value, list):
        if value and all(isinstance(v, str) and not _prose(v) for v in value):
            _collect(", ".join(v.strip() for v in value), texts, key)  # "payment_methods": ["Visa", "PayPal"]
        else:
            for item in value:
                _collect(item, texts, key)
    elif isinstance(value, str) and (said := value.strip()) and not _IDENTIFIER.fullmatch(said):
        name = key.replace("_", " ")
        kind = field_kind(name) if key else "answer"
        if _prose(said) or kind == "answer":
            texts.append(said)
        elif kind is None and key.lower() not in _SIGNALS:
            # "Yes", "订单满300元": what a content field names is part of what is said, as an answer template shows it; a
            # short value of a metadata or format field ("reason": "保修判定") or of a signal's is a label
            texts.append(f"{name}{'：' if _CJK.search(key) else ': '}{said}")


def _prose(text: str) -> bool:
    """Reads as a sentence rather than a label: ends as one, has four words; in Chinese, punctuation or ten characters
    ("检索到的内容未涉及该问题"; not "保修判定", "前往以旧换新专区")."""
    return bool(_SENTENCE_END.search(text) or len(text.split()) >= 4 or _CJK_PUNCTUATION.search(text)
                or len(_CJK.findall(text)) >= _CJK_SENTENCE_CHARS)


def _declines(document: dict[str, Any]) -> str | None:
    """How the structure itself declines (the module's docstring), or None."""
    for key, value in document.items():
        name = key.lower()
        if name in _ABLE and (value is False or _state(value) in ("no", "false")):  # not "answer": "No", an answer
            return f'"{key}": false'
        if name in _HUMAN and value is True:
            return f'"{key}": true'
        if name in _STATE and _state(value) in _DECLINING_STATES:
            return f'"{key}": "{value}"'
        if name in _LEFT_OPEN and value not in (None, "", [], {}, False):
            return f'"{key}"'
        if name == "handoff" and isinstance(value, str) and value.strip():
            return f'"{key}": "{value}"'
    for key in _ANSWER_FIELDS:
        if key in document and (document[key] is None or _state(document[key]) in ("", *_DECLINING_STATES)):
            return f'"{key}": {json.dumps(document[key], ensure_ascii=False)}'
    return None


def _state(value: Any) -> str | None:
    """An enum's value as compared ("Out of scope" is out_of_scope), None when not a string."""
    return value.strip().lower().replace("-", "_").replace(" ", "_") if isinstance(value, str) else None
