"""Satisfaction signals: what users do after an answer, attributed to that answer.

Explicit signals come from feedback events (thumbs, ratings, escalation, copy, citation click,
regenerate, abandon); implicit ones are derived from the stream by the feedback join
(feedback/join.py): a rephrase or a repeat of the question in the same session soon after, an
escalation route after an answer, and a silent accept (the session went idle after an answer
that got no signal at all). Every signal is counted by the labels of the answer it judges, never
combined into one number here: the proxy is a ratio of these counters in PromQL
(docs/satisfaction.md).

Turn classification (previous question -> this one, same session, within the rephrase window):
repeat (the same text once normalised), follow_up (a follow-up opener such as "and", "what
about", 那/还有, or a closing 呢, that brings a new term: "and for AirPods?"), rephrase
(similar terms: the Dice coefficient of the questions' term sets at or above the threshold), else
new_topic. Terms: stemmed English content words (Snowball); for Chinese, the characters other than
function characters. Limits, measured on tests/data/session_turns.yaml:
docs/satisfaction.md.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence

from prometheus_client import CollectorRegistry, Counter, Histogram

from ragpulse.collector.events import FeedbackEvent
from ragpulse.collector.telemetry.fast_metrics import CounterFamily, FastCounter
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.scorers.text import CJK, question_terms

POSITIVE = ("thumbs_up", "rating_high", "copy", "citation_click", "silent_accept")
NEGATIVE = ("thumbs_down", "rating_low", "escalation", "regenerate", "abandon", "rephrase", "repeat")
SIGNALS = (*POSITIVE, *NEGATIVE)
# The judge sampler's class for a negative signal: the answer it judges is judged, as evidence.
PRIORITY_OF = {
    "thumbs_down": "negative_feedback", "rating_low": "negative_feedback", "regenerate": "negative_feedback",
    "abandon": "negative_feedback", "escalation": "escalation", "rephrase": "rephrase", "repeat": "rephrase",
}
TURN_KINDS = ("first", "repeat", "rephrase", "follow_up", "new_topic")
# A question's normalised text, its terms and what it names (named_things).
Analysis = tuple[str, frozenset[str], frozenset[str]]
_CACHED_QUESTION_BYTES = 300  # an entry besides its strings: key slot, tuple, frozenset
_SIMPLE_KINDS = {"escalation": "escalation", "copy": "copy", "citation_click": "citation_click",
                 "regenerate": "regenerate", "abandon": "abandon"}


def explicit_signal(event: FeedbackEvent) -> str | None:
    """The signal a feedback event gives, or None (a rating of 3, a review, an unknown thumbs value)."""
    kind, value = event.kind, event.value
    if kind == "thumbs":
        return "thumbs_up" if value == "up" else "thumbs_down" if value == "down" else None
    if kind == "rating":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return "rating_high" if value >= 4 else "rating_low" if value <= 2 else None
    return _SIMPLE_KINDS.get(kind)


def rating_of(event: FeedbackEvent) -> float | None:
    value = event.value
    if event.kind != "rating" or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


# -- turn classification -------------------------------------------------------------------------

_NORMALISE = re.compile(rf"[^a-z0-9'’{CJK}]+")
# On normalised text: an English opener, a Chinese one, or a closing 呢 ("and for AirPods?", 那手机呢？).
# A capitalised word of two letters or more that does not open the question or a sentence in it, or a number.
_NAMED = re.compile(r"(?<!^)(?<![.!?。！？]\s)(?<![.!?。！？])\b[A-Z][A-Za-z0-9+'’]+|\d+(?:[.,]\d+)*")
_FOLLOW_UP = re.compile(
    r"^(?:and|also|plus|what about|how about|what if|same for|then|but what about|and what about|what else)\b"
    r"|^(?:那|那么|还有|另外|如果|顺便|再问)|呢$"
)


def normalised(question: str) -> str:
    return _NORMALISE.sub(" ", question.lower()).strip()


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Dice coefficient of two term sets: shared terms over the mean size (0 when either is empty)."""
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


class QuestionCache:
    """normalised() and question_terms() of recent questions: users ask the same few questions (a
    support bot's FAQ), so most turns find theirs here. Bounded in entries and in bytes (the
    question's characters, four bytes each at most, twice: the text and its terms); least recently
    used first out, counted."""

    def __init__(self, max_entries: int, max_bytes: int, evicted: FastCounter) -> None:
        self._items: OrderedDict[str, tuple[Analysis, int]] = OrderedDict()
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self.bytes = 0
        self._evicted = evicted

    def __len__(self) -> int:
        return len(self._items)

    def analyse(self, question: str) -> Analysis:
        items = self._items
        hit = items.get(question)
        if hit is not None:
            items.move_to_end(question)
            return hit[0]
        text = normalised(question)
        terms = question_terms(text)
        named = named_things(question)
        size = _CACHED_QUESTION_BYTES + 12 * len(question) + 64 * (len(terms) + len(named))
        items[question] = ((text, terms, named), size)
        self.bytes += size
        while len(items) > self._max_entries or self.bytes > self._max_bytes:
            self.bytes -= items.popitem(last=False)[1][1]
            self._evicted.inc()
        return text, terms, named


def named_things(question: str) -> frozenset[str]:
    """What a question names beyond its frame, on the raw text: capitalised words inside it (France, AirPods,
    not the opening word) and numbers (iPhone 15, order 123456), lower-cased."""
    return frozenset(match.group(0).lower() for match in _NAMED.finditer(question.strip()))


def is_follow_up_opener(question: str) -> bool:
    """On a normalised() question: a follow-up opener ("and", "what about", 那, 还有, a closing 呢)."""
    return _FOLLOW_UP.search(question) is not None


def turn_kind(previous: Analysis, question: Analysis, threshold: float) -> str:
    """repeat, follow_up, rephrase or new_topic: what this question is to the session's previous one (each
    as QuestionCache.analyse gives it). The same frame about another named thing ("the capital of France",
    then "the capital of Germany"; iPhone 15, then iPhone 16) is a new question, not a rephrase."""
    (previous_text, previous_terms, previous_named), (text, terms, named) = previous, question
    if previous_text == text:
        return "repeat"
    if is_follow_up_opener(text) and not terms <= previous_terms:
        return "follow_up"
    if previous_named - named and named - previous_named:
        return "new_topic"
    if similarity(terms, previous_terms) >= threshold:
        return "rephrase"
    return "new_topic"


# -- metrics -------------------------------------------------------------------------------------

class SatisfactionMetrics:
    """The signals, by the labels of the answer they judge; declared on the registry handed in."""

    def __init__(self, registry: CollectorRegistry, labels: Sequence[str]) -> None:
        self.signals = CounterFamily(
            "ragpulse_satisfaction_signals_total",
            "Satisfaction signals by the labels of the answer they judge and whether it was a fallback: explicit "
            "(thumbs_up, thumbs_down, rating_high 4-5, rating_low 1-2, escalation, copy, citation_click, regenerate, "
            "abandon) and implicit (rephrase, repeat, escalation after an answer by route, silent_accept).",
            [*labels, "fallback", "signal"], registry,
        )
        self.ratings = Histogram(
            "ragpulse_satisfaction_rating", "Ratings (feedback kind rating) by the labels of the answer they rate.",
            labels, buckets=(1, 2, 3, 4, 5), registry=registry,
        )
        self.judged_signals = Counter(
            "ragpulse_satisfaction_judged_signals_total",
            "Signals on judged answers: by the judgment's sample (routine and targeted are samples; feedback was judged "
            "because of a signal), its groundedness verdict and the bad-case stage (none: not a bad case). Divide by "
            "ragpulse_judge_judgments_total for the share of hallucinated answers that got a thumbs down.",
            ["app", "signal", "sample", "verdict", "stage"], registry=registry,
        )
        self.turns = CounterFamily(
            "ragpulse_session_turns_total",
            "Questions in sessions by what they are to the session's previous question: first (none within the "
            "rephrase window), repeat, rephrase, follow_up, new_topic.",
            ["kind"], registry,
        )


class SignalCounter:
    """Counts a signal by the raw labels of its answer; children resolved once per label set (bounded)."""

    def __init__(self, registry: CollectorRegistry, guard: LabelGuard, *, max_cached: int) -> None:
        self._metrics = metrics = SatisfactionMetrics(registry, guard.names)  # labelled as the guard admits
        self._guard = guard
        self._children: dict[tuple[object, ...], FastCounter] = {}
        self.answered_labels: set[tuple[str | None, ...]] = set()  # raw label sets the guard has admitted
        self._max_cached = max_cached
        self.turn_counters = {kind: metrics.turns.labels(kind) for kind in TURN_KINDS}
        self._app_at = guard.names.index("app") if "app" in guard.names else None
        guard.on_new_label_set(self._precreate)

    def answered(self, labels: tuple[str | None, ...]) -> None:
        """The first answer with these raw labels (not in `answered_labels`): admitted, so that the label set's
        series exist from now on (`_precreate`, and every other component's)."""
        if len(self.answered_labels) >= self._max_cached:
            self.answered_labels.clear()
        self.answered_labels.add(labels)
        self._guard.admit(labels)

    def _precreate(self, admitted: tuple[str, ...]) -> None:
        """A new label set's signals at zero, so that a rate over them is 0, not no data, before the first user
        reacts, and a signal's first count is not its series' first sample."""
        for signal in SIGNALS:
            for fallback in ("false", "true"):
                self._metrics.signals.labels(*admitted, fallback, signal)

    def count(self, labels: tuple[str | None, ...], fallback: bool, signal: str) -> None:
        self._child(labels, fallback, signal).inc()

    def _child(self, labels: tuple[str | None, ...], fallback: bool, signal: str) -> FastCounter:
        key = (labels, fallback, signal)
        child = self._children.get(key)
        if child is None:
            if len(self._children) >= self._max_cached:
                self._children.clear()
            admitted, _ = self._guard.admit(labels)
            child = self._children[key] = self._metrics.signals.labels(*admitted, "true" if fallback else "false", signal)
        return child

    def rating(self, labels: tuple[str | None, ...], value: float) -> None:
        admitted, _ = self._guard.admit(labels)
        self._metrics.ratings.labels(*admitted).observe(value)

    def judged(self, labels: tuple[str | None, ...], signal: str, sample: str, verdict: str, stage: str) -> None:
        app = self._guard.admit(labels)[0][self._app_at] if self._app_at is not None else "all"
        self._metrics.judged_signals.labels(app, signal, sample, verdict, stage).inc()
