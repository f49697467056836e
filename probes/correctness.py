"""Answer correctness against a golden question's expected answer, 1-5 with a reason.

The LLM judge compares meanings (prompts/correctness.v1.md: the same facts in other words or units
are correct; more correct detail is no fault), through the judge's client, retries and request
limiter. Without an LLM judge, or when its call fails, the local judge grades (probes/runner.py),
and the question's `correctness_judge` says which one did.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Annotated

import msgspec

from ragpulse.collector.events import TraceEvent
from ragpulse.judging import LlmJudge, parse_verdict, response_format
from ragpulse.judging import Judgment

PROMPT_VERSION = "correctness.v1"
_CLOSING_TAG = re.compile(r"</(question|reference_answer|answer)", re.IGNORECASE)


class CorrectnessVerdict(msgspec.Struct):
    score: Annotated[int, msgspec.Meta(ge=1, le=5)]
    reason: str = ""


_FORMAT = response_format("answer_correctness", CorrectnessVerdict)


def _escape(text: str) -> str:
    return _CLOSING_TAG.sub(lambda m: "&lt;/" + m[1], text)


class LlmCorrectness:
    def __init__(self, llm: LlmJudge) -> None:
        self._llm = llm
        self._template = resources.files("ragpulse.probes").joinpath(f"prompts/{PROMPT_VERSION}.md").read_text(encoding="utf-8")

    def prompt(self, question: str, expected: str, answer: str) -> str:
        values = {"question": _escape(question), "expected": _escape(expected), "answer": _escape(answer)}
        return re.sub(r"\{(question|expected|answer)\}", lambda m: values[m[1]], self._template)

    async def grade(self, question: str, expected: str, answer: str) -> tuple[int | None, str]:
        """(score, reason), or (None, what failed)."""
        done = await self._llm.complete(self.prompt(question, expected, answer), _FORMAT)
        if done.error is not None:
            return None, f"the LLM judge failed: {done.error}"
        verdict = parse_verdict(done.text, CorrectnessVerdict)
        if verdict is None:
            return None, "the LLM judge's answer was not a valid verdict"
        return verdict.score, verdict.reason

    async def judge(self, event: TraceEvent) -> Judgment:
        """The live-traffic judgment (groundedness, relevancy, chunk relevance) of a probe answer."""
        return await self._llm.judge(event, self._llm.prompt(event))

    async def close(self) -> None:
        await self._llm.close()
