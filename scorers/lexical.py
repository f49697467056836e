"""Cheap local scorers: lexical support of the answer by the chunks, on every trace, no LLM.

They are pre-filters with known limits, not verdicts: a paraphrase with other words scores low,
a wrong answer that reuses the chunks' words scores high. What they catch well is a number
that the chunks do not contain ("2 years" when the chunks say "1 year"), and answers that share
nothing with their context.

Text becomes units: content words (3+ letters, not stopwords) and numbers with their unit for
alphabetic scripts; character bigrams for CJK runs (Chinese has no spaces). Number words
("seven", "七") become digits, plural units their singular, so "7 days" and "seven days" match.
Chunk texts recur across traces (the same knowledge base) and questions too (a support bot's FAQ),
so their unit sets are cached. Each text is scored on its first MAX_CHARS characters, which bounds
the cost of a trace.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

from prometheus_client import CollectorRegistry, Gauge

from ragpulse._native import LexicalAnalyser, LexicalCore, LexicalUnits
from ragpulse.collector.events import Envelope, LexicalScores, TraceEvent
from ragpulse.collector.telemetry.fast_metrics import CounterFamily, FastCounter, FastHistogram, HistogramFamily
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.scorers.cjk_simplified import SIMPLIFIED
from ragpulse.scorers.text import CJK_DIGITS
from ragpulse.scorers.text_cache import CompiledTextCache, TextCache

MAX_CHARS = 4_000  # of an answer, a question or a chunk: the cost per trace is bounded, longer texts scored on their start
# The word tables; the compiled core (native/src/lexical.rs) does the scanning with them.
_UNITS = {
    "day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
    "year": "year", "years": "year", "hour": "hour", "hours": "hour", "minute": "minute", "minutes": "minute",
    "%": "%", "percent": "%", "dollar": "usd", "dollars": "usd", "usd": "usd", "euro": "eur", "euros": "eur",
    "eur": "eur", "gb": "gb", "mb": "mb", "kg": "kg", "km": "km",
    "天": "day", "日": "day", "周": "week", "个月": "month", "月": "month", "年": "year", "小时": "hour", "元": "cny",
}
_NUMBER_WORDS = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "fifteen": "15", "twenty": "20", "thirty": "30",
    "forty": "40", "fifty": "50", "sixty": "60", "ninety": "90", "hundred": "100",
}
_CJK_NUMBER_UNITS = ["个月", "天", "年", "周", "小时", "日", "元"]  # what makes a Chinese numeral a number here
_STOPWORDS = frozenset(
    "the and for are but not you your yours with this that these those from have has had was were will would can "
    "could should may might must shall into onto over under about after before then than them they their there "
    "here what when where which who whom why how all any each few more most other some such only own same very "
    "just also our ours its it's i'm we're you're isn't don't can't won't please thank thanks yes sure".split()
)
_ANALYSER = LexicalAnalyser(
    sorted(_UNITS.items(), key=lambda item: len(item[0]), reverse=True),  # the longest spelling first
    _NUMBER_WORDS, _STOPWORDS, CJK_DIGITS, _CJK_NUMBER_UNITS, SIMPLIFIED)  # Traditional text read in Simplified


def units(text: str) -> LexicalUnits:
    """Content words (3+ letters, `[a-z][a-z'’-]{2,}`, not stopwords, a plural's final "s" dropped past 4
    letters), CJK bigrams (a lone CJK character as itself) and numbers with their unit
    (`(\\d+(?:[.,]\\d+)?)(?:-|\\s*)(<unit>)?(?![a-z])`, "," read as "."), after number words became digits:
    "seven days" and "七天" are "7 days" and "7天". Held in the crate; `.words`, `.numbers` (value, unit) and
    `.values` read them as frozensets."""
    return _ANALYSER.units(text)


_NO_QUESTION = units("")
# A number with its unit, in digits or words ("14 days", "two weeks", "$12.99", "3-5", 十四天, 两周): what groundedness
# leaves out of a part whose numbers the judge checked. Read token by token (a pattern of every number word and
# unit tried at every position cost ~50 µs an answer)
_CJK_NUMBER = re.compile(rf"[\d{''.join(CJK_DIGITS)}十百千万]+(?:{'|'.join(_CJK_NUMBER_UNITS)})?")
_ASCII_UNITS = frozenset(u for u in _UNITS if u.isascii())
_EDGES = ".,;:!?()[]{}\"'“”‘’"


def _words_only(part: str) -> str:
    """`part` without its numbers and their units; an ASCII part (most) in the crate, which reads it alike."""
    ascii_part = _ANALYSER.words_only(part)
    if ascii_part is not None:
        return ascii_part
    kept: list[str] = []
    after_number = False
    for token in part.split():
        bare = token.strip(_EDGES).lower().lstrip("$€£¥")
        if bare and (bare[0].isdigit() or bare.split("-", 1)[0] in _NUMBER_WORDS):
            after_number = True
            continue
        if after_number and bare in _ASCII_UNITS:
            after_number = False
            continue
        after_number = False
        kept.append(token)
    text = " ".join(kept)
    return text if text.isascii() else _CJK_NUMBER.sub(" ", text)


def groundedness(answer: str, chunks: Sequence[LexicalUnits], *, checked: Sequence[str] = ()) -> float | None:
    """The fast path's groundedness of `answer` (markers stripped) against its chunks' units: the local judge's model
    reads it as a feature (judging/judge_features.py). `checked`: parts of the answer whose numbers the judge found in
    the context, units converted ("two weeks" for "14 days"), read on their words alone: "2 week" is no number of a
    chunk here. None: the answer has no word or number to score."""
    text = answer[:MAX_CHARS]
    for part in checked:
        text = text.replace(part, _words_only(part), 1)
    return _ANALYSER.score(text, _NO_QUESTION, chunks)[0]


class LexicalMetrics:
    """The lexical scores' distributions, labelled like the fast path's families."""

    def __init__(self, registry: CollectorRegistry, labels: list[str]) -> None:
        shares = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]

        def histogram(name: str, doc: str) -> HistogramFamily:
            return HistogramFamily(name, doc, labels, registry, shares)

        self.local_groundedness = histogram(
            "ragpulse_local_groundedness", "Share of the answer's words and numbers found in its chunks (lexical).")
        self.local_answer_relevancy = histogram(
            "ragpulse_local_answer_relevancy", "Share of the question's words found in the answer (lexical).")
        self.local_context_relevance = histogram(
            "ragpulse_local_context_relevance", "Share of the question's words and numbers found in the chunks (lexical).")
        self.local_number_mismatch = CounterFamily(
            "ragpulse_local_number_mismatch_total", "Answers with a number (and unit) that none of their chunks has.",
            labels, registry)
        self.cache_entries = Gauge("ragpulse_local_scorer_cache_entries",
                                   "Texts whose units the lexical scorer holds, by cache: chunks, questions.", ["cache"],
                                   registry=registry)
        self.cache_bytes = Gauge("ragpulse_local_scorer_cache_bytes", "Estimated bytes of those texts and their units "
                                 "(as local_scorers.chunk_cache_max_bytes counts them), by cache.", ["cache"],
                                 registry=registry)
        self.cache_evicted = CounterFamily(
            "ragpulse_local_scorer_cache_evicted_total",
            "Texts' units the lexical scorer dropped from its cache (chunks, questions) for "
            "local_scorers.chunk_cache_entries or chunk_cache_max_bytes: they are analysed again when they recur.",
            ["cache"], registry)

    def show(self, chunks: CompiledTextCache | TextCache[LexicalUnits],
             questions: CompiledTextCache | TextCache[LexicalUnits]) -> None:
        """The caches' entries and bytes, read when scraped."""
        for cache, texts in (("chunks", chunks), ("questions", questions)):
            self.cache_entries.labels(cache).set_function(texts.__len__)
            self.cache_bytes.labels(cache).set_function(lambda texts=texts: texts.bytes)


def _held(text: str, units_of: LexicalUnits) -> int:
    """A cached text's bytes: the text's and its units' (the crate's estimate of its sets, LexicalUnits.__sizeof__)."""
    return sys.getsizeof(text) + sys.getsizeof(units_of)


class LexicalScorer:
    """Pipeline stage: scores every trace with retrieved chunks and exports the scores."""

    def __init__(self, registry: CollectorRegistry, guard: LabelGuard, cache_entries: int = 10_000,
                 cache_max_bytes: int = 64 * 1024 * 1024, *, max_label_sets: int = 2_000) -> None:
        self._metrics = metrics = LexicalMetrics(registry, list(guard.names))  # labelled as the guard admits
        self._guard = guard
        # Chunk texts recur (one knowledge base) and so may questions (a support bot's FAQ): each has its
        # own least-recently-used cache, so a stream of new questions never pushes out the chunks; a question is
        # kept from its second time, so where every question is new none is held.
        self._chunks = CompiledTextCache(units, _held, max_entries=cache_entries, max_bytes=cache_max_bytes,
                                         evicted=metrics.cache_evicted.labels("chunks"))
        self._questions = CompiledTextCache(units, _held, max_entries=cache_entries, max_bytes=cache_max_bytes,
                                            evicted=metrics.cache_evicted.labels("questions"), on_repeat=True)
        metrics.show(self._chunks, self._questions)
        # The stage in the compiled core, which finds the caches' hits in their tables there; a label set's children are made here
        # (cached there by raw label values, bounded).
        self._core = LexicalCore(_ANALYSER, TraceEvent, LexicalScores, MAX_CHARS, self._chunks, self._questions,
                                  list(guard.names), 4 * max_label_sets, children=self._new_children)
        self.direct = self._core.process  # what the pipeline's loop calls (collector/pipeline.py)

    def score(self, event: TraceEvent, answer_text: str | None = None) -> LexicalScores | None:
        """`answer_text`: the answer without its citation markers (the citations stage's), when it cites:
        "[1]" is a citation, not the number 1 that no chunk has. None: no chunks with text, or no answer."""
        return self._core.score(event, answer_text)

    def __call__(self, envelope: Envelope) -> Envelope:
        """The trace's scores on its envelope, and in its label set's histograms unless it fell back (a refusal's scores
        only serve the sampler: possible over-refusal). In the compiled core (native/src/lexical/stage.rs)."""
        return self._core.process(envelope)

    def _new_children(self, raw: tuple[str | None, ...]) -> tuple[FastHistogram, FastHistogram, FastHistogram, FastCounter]:
        labels, metrics = self._guard.admit(raw)[0], self._metrics
        return (metrics.local_groundedness.labels(*labels), metrics.local_answer_relevancy.labels(*labels),
                metrics.local_context_relevance.labels(*labels), metrics.local_number_mismatch.labels(*labels))
