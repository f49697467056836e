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

from collections.abc import Sequence

from prometheus_client import CollectorRegistry, Counter, Histogram

from ragpulse import _native
from ragpulse.collector.events import FeedbackEvent
from ragpulse.collector.telemetry.fast_metrics import CounterFamily, FastCounter
from ragpulse.collector.telemetry.labels import LabelGuard

POSITIVE = ("thumbs_up", "rating_high", "copy", "citation_click", "silent_accept")
NEGATIVE = ("thumbs_down", "rating_low", "escalation", "regenerate", "abandon", "rephrase", "repeat")
SIGNALS = (*POSITIVE, *NEGATIVE)
# The judge sampler's class for a negative signal: the answer it judges is judged, as evidence.
PRIORITY_OF = {
    "thumbs_down": "negative_feedback", "rating_low": "negative_feedback", "regenerate": "negative_feedback",
    "abandon": "negative_feedback", "escalation": "escalation", "rephrase": "rephrase", "repeat": "rephrase",
}
TURN_KINDS = ("first", "repeat", "rephrase", "follow_up", "new_topic")
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
# In the compiled core (native/src/questions.rs, asked by the join's session table): a question's normalised text
# (the lower-cased question, runs of anything but a-z, 0-9, ' ’ and CJK ideographs made one space), its terms
# (question_terms of that text) and the things it names (capitalised words inside it, numbers), cached for the
# questions asked recently, and what it is to the session's previous one. turn_kind(previous, question, threshold)
# takes each as (normalised text, terms, named things).
normalised, named_things, turn_kind = _native.normalised, _native.named_things, _native.turn_kind

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
