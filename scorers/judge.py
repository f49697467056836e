"""LLM-as-judge: groundedness of an answer against its retrieved chunks, through any OpenAI-compatible API.

One call returns the answer's claims, each with a verdict, and a 1-5 score (score <= 2 is a
hallucination). The judged content is untrusted: it is delimited and escaped, and the prompt
tells the judge to treat it as data. The openai client does the retries (exponential backoff
with jitter on 429, 5xx and timeouts, honouring Retry-After); a failed judgment is returned as
data, never raised into the stream.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Annotated, Literal

import msgspec
import openai
from openai import AsyncOpenAI

from ragpulse.collector.events import TraceEvent

PROMPT_VERSION = "groundedness.v1"
HALLUCINATION_AT_MOST = 2
_PLACEHOLDER = re.compile(r"\{(question|context|answer)\}")
_CLOSING_TAG = re.compile(r"</(question|context|answer|chunk)", re.IGNORECASE)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


class Claim(msgspec.Struct):
    claim: str
    verdict: Literal["supported", "contradicted", "not_in_context"]
    reason: str = ""


class GroundednessVerdict(msgspec.Struct):
    claims: list[Claim]
    score: Annotated[int, msgspec.Meta(ge=1, le=5)]
    reason: str = ""


_SCHEMA = {
    "name": "groundedness",
    "strict": True,
    "schema": msgspec.json.schema(GroundednessVerdict),
}


@dataclass(slots=True)
class Judgment:
    """A judgment, or the reason there is none (`error`): failures are data."""

    trace_id: str
    judge_model: str
    prompt_version: str = PROMPT_VERSION
    score: int | None = None
    claims: list[Claim] = field(default_factory=list)
    reason: str = ""
    error: str | None = None  # an exception type, or "invalid_output"
    raw_output: str | None = None  # kept when it could not be parsed, for inspection
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    @property
    def hallucination(self) -> bool:
        return self.score is not None and self.score <= HALLUCINATION_AT_MOST

    @property
    def supported_share(self) -> float | None:
        if not self.claims:
            return None
        return sum(c.verdict == "supported" for c in self.claims) / len(self.claims)


def render_prompt(template: str, event: TraceEvent) -> str:
    """Fill the template in one pass (content is never re-scanned), with closing tags in content escaped."""
    context = "\n".join(
        f'<chunk id="{_escape(c.id or str(i))}">\n{_escape(c.text)}\n</chunk>' for i, c in enumerate(event.chunks or [])
    )
    values = {"question": _escape(event.query), "context": context, "answer": _escape(event.answer)}
    return _PLACEHOLDER.sub(lambda m: values[m[1]], template)


def default_template() -> str:
    return resources.files("ragpulse.scorers").joinpath(f"prompts/{PROMPT_VERSION}.md").read_text(encoding="utf-8")


class GroundednessJudge:
    def __init__(self, client: AsyncOpenAI, model: str, template: str) -> None:
        self._client = client
        self.model = model
        self._template = template
        self._json_schema = True  # dropped once a server refuses response_format json_schema

    async def judge(self, event: TraceEvent) -> Judgment:
        judgment = Judgment(trace_id=event.trace_id, judge_model=self.model)
        started = time.perf_counter()
        try:
            response = await self._complete(render_prompt(self._template, event))
        except openai.OpenAIError as exc:
            judgment.error = type(exc).__name__
            judgment.seconds = time.perf_counter() - started
            return judgment
        judgment.seconds = time.perf_counter() - started
        if response.usage is not None:
            judgment.prompt_tokens = response.usage.prompt_tokens
            judgment.completion_tokens = response.usage.completion_tokens
        text = (response.choices[0].message.content or "") if response.choices else ""
        verdict = _parse(text)
        if verdict is None:
            judgment.error, judgment.raw_output = "invalid_output", text[:4000]
            return judgment
        judgment.score, judgment.claims, judgment.reason = verdict.score, verdict.claims, verdict.reason
        return judgment

    async def _complete(self, prompt: str):  # type: ignore[no-untyped-def]
        messages = [{"role": "user", "content": prompt}]
        if self._json_schema:
            try:
                return await self._client.chat.completions.create(
                    model=self.model, messages=messages, temperature=0,
                    response_format={"type": "json_schema", "json_schema": _SCHEMA},
                )
            except openai.BadRequestError as exc:
                if "response_format" not in str(exc) and "json_schema" not in str(exc):
                    raise
                self._json_schema = False  # this server does not do structured output: parse text
        return await self._client.chat.completions.create(model=self.model, messages=messages, temperature=0)


def _parse(text: str) -> GroundednessVerdict | None:
    for candidate in (text, *(m.group(0) for m in [_JSON_OBJECT.search(text)] if m)):
        try:
            return msgspec.json.decode(candidate.strip(), type=GroundednessVerdict)
        except msgspec.DecodeError:
            continue
    return None


def _escape(text: str) -> str:
    return _CLOSING_TAG.sub(lambda m: "&lt;/" + m[1], text)
