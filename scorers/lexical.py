"""Cheap local scorers: lexical support of the answer by the chunks, on every trace, no LLM.

They are pre-filters with known limits, not verdicts: a paraphrase with other words scores low,
a wrong answer that reuses the chunks' words scores high. What they catch well is a number
that the chunks do not contain ("2 years" when the chunks say "1 year"), and answers that share
nothing with their context.

Text becomes units: content words (3+ letters, not stopwords) and numbers with their unit for
alphabetic scripts; character bigrams for CJK runs (Chinese has no spaces). Number words
("seven", "七") become digits, plural units their singular, so "7 days" and "seven days" match.
Chunk texts recur across traces (the same knowledge base), so their unit sets are cached.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass

from ragpulse.collector.events import Envelope, TraceEvent
from ragpulse.exporters.labels import LabelGuard
from ragpulse.exporters.metrics import Metrics

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_UNITS = {
    "day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
    "year": "year", "years": "year", "hour": "hour", "hours": "hour", "minute": "minute", "minutes": "minute",
    "%": "%", "percent": "%", "dollar": "usd", "dollars": "usd", "usd": "usd", "euro": "eur", "euros": "eur",
    "eur": "eur", "gb": "gb", "mb": "mb", "kg": "kg", "km": "km",
    "天": "day", "日": "day", "周": "week", "个月": "month", "月": "month", "年": "year", "小时": "hour", "元": "cny",
}
_NUMBER = re.compile(
    r"(\d+(?:[.,]\d+)?)\s*(" + "|".join(sorted(map(re.escape, _UNITS), key=len, reverse=True)) + r")?(?![a-z])"
)
_WORD = re.compile(rf"[a-z][a-z'’-]{{2,}}|[{_CJK}]+")
_LATIN_WORD = re.compile(r"[a-z][a-z'’-]{2,}")
_HAS_CJK = re.compile(rf"[{_CJK}]")
_NUMBER_WORDS = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "fifteen": "15", "twenty": "20", "thirty": "30",
    "forty": "40", "fifty": "50", "sixty": "60", "ninety": "90", "hundred": "100",
}
_CJK_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CJK_NUMBER = re.compile(r"([零一二两三四五六七八九十百]+)(个月|天|年|周|小时|日|元)")


def _cjk_value(numeral: str) -> str:
    """三十五 -> 35, 十五 -> 15, 一百二十 -> 120, 七 -> 7."""
    total = current = 0
    for char in numeral:
        if char == "百":
            total += (current or 1) * 100
            current = 0
        elif char == "十":
            total += (current or 1) * 10
            current = 0
        else:
            current = _CJK_DIGITS[char]
    return str(total + current)
_WORD_NUMBER = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b")
_HAS_NUMBER_WORD = _WORD_NUMBER
_STOPWORDS = frozenset(
    "the and for are but not you your yours with this that these those from have has had was were will would can "
    "could should may might must shall into onto over under about after before then than them they their there "
    "here what when where which who whom why how all any each few more most other some such only own same very "
    "just also our ours its it's i'm we're you're isn't don't can't won't please thank thanks yes sure".split()
)


@dataclass(frozen=True, slots=True)
class Units:
    words: frozenset[str]  # content words and CJK bigrams
    numbers: frozenset[tuple[str, str]]  # (value, unit); unit "" when none


def units(text: str) -> Units:
    text = text.lower()
    if _HAS_NUMBER_WORD.search(text):
        text = _WORD_NUMBER.sub(lambda m: _NUMBER_WORDS[m[1]], text)
    cjk = _HAS_CJK.search(text) is not None
    if cjk:
        text = _CJK_NUMBER.sub(lambda m: _cjk_value(m[1]) + m[2], text)
    numbers = frozenset((value.replace(",", "."), _UNITS.get(unit, "")) for value, unit in _NUMBER.findall(text))
    if not cjk:
        # crude plural folding, the same on both sides: "returns" and "return" meet
        return Units(frozenset(t[:-1] if t[-1] == "s" and len(t) > 4 else t for t in _LATIN_WORD.findall(text)) - _STOPWORDS,
                     numbers)
    words: set[str] = set()
    for token in _WORD.findall(text):
        if token[0].isascii():
            if token not in _STOPWORDS:
                words.add(token[:-1] if len(token) > 4 and token.endswith("s") else token)
        elif len(token) == 1:
            words.add(token)
        else:
            words.update(token[i : i + 2] for i in range(len(token) - 1))  # CJK: character bigrams
    return Units(frozenset(words), numbers)


@dataclass(frozen=True, slots=True)
class LexicalScores:
    groundedness: float | None  # share of the answer's units found in the chunks
    answer_relevancy: float | None  # share of the question's units found in the answer
    context_relevance: float | None  # share of the question's units found in the chunks
    number_mismatch: bool  # the answer has a number (with its unit) that no chunk has


class LexicalScorer:
    """Pipeline stage: scores every trace with retrieved chunks and exports the scores."""

    def __init__(self, metrics: Metrics, guard: LabelGuard, cache_entries: int = 10_000) -> None:
        self._metrics = metrics
        self._guard = guard
        self._cache: OrderedDict[str, Units] = OrderedDict()
        self._cache_entries = cache_entries

    def score(self, event: TraceEvent) -> LexicalScores | None:
        if not event.chunks:
            return None
        context = [self._chunk_units(chunk.text) for chunk in event.chunks]
        if len(context) == 1:
            context_words, context_numbers = context[0].words, context[0].numbers
        else:
            context_words = frozenset().union(*(c.words for c in context))
            context_numbers = frozenset().union(*(c.numbers for c in context))
        answer, question = units(event.answer), units(event.query)
        answer_total = len(answer.words) + len(answer.numbers)
        found = len(answer.words & context_words) + len(answer.numbers & context_numbers)
        context_values = {value for value, _ in context_numbers}
        # A number counts as a mismatch when neither it with its unit nor (unit-less) its value is there.
        mismatch = any(
            (value, unit) not in context_numbers and not (unit == "" and value in context_values)
            for value, unit in answer.numbers
        )
        question_total = len(question.words) + len(question.numbers)
        return LexicalScores(
            groundedness=found / answer_total if answer_total else None,
            answer_relevancy=len(question.words & answer.words) / len(question.words) if question.words else None,
            context_relevance=(len(question.words & context_words) + len(question.numbers & context_numbers)) / question_total
            if question_total
            else None,
            number_mismatch=mismatch,
        )

    def _chunk_units(self, text: str) -> Units:
        cached = self._cache.get(text)
        if cached is None:
            cached = self._cache[text] = units(text)
            if len(self._cache) > self._cache_entries:
                self._cache.popitem(last=False)
        return cached

    def __call__(self, envelope: Envelope) -> Envelope:
        event = envelope.event
        if isinstance(event, TraceEvent) and envelope.fallback_rule is None:
            scores = self.score(event)
            if scores is not None:
                labels = self._guard.admit_event(event)
                metrics = self._metrics
                if scores.groundedness is not None:
                    metrics.local_groundedness.labels(*labels).observe(scores.groundedness)
                if scores.answer_relevancy is not None:
                    metrics.local_answer_relevancy.labels(*labels).observe(scores.answer_relevancy)
                if scores.context_relevance is not None:
                    metrics.local_context_relevance.labels(*labels).observe(scores.context_relevance)
                if scores.number_mismatch:
                    metrics.local_number_mismatch.labels(*labels).inc()
        return envelope
