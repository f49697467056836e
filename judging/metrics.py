"""Judging's telemetry: coverage (judged, skipped), verdicts and scores, bad cases by stage, the LLM judge's
calls, tokens, cost and budgets, and the counters a stratified rate estimate needs.

`JudgmentMetrics.record` is the metrics consumer of a judged trace (judging/exit.py), with the families labelled
like the fast path's; the rest is counted where it happens (the workers, the judge queue, the sampler), into the
registry's one JudgeMetrics (`shared`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from ragpulse.collector.telemetry.fast_metrics import CounterFamily, HistogramFamily
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.collector.telemetry.shared import shared
from ragpulse.judging.attribution import STAGES
from ragpulse.judging.exit import JudgedTrace
from ragpulse.judging.sampler import PRIORITIES, STRATUM_CLASS, judge_skipped
from ragpulse.judging.verdicts import IRRELEVANT_AT_MOST, RELEVANT_CHUNK_AT_LEAST

JUDGMENT_VERDICTS = {
    "groundedness": ("grounded", "hallucination", "uncertain", "error"),
    "answer_relevancy": ("relevant", "irrelevant", "fallback", "error"),
    "context_relevance": ("relevant", "irrelevant", "error"),
    "search_relevance": ("relevant", "irrelevant"),  # an agent's searches as a reading of the question
}


class JudgeMetrics:
    """The judge's own counts, one set per registry (`shared(registry, JudgeMetrics)`): the workers, the judgment
    cache and the LLM judges' retries count into it; the skips are the sampler's family (judge_skipped)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        def counter(name: str, doc: str, *labelnames: str) -> Counter:
            return Counter(name, doc, labelnames, registry=registry)

        def gauge(name: str, doc: str, *labelnames: str) -> Gauge:
            return Gauge(name, doc, labelnames, registry=registry)

        self.judge_judged = counter("ragpulse_judge_judged_total", "Traces judged (cache hits included), by priority class.", "priority")
        self.judge_skipped = shared(registry, judge_skipped)
        self.judge_requests = counter(
            "ragpulse_judge_requests_total", "LLM judge calls, by judge model and outcome (ok or the error).", "judge_model", "outcome"
        )
        self.judge_http_requests = counter(
            "ragpulse_judge_http_requests_total", "HTTP requests to the judge API, retries included.", "judge_model"
        )
        self.judge_retries = counter("ragpulse_judge_retries_total", "Judge requests retried, by error.", "judge_model", "error")
        self.judge_duration = Histogram(
            "ragpulse_judge_request_duration_seconds", "Time of a judge call, retries included.", ["judge_model"],
            buckets=(0.25, 0.5, 1, 2, 4, 8, 15, 30, 60), registry=registry,
        )
        self.judge_tokens = counter("ragpulse_judge_tokens_total", "Tokens spent by the judge, by kind.", "judge_model", "kind")
        self.judge_cost = counter(
            "ragpulse_judge_cost_total", "What the judge cost, in the currency of judge.prices.", "judge_model"
        )
        self.judge_budget_remaining = gauge(
            "ragpulse_judge_budget_remaining",
            "What is left of each configured budget: requests_per_minute, tokens_per_hour, tokens_per_day, cost_per_hour, "
            "cost_per_day.",
            "budget",
        )
        self.judge_queue_depth = gauge("ragpulse_judge_queue_depth", "Traces waiting for the judge.")
        self.judge_cache_hits = counter(
            "ragpulse_judge_cache_hits_total", "Judgments reused for an identical question, chunks and answer (no call)."
        )
        self.judge_cache_evicted = counter(
            "ragpulse_judge_cache_evicted_total",
            "Judgments dropped from the judgment cache for judge.cache_entries or judge.cache_max_bytes: an identical "
            "trace after it is judged again.",
        )
        self.judge_cache_entries = gauge("ragpulse_judge_cache_entries", "Judgments the judgment cache holds.")
        self.judge_cache_bytes = gauge("ragpulse_judge_cache_bytes",
                                       "Estimated bytes of those judgments (as judge.cache_max_bytes counts them).")
        self.judge_circuit_state = gauge("ragpulse_judge_circuit_state", "The judge's circuit breaker: 0 closed, 1 open, 2 half open.")
        self.judge_self_judging = counter(
            "ragpulse_judge_self_judging_total", "LLM judgments where the judge model is the model that answered (biased)."
        )
        for priority in PRIORITIES:  # coverage series that rules divide by exist at zero from the first scrape
            self.judge_judged.labels(priority=priority)

    def precreate_llm(self, llm_model: str) -> None:
        """The LLM judge's series at zero, for a sidecar that has one."""
        self.judge_requests.labels(judge_model=llm_model, outcome="ok")
        self.judge_http_requests.labels(judge_model=llm_model)
        for kind in ("prompt", "completion"):
            self.judge_tokens.labels(judge_model=llm_model, kind=kind)
        self.judge_cost.labels(judge_model=llm_model)


def count_retries(registry: CollectorRegistry, judge_model: str) -> Callable[[str], None]:
    """An LLM judge's on_retry: each retried request counted by error on the registry's judge families."""
    retries = shared(registry, JudgeMetrics).judge_retries
    return lambda error: retries.labels(judge_model=judge_model, error=error).inc()


class JudgmentMetrics:
    """The metrics consumer of a judged trace: verdicts, scores, bad cases and the strata's counts, labelled as
    `guard` admits. `judge` is the sidecar's judge (llm or local): what the rates divide by is made at zero for
    it when a label set is new, before its first judgment."""

    def __init__(self, registry: CollectorRegistry, guard: LabelGuard, *, judge: str) -> None:
        labels = guard.names
        # The verdict and score families are fast ones (updated on the event loop, where the workers record):
        # with every verdict precreated per label set they hold most of a scrape's series (docs/benchmarks-log.md).
        self.judgments = CounterFamily(
            "ragpulse_judgments_total",
            "Judgments by judge (llm, local, rule), sample (routine: the base rate, unbiased; targeted: a stratum's "
            "class beyond it; feedback: judged because of a user signal, in no rate), metric and verdict. groundedness: grounded, hallucination, uncertain (the judge could not tell: never a hallucination), error; answer_relevancy: relevant, "
            "irrelevant, fallback, error; context_relevance: relevant, irrelevant, error; search_relevance (agents: their "
            "searches as a reading of the question): relevant, irrelevant.",
            [*labels, "judge", "sample", "metric", "verdict"],
            registry,
        )
        self.judge_score = HistogramFamily(
            "ragpulse_judge_score", "Judge scores by metric: groundedness and answer_relevancy 1-5, context_relevance "
            "0-3 (the best chunk).", ["judge", "sample", "metric"], registry, (0, 1, 2, 3, 4, 5),
        )
        self.judge_supported_share = Histogram(
            "ragpulse_judge_supported_claims_ratio", "Share of an answer's claims the chunks support.", ["judge"],
            buckets=(0.2, 0.4, 0.6, 0.8, 0.99, 1.0), registry=registry,
        )
        self.badcases = CounterFamily(
            "ragpulse_badcases_total",
            "Judged bad cases by sample (routine, targeted, feedback) and the stage that failed: retrieval, generation, "
            "knowledge_gap, over_refusal.",
            [*labels, "sample", "stage"],
            registry,
        )
        self.rates = RateMetrics(registry, labels)
        self._guard = guard
        self._judge = judge
        self._seen: set[tuple[str, ...]] = set()  # label sets whose verdict series exist (bounded by the guard)
        for metric in ("groundedness", "answer_relevancy", "context_relevance"):  # the mean scores' parts
            self.judge_score.labels(judge, "routine", metric)
        guard.on_new_label_set(self._new_label_set)

    def record(self, judged: JudgedTrace) -> None:
        item, judgment, judge, stage = judged.item, judged.judgment, judged.judge, judged.stage
        labels = self._guard.admit_event(item.event)
        sample = item.sample
        count = self.judgments.labels
        if (key := (*labels, judge, sample)) not in self._seen:
            self._seen.add(key)
            self._precreate(labels, judge, sample)
        if not judged.refusal:
            if judgment.groundedness is None:
                verdict = "error"
            else:
                verdict = judgment.groundedness_verdict
                self.judge_score.labels(judge, sample, "groundedness").observe(judgment.groundedness)
                if (share := judgment.supported_share) is not None:
                    self.judge_supported_share.labels(judge).observe(share)
            count(*labels, judge, sample, "groundedness", verdict).inc()
        else:
            # For a fallback the question is whether it was right to refuse.
            verdict = "error" if stage is None else stage
        if sample != "feedback":  # the strata's judgments: random within each stratum
            self.rates.stratum_judgments.labels(*labels, judge, "true" if judged.refusal else "false", item.stratum,
                                                 verdict).inc()
        if judged.refusal:
            # A refusal is low-relevancy by design: reported apart, never averaged in.
            count(*labels, judge, sample, "answer_relevancy", "fallback").inc()
        elif judgment.answer_relevancy is None:
            count(*labels, judge, sample, "answer_relevancy", "error").inc()
        else:
            relevant = judgment.answer_relevancy > IRRELEVANT_AT_MOST
            count(*labels, judge, sample, "answer_relevancy", "relevant" if relevant else "irrelevant").inc()
            self.judge_score.labels(judge, sample, "answer_relevancy").observe(judgment.answer_relevancy)
        if item.event.chunks:
            best = judgment.context_relevance
            if best is None:
                count(*labels, judge, sample, "context_relevance", "error").inc()
            else:
                count(*labels, judge, sample, "context_relevance", "relevant" if best >= RELEVANT_CHUNK_AT_LEAST else "irrelevant").inc()
                self.judge_score.labels(judge, sample, "context_relevance").observe(best)
        if judgment.search_relevance is not None:
            relevant = judgment.search_relevance > IRRELEVANT_AT_MOST
            count(*labels, judge, sample, "search_relevance", "relevant" if relevant else "irrelevant").inc()
        if stage is not None:
            self.badcases.labels(*labels, sample, stage).inc()

    def _new_label_set(self, labels: tuple[str, ...]) -> None:
        """What the rates of a new label set divide by, at zero: the routine sample's verdicts and the strata's
        judgments of answers (fallback false), so that no first judgment is its series' first sample."""
        judge = self._judge
        self._seen.add((*labels, judge, "routine"))
        self._precreate(labels, judge, "routine")
        for stratum in STRATUM_CLASS:
            for verdict in JUDGMENT_VERDICTS["groundedness"]:
                self.rates.stratum_judgments.labels(*labels, judge, "false", stratum, verdict)

    def _precreate(self, labels: tuple[str, ...], judge: str, sample: str) -> None:
        """Every verdict and stage of a new label set at zero, so a ratio over them is 0, not no data."""
        for metric, verdicts in JUDGMENT_VERDICTS.items():
            for verdict in verdicts:
                self.judgments.labels(*labels, judge, sample, metric, verdict)
        for stage in STAGES:
            self.badcases.labels(*labels, sample, stage)


class RateMetrics:
    """The counters a stratified estimate needs; JudgmentMetrics counts them for every judged trace."""

    def __init__(self, registry: CollectorRegistry, labels: Sequence[str]) -> None:
        self.stratum_judgments = CounterFamily(  # recorded on the event loop: a fast family
            "ragpulse_judge_stratum_judgments_total",
            "Judgments of the routine and targeted samples by stratum at arrival and fallback: verdict hallucination, "
            "grounded, uncertain or error for answers; over_refusal, knowledge_gap or error for fallbacks. n_s and the "
            "positives of the stratified estimate; feedback-triggered judgments are not counted.",
            [*labels, "judge", "fallback", "stratum", "verdict"],
            registry,
        )
