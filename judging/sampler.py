"""Which traces the judge sees, and in what order.

The sampler is a pipeline stage: it never waits. Every judgeable trace (one with chunks, or a
fallback) gets two independent draws, each from its own hash of the trace id (deterministic:
every replica and every restart makes the same choice):

1. the routine sample, first and for every trace alike: the base rate (per app/route overrides),
   decided by the trace id and nothing else, so its hallucination rate is unbiased for the traffic; an
   app whose base rate gives too few judgments a minute for the drift tests is sampled at a higher rate
   (judging/routine_floor.py);
2. for a trace not in the routine sample, its stratum's class at that class's rate. The stratum is
   known at arrival: `always` (the always-judge filter), `flagged` (local scorers: low lexical
   support or a number not in the chunks), `over_refusal` (a fallback whose chunks look relevant)
   or `none`. Each stratum is judged at one known rate, so per-stratum rates weighted by the
   traffic in each stratum give a second unbiased estimate with less variance (docs/rates.md).

Signals that arrive after their trace are evidence, not a sample (their judgments are kept out of
every rate), most urgent first: negative_feedback (thumbs down, rating 1-2, regenerate, abandon),
escalation, rephrase (a rephrase or repeat of the question in its session). The feedback join
(feedback/join.py) holds the recent traces and tells the sampler of them. Sampled traces wait in a bounded queue
ordered by class; when full, a more urgent trace evicts the least urgent one. Every decision is
counted, so coverage is visible. The stage's per-trace work (what is judgeable, the draws, the counters) is in the
compiled core (native/src/sampler.rs), and so is the policy's application to a trace, its base rate and stratum
(native/src/policy.rs); the policy's definition, the floor, the queue and the feedback classes are here.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

import msgspec
import re2
from prometheus_client import CollectorRegistry, Counter

from ragpulse import _native
from ragpulse.collector.events import Chunk, Envelope, TraceEvent
from ragpulse.collector.sampling import in_sample
from ragpulse.collector.telemetry.fast_metrics import CounterFamily, FastCounter
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.collector.telemetry.shared import shared
from ragpulse.feedback.join import FeedbackJoin
from ragpulse.feedback.kept import unpack
from ragpulse.feedback.tables import Listener, Turn
from ragpulse.judging.routine_floor import RoutineFloor

PRIORITIES = (
    "negative_feedback", "escalation", "rephrase", "always", "scorer_flag", "over_refusal", "base_rate",
)
URGENCY = {name: rank for rank, name in enumerate(PRIORITIES)}  # lower is more urgent
FEEDBACK_CLASSES = ("negative_feedback", "escalation", "rephrase")
SKIP_REASONS = ("queue_full", "evicted", "budget_tokens", "budget_cost", "circuit_open", "trace_unknown", "shutdown")
# The strata, known when the trace arrives, and the class that samples each beyond the routine sample.
STRATUM_CLASS: dict[str, str | None] = {"always": "always", "flagged": "scorer_flag", "over_refusal": "over_refusal", "none": None}
# A judgment's sample (JudgeItem.sample): routine (the base rate), targeted (a stratum's class, beyond
# the routine sample) or feedback (judged because of a user signal: evidence, never in a rate).
_TEXT = attrgetter("text")
@dataclass(slots=True)
class JudgeItem:
    event: TraceEvent
    fallback: bool
    priority: str = "base_rate"
    sample: str = "routine"
    stratum: str = "none"
    # Every class the trace qualified for at arrival (the record keeps them, whichever sampled it).
    reasons: tuple[str, ...] = ()
    size: int = 0  # bytes of the event, for the judge queue's byte budget


def _judgeable(event: TraceEvent) -> TraceEvent | None:
    """A trace with context besides its chunks, or chunks without their text, as it is judged (None: nothing to judge
    it against). The sampler's core asks only for these."""
    if event.context:  # what else the model read before answering (tool results): judged against too
        event = msgspec.structs.replace(event, chunks=[*(event.chunks or ()), *event.context], context=None)
    if event.chunks and None in map(_TEXT, event.chunks):
        # Chunks reported without their text (content not captured): judged on the ones with text; with none,
        # there is nothing to judge against, and no bad case may rest on a made-up context.
        with_text = [chunk for chunk in event.chunks if chunk.text is not None]
        if not with_text:
            return None
        event = msgspec.structs.replace(event, chunks=with_text)
    return event


def judge_skipped(registry: CollectorRegistry) -> CounterFamily:
    """The skip family, every priority and reason at zero (rules divide by it). The judge queue, the sampler and the
    workers count into it: had as `shared(registry, judge_skipped)`. Fast counters: a judge that falls behind turns
    away most sampled traces, and the queue counted each on a prometheus_client Counter (a Python call and a lock)."""
    skipped = CounterFamily(
        "ragpulse_judge_skipped_total",
        "Sampled traces not judged, by priority class and reason: queue_full, evicted, budget_tokens, budget_cost, "
        "circuit_open, trace_unknown, shutdown.",
        ["priority", "reason"], registry,
    )
    for priority in PRIORITIES:
        for reason in SKIP_REASONS:
            skipped.labels(priority, reason)
    return skipped


class SamplerMetrics:
    """What the sampler counts, declared beside it on the registry it is handed."""

    def __init__(self, registry: CollectorRegistry, labels: Sequence[str]) -> None:
        self.candidates = CounterFamily(
            "ragpulse_judge_candidates_total",
            "Traces offered to a priority class's draw, the coverage denominator: base_rate every judgeable trace; "
            "a stratum's class the traces of that stratum outside the routine sample; a feedback class every signal.",
            ["priority"], registry,
        )
        self.sampled = CounterFamily(
            "ragpulse_judge_sampled_total", "Traces queued for the judge, by priority class.", ["priority"], registry
        )
        self.raised = Counter(
            "ragpulse_judge_routine_raised_total",
            "Traces in the routine sample only because of judge.min_routine_per_minute: the floor that gives an app's "
            "drift tests enough judgments when its base rate would not.", registry=registry,
        )
        self.stratum_offered = CounterFamily(
            "ragpulse_judge_stratum_offered_total",
            "Judgeable traces by stratum at arrival (always, flagged, over_refusal, none) and fallback (true, false): "
            "N_s of the stratified estimate.",
            [*labels, "fallback", "stratum"], registry,
        )


@dataclass(frozen=True, slots=True)
class TraceFilter:
    """Matches when every given field matches: labels by equality, the question by an RE2 search."""

    app: str | None = None
    route: str | None = None
    model: str | None = None
    release: str | None = None
    query_pattern: str | None = None

    def compile(self) -> Callable[[TraceEvent], bool]:
        wanted = [(name, value) for name in ("app", "route", "model", "release") if (value := getattr(self, name)) is not None]
        pattern = re2.compile(self.query_pattern) if self.query_pattern is not None else None

        def matches(event: TraceEvent) -> bool:
            return all(getattr(event, name) == value for name, value in wanted) and (
                pattern is None or pattern.search(event.query) is not None
            )

        return matches


@dataclass(frozen=True, slots=True)
class SamplingPolicy:
    base_rate: float
    rate_overrides: Mapping[tuple[str | None, str | None], float]  # (app, route), either may be None: any
    class_rates: Mapping[str, float]
    always: Sequence[Callable[[TraceEvent], bool]]
    flag_support_below: float  # lexical groundedness under this flags a trace
    over_refusal_context_at_least: float  # lexical context relevance of a fallback at or above this
    # Its application to a trace, in the compiled core (native/src/policy.rs), which the sampler's core asks directly.
    core: _native.PolicyCore = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "core", _native.PolicyCore(
            self.base_rate, dict(self.rate_overrides), list(self.always), self.flag_support_below,
            self.over_refusal_context_at_least))

    def base_rate_of(self, event: TraceEvent) -> float:
        """The (app, route) override, else (any app, route), else (app, any route), else the base rate."""
        return self.core.base_rate_of(event)

    def stratum(self, envelope: Envelope) -> str:
        """The trace's stratum at arrival (the first that applies): always (an always-judge filter matches), flagged
        (an answer's low lexical support or a number not in its chunks), over_refusal (a fallback whose chunks look
        relevant), none."""
        return self.core.stratum(envelope)


class JudgeQueue:
    """Bounded queue of traces to judge, most urgent first (then oldest first): a FIFO per class.

    When full (`capacity` traces or `max_bytes`), a more urgent trace evicts the least urgent,
    newest ones (counted as skipped, reason evicted); a trace no more urgent than everything
    queued is skipped (queue_full).
    """

    def __init__(self, capacity: int, max_bytes: int, registry: CollectorRegistry) -> None:
        skipped = shared(registry, judge_skipped)
        self._classes: list[deque[JudgeItem]] = [deque() for _ in PRIORITIES]
        self._size = 0
        self._capacity = capacity
        self._max_bytes = max_bytes
        self.bytes = 0
        # Resolved once: when the judge falls behind, this runs for every trace.
        self._full = {p: skipped.labels(p, "queue_full") for p in PRIORITIES}
        self._evicted = {p: skipped.labels(p, "evicted") for p in PRIORITIES}
        self._ready = asyncio.Event()

    def qsize(self) -> int:
        return self._size

    def offer(self, item: JudgeItem) -> bool:
        if not self.room(item.priority, item.size):
            return False
        self.put(item)
        return True

    def room(self, priority: str, size: int) -> bool:
        """Whether a trace of `priority` and `size` bytes goes in, making room for it (evicting less urgent ones, counted);
        False: it does not (counted queue_full). When True, `put` it next: its event need not exist before."""
        urgency = URGENCY[priority]
        classes = self._classes
        while self._size and (self._size >= self._capacity or self.bytes + size > self._max_bytes):
            # The least urgent class holding a trace, looked for from the least urgent end (it is most often the last):
            # a full queue asks this for nearly every trace the sampler draws.
            least = len(classes) - 1
            while not classes[least]:
                least -= 1
            if least <= urgency:
                self._full[priority].inc()
                return False
            evicted = classes[least].pop()
            self._size -= 1
            self.bytes -= evicted.size
            self._evicted[evicted.priority].inc()
        return True

    def put(self, item: JudgeItem) -> None:
        """Queues an item `room` made room for."""
        self._classes[URGENCY[item.priority]].append(item)
        self._size += 1
        self.bytes += item.size
        self._ready.set()

    def drain(self) -> list[JudgeItem]:
        items = [item for queued in self._classes for item in queued]
        for queued in self._classes:
            queued.clear()
        self._size = self.bytes = 0
        return items

    async def get(self) -> JudgeItem:
        while not self._size:
            self._ready.clear()
            await self._ready.wait()
        self._size -= 1
        item = next(queued for queued in self._classes if queued).popleft()
        self.bytes -= item.size
        return item


class JudgeSampler(Listener):
    """Pipeline stage: hands traces to the judge queue; passes every envelope on. Told of negative
    signals by the feedback join, whose traces it keeps for them."""

    def __init__(self, policy: SamplingPolicy, queue: JudgeQueue, registry: CollectorRegistry, guard: LabelGuard,
                 join: FeedbackJoin, *, max_label_sets: int, floor: RoutineFloor) -> None:
        metrics = SamplerMetrics(registry, guard.names)  # labelled as the guard admits
        skipped = shared(registry, judge_skipped)
        self._policy = policy
        self._queue = queue
        self._guard = guard
        self._join = join
        # Label children resolved once: this runs for every trace.
        self._candidates = {p: metrics.candidates.labels(p) for p in PRIORITIES}
        self._sampled = {p: metrics.sampled.labels(p) for p in PRIORITIES}
        self._unknown = {p: skipped.labels(p, "trace_unknown") for p in FEEDBACK_CLASSES}
        self._offered_family = metrics.stratum_offered
        # The stage in the compiled core (native/src/sampler.rs), which calls back for what needs the rest of ragpulse;
        # its children of the offered family by raw label values, fallback and stratum are cached there (bounded).
        classes = ("always", "scorer_flag", "over_refusal")
        traces, pack = join.kept_in
        self._core = _native.SamplerCore(
            TraceEvent, Chunk, Envelope, floor, policy.core, traces, [policy.class_rates.get(cls) for cls in classes], list(guard.names),
            self._candidates["base_rate"], [self._candidates[cls] for cls in classes], metrics.raised,
            4 * max_label_sets, judgeable=_judgeable, offered=self._offered_child, offer=self._sample, pack=pack,
            passed=join.passed, negative=self.negative)
        self.direct = self._core.sample  # what the pipeline's loop calls (collector/pipeline.py)
        guard.on_new_label_set(self._precreate)

    def __call__(self, envelope: Envelope) -> Envelope:
        """Hands a judgeable trace to the judge queue when drawn (native/src/sampler.rs); passes every envelope on."""
        return self._core.sample(envelope)

    def _sample(self, event: TraceEvent, fallback: bool, priority: str, sample: str, stratum: str,
                reasons: tuple[str, ...], size: int) -> bool:
        # The queue's offer as room then put: a full queue turns most traces away, before their item is made.
        if not self._queue.room(priority, size):
            return False
        self._queue.put(JudgeItem(event, fallback, priority, sample, stratum, reasons, size))
        self._sampled[priority].inc()
        return True

    def _precreate(self, labels: tuple[str, ...]) -> None:
        """A new label set's answers offered by stratum (the stratified estimate's weights), at zero."""
        for stratum in STRATUM_CLASS:
            self._offered_family.labels(*labels, "false", stratum)

    def _offered_child(self, event: TraceEvent, fallback: bool, stratum: str) -> FastCounter:
        """The offered family's child of a label set not cached yet, admitted through the guard."""
        labels = self._guard.admit_event(event)
        return self._offered_family.labels(*labels, "true" if fallback else "false", stratum)

    def negative(self, priority: str, turn: Turn) -> None:
        """A signal that an answer failed: judge it, as evidence, if kept and in the class's rate."""
        if not turn.kept:  # the trace is still on its way through the stages before this one
            turn.raised = (*turn.raised, priority)
            return
        if turn.evidence:
            return  # a second signal on an answer already queued as evidence
        self._candidates[priority].inc()
        if not in_sample(turn.trace_id, self._policy.class_rates[priority], priority):
            return
        taken = self._join.take_kept(turn)
        if taken is None:  # not judgeable, or no longer held
            self._unknown[priority].inc()
            return
        kept, size = taken
        # Unpacked only once the queue takes it: a full queue turns most away, and unpacking was half this call's cost.
        if self._queue.room(priority, size):
            self._queue.put(JudgeItem(unpack(kept), turn.fallback, priority, "feedback",
                                      reasons=(priority, *turn.sampled_by), size=size))
            self._sampled[priority].inc()
