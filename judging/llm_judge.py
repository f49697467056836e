"""LLM-as-judge through any OpenAI-compatible API: groundedness, answer relevancy and context
relevance of one answer, in one call.

The call returns the answer's claims with a verdict each and the chunks that support it (context
utilisation), a 1-5 groundedness score (score <= 2 is a hallucination), a 1-5 answer-relevancy score,
a 0-3 relevance per chunk, whether each cited sentence is supported by the chunks it cites, and, for
an agent whose searches are not the question itself, whether they read the question well: the information
of the naive design (one call to split claims, one per claim, one per metric) for a fraction of the tokens.
The judged content is untrusted: it is delimited and escaped, and the prompt tells the judge to treat it as
data. The prompt numbers chunks and cited sentences from 1, as answers cite chunks ("[1]") and ragpulse shows
them; the judge's numbers are mapped back to the indices (from 0) that judgments and records hold.

Retries are ragpulse's own, not the openai client's, so that every HTTP request passes the
request-rate limiter: exponential backoff with full jitter on 408, 409, 429, 5xx, timeouts and
connection errors, honouring Retry-After. A failed judgment is returned as data (`error`),
never raised into the stream.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from dataclasses import dataclass
from importlib import resources
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import msgspec

from ragpulse.collector.events import TraceEvent
from ragpulse.judging.budget import RequestRateLimiter
from ragpulse.judging.verdicts import MAX_JUDGED_CITATIONS, CitationVerdict, Claim, ClaimVerdict, Judgment, searches_differ
from ragpulse.scorers.citations import Citations, CitedSentence, event_citations

if TYPE_CHECKING:
    from openai import AsyncOpenAI

BUILTIN_PROMPT = "judgment.v3"
RETRYABLE_STATUS = frozenset({408, 409, 429})
MAX_BACKOFF_SECONDS = 30.0
_PLACEHOLDER = re.compile(r"\{(question|context|answer|searches|citations)\}")
_CLOSING_TAG = re.compile(r"</(question|context|answer|chunk|searches|search|citations|cited)", re.IGNORECASE)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
T = TypeVar("T")


Number = Annotated[int, msgspec.Meta(ge=1)]  # a chunk or a cited sentence as the prompt numbers it: from 1


class CitationCheck(msgspec.Struct):
    """The judge's answer about one cited sentence it was shown (by its number)."""

    index: Number
    supported: bool
    reason: str = ""


class Scored(msgspec.Struct):
    score: Annotated[int, msgspec.Meta(ge=1, le=5)]
    reason: str = ""


class ChunkRelevance(msgspec.Struct):
    index: Number
    relevance: Annotated[int, msgspec.Meta(ge=0, le=3)]


class ContextVerdict(msgspec.Struct):
    chunks: list[ChunkRelevance]
    reason: str = ""


class JudgedClaim(msgspec.Struct):
    """A claim as the judge answers it: the chunks that support it by their numbers."""

    claim: str
    verdict: ClaimVerdict
    reason: str = ""
    chunks: list[Number] = []


class JudgeVerdict(msgspec.Struct):
    """What the judge must answer; every field is validated."""

    claims: list[JudgedClaim]
    groundedness: Scored
    answer_relevancy: Scored
    context_relevance: ContextVerdict
    citations: list[CitationCheck] = []  # one per cited sentence shown
    search: Scored | None = None  # an agent's searches as a reading of the question; null when none shown


def _strict_schema(node: Any) -> Any:
    """Structured-output schemas want every property required and no others allowed."""
    if isinstance(node, dict):
        node = {key: _strict_schema(value) for key, value in node.items()}
        if node.get("type") == "object" and "properties" in node:
            node["required"] = list(node["properties"])
            node["additionalProperties"] = False
        return node
    if isinstance(node, list):
        return [_strict_schema(value) for value in node]
    return node


@dataclass(slots=True)
class Completion:
    text: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0  # HTTP requests made, retries included
    seconds: float = 0.0
    error: str | None = None


def render_prompt(template: str, event: TraceEvent, cited: Citations | None = None) -> str:
    """Fill the template in one pass (content is never re-scanned), with closing tags in content escaped.
    Chunks and cited sentences are numbered from 1; searches are shown only when they are not the question."""
    context = "\n".join(
        f'<chunk index="{n}" id="{_escape(c.id or str(n))}">\n{_escape(c.text or "")}\n</chunk>'
        for n, c in enumerate(event.chunks or [], start=1)
    )
    queries = event.retrieval_queries if searches_differ(event.query, event.retrieval_queries) else None
    searches = "\n".join(f"<search>{_escape(q)}</search>" for q in queries or []) or "(none)"
    shown = [s for s in judged_citations(cited) if s.chunks]
    citations = "\n".join(f'<cited index="{n}" chunks="{",".join(str(i + 1) for i in s.chunks)}">{_escape(s.sentence)}</cited>'
                           for n, s in enumerate(shown, start=1)) or "(none)"
    values = {"question": _escape(event.query), "context": context, "answer": _escape(event.answer),
              "searches": searches, "citations": citations}
    return _PLACEHOLDER.sub(lambda m: values[m[1]], template)


def judged_citations(cited: Citations | None) -> tuple[CitedSentence, ...]:
    """The cited sentences that get a verdict: the first MAX_JUDGED_CITATIONS."""
    return cited.sentences[:MAX_JUDGED_CITATIONS] if cited is not None else ()


def set_citation_verdicts(judgment: Judgment, cited: Citations | None, checks: Mapping[int, tuple[str, str]]) -> None:
    """Each judged cited sentence with its verdict: the judge's (verdict, reason) for each sentence shown it, by
    its index among those shown (from 0); dangling for those that cite no retrieved chunk; error where the judge
    gave none. The cited sentences past MAX_JUDGED_CITATIONS are counted as not judged."""
    judgment.citations = _citation_verdicts(judged_citations(cited), checks)
    judgment.citations_not_judged = len(cited.sentences) - len(judgment.citations) if cited is not None else 0


def _citation_verdicts(judged: tuple[CitedSentence, ...],
                       checks: Mapping[int, tuple[str, str]]) -> list[CitationVerdict]:
    verdicts, shown = [], 0
    for sentence in judged:
        chunks, dangling = list(sentence.chunks), list(sentence.dangling)
        if not chunks:
            verdicts.append(CitationVerdict(sentence.sentence, [], dangling, "dangling", "it cites no retrieved chunk"))
            continue
        verdict, reason = checks.get(shown, ("error", "the judge gave no verdict for it"))
        shown += 1
        verdicts.append(CitationVerdict(sentence.sentence, chunks, dangling, verdict, reason))  # type: ignore[arg-type]
    return verdicts


def builtin_template() -> str:
    return resources.files("ragpulse.judging").joinpath(f"prompts/{BUILTIN_PROMPT}.md").read_text(encoding="utf-8")


def estimate_prompt_tokens(prompt: str) -> int:
    """An upper estimate without a tokenizer: about 4 bytes a token in English, 3 in CJK."""
    return len(prompt.encode()) // 3 + 1


class LlmJudge:
    def __init__(
        self,
        client: AsyncOpenAI,
        model: str,
        template: str,
        prompt_version: str,
        *,
        limiter: RequestRateLimiter,
        max_retries: int,
        max_completion_tokens: int,
        on_retry: Callable[[str], None] | None = None,  # called with the error type of each retried attempt
    ) -> None:
        self._client = client
        self.model = model
        self.prompt_version = prompt_version
        self.max_completion_tokens = max_completion_tokens
        self._template = template
        self._limiter = limiter
        self._max_retries = max_retries
        self._on_retry = on_retry
        self._json_schema = True  # dropped once a server refuses response_format json_schema

    def prompt(self, event: TraceEvent) -> str:
        return render_prompt(self._template, event, event_citations(event))

    async def close(self) -> None:
        await self._client.close()

    async def judge(self, event: TraceEvent, prompt: str) -> Judgment:
        judgment = Judgment(trace_id=event.trace_id, judge_model=self.model, prompt_version=self.prompt_version)
        done = await self.complete(prompt, _RESPONSE_FORMAT)
        judgment.seconds, judgment.requests = done.seconds, done.requests
        judgment.prompt_tokens, judgment.completion_tokens = done.prompt_tokens, done.completion_tokens
        if done.error is not None:
            judgment.error = done.error
            return judgment
        verdict = parse_verdict(done.text, JudgeVerdict)
        if verdict is None:
            judgment.error, judgment.raw_output = "invalid_output", done.text[:4000]
            return judgment
        judgment.groundedness, judgment.groundedness_reason = verdict.groundedness.score, verdict.groundedness.reason
        chunks = len(event.chunks or [])
        # The judge's numbers (from 1) as indices (from 0); a number naming no chunk is dropped.
        judgment.claims = [Claim(c.claim, c.verdict, c.reason, [n - 1 for n in c.chunks if n <= chunks])
                           for c in verdict.claims]
        judgment.answer_relevancy = verdict.answer_relevancy.score
        judgment.answer_relevancy_reason = verdict.answer_relevancy.reason
        relevance: list[int | None] = [None] * chunks
        for chunk in verdict.context_relevance.chunks:
            if chunk.index <= chunks:
                relevance[chunk.index - 1] = chunk.relevance
        judgment.chunk_relevance = relevance
        judgment.context_relevance_reason = verdict.context_relevance.reason
        supported = [c for c in judgment.claims if c.verdict == "supported"]
        named = {i for c in supported for i in c.chunks}
        if named or not supported:  # a judge that names no chunk for any supported claim says nothing of use
            judgment.used_chunks = sorted(named)
        set_citation_verdicts(judgment, event_citations(event), {
            check.index - 1: ("supported" if check.supported else "unsupported", check.reason) for check in verdict.citations})
        if verdict.search is not None and searches_differ(event.query, event.retrieval_queries):
            judgment.search_relevance, judgment.search_relevance_reason = verdict.search.score, verdict.search.reason
        return judgment

    async def complete(self, prompt: str, response_format: dict[str, Any]) -> Completion:
        """One prompt, its text answer and usage; a failure is `error` (an exception type), never raised."""
        import openai  # loaded with the client (app/service.py): a sidecar without an LLM judge never needs it

        done = Completion()
        started = time.perf_counter()
        try:
            response = await self._complete(prompt, done, response_format)
        except openai.OpenAIError as exc:
            done.error = type(exc).__name__
            done.seconds = time.perf_counter() - started
            return done
        done.seconds = time.perf_counter() - started
        if response.usage is not None:
            done.prompt_tokens = response.usage.prompt_tokens
            done.completion_tokens = response.usage.completion_tokens
        done.text = (response.choices[0].message.content or "") if response.choices else ""
        return done

    async def _complete(self, prompt: str, done: Completion, response_format: dict[str, Any]):  # type: ignore[no-untyped-def]
        """One HTTP request per limiter slot: retries, and the plain retry after a server refused
        structured output, each take their own."""
        import openai

        attempt = 0
        while True:
            await self._limiter.acquire()
            done.requests += 1
            try:
                return await self._create(prompt, response_format)
            except openai.BadRequestError as exc:
                if not self._json_schema or ("response_format" not in str(exc) and "json_schema" not in str(exc)):
                    raise
                self._json_schema = False  # this server does not do structured output: parse text from now on
                continue
            except (openai.APIStatusError, openai.APITimeoutError, openai.APIConnectionError) as exc:
                status = getattr(exc, "status_code", None)
                retryable = status is None or status in RETRYABLE_STATUS or status >= 500
                if not retryable or attempt >= self._max_retries:
                    raise
                # What the retry needs, not the exception: kept, its traceback would hold this frame (a cycle).
                error, retry_after = type(exc).__name__, _retry_after(exc)
            finally:
                self._limiter.release()
            if self._on_retry is not None:
                self._on_retry(error)
            await asyncio.sleep(retry_after or random.uniform(0, min(MAX_BACKOFF_SECONDS, 0.5 * 2**attempt)))
            attempt += 1

    async def _create(self, prompt: str, response_format: dict[str, Any]):  # type: ignore[no-untyped-def]
        options: dict[str, Any] = {"model": self.model, "messages": [{"role": "user", "content": prompt}],
                                   "temperature": 0, "max_tokens": self.max_completion_tokens}
        if self._json_schema:
            options["response_format"] = response_format
        return await self._client.chat.completions.create(**options)


def _retry_after(exc: Exception) -> float | None:
    """Seconds from Retry-After (or retry-after-ms), capped; None when the server gave none."""
    response = getattr(exc, "response", None)
    if response is None:
        return None
    headers = response.headers
    try:
        if "retry-after-ms" in headers:
            return min(MAX_BACKOFF_SECONDS, float(headers["retry-after-ms"]) / 1000)
        if "retry-after" in headers:
            return min(MAX_BACKOFF_SECONDS, float(headers["retry-after"]))
    except ValueError:
        return None  # an HTTP date: rare for APIs; back off instead
    return None


def parse_verdict(text: str, kind: type[T]) -> T | None:
    """The verdict in a model's text: all of it, or the JSON object inside it (chat models add words)."""
    for candidate in (text, *(m.group(0) for m in [_JSON_OBJECT.search(text)] if m)):
        try:
            return msgspec.json.decode(candidate.strip(), type=kind)
        except msgspec.DecodeError:
            continue
    return None


def response_format(name: str, kind: type) -> dict[str, Any]:
    """A strict structured-output request for answers of `kind`."""
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": _strict_schema(msgspec.json.schema(kind))}}


_RESPONSE_FORMAT = response_format("rag_judgment", JudgeVerdict)


def _escape(text: str) -> str:
    return _CLOSING_TAG.sub(lambda m: "&lt;/" + m[1], text)
