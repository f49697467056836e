"""What judged answers did with their context: the chunks they used, by rank, and whether their citations
hold. A consumer of judging's exit (judging/exit.py), like JudgmentMetrics.

Counted for the routine sample only (a simple random sample of the traffic: the ratios are unbiased; the
targeted and feedback samples over-represent suspect answers), for answers (not fallbacks, not failed
judgments), and only where the judge said which chunks the claims came from: a judge that could not say
(`used_chunks` None) is counted as unreported, never as an answer that used nothing. Utilisation is used /
retrieved over the same answers (docs/judging.md, Citations and context utilisation); citation precision is
supported / (supported + unsupported) cited sentences.
"""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import CollectorRegistry, Counter

from ragpulse.collector.telemetry.fast_metrics import CounterFamily
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.judging.exit import JudgedTrace
from ragpulse.judging.verdicts import MAX_JUDGED_CITATIONS

MAX_RANK = 10  # ranks above are counted together as "11+": a bounded label
BEYOND_MAX_RANK = f"{MAX_RANK + 1}+"
CITATION_VERDICTS = ("supported", "unsupported", "uncertain", "dangling", "error", "not_judged")


def rank_label(index: int) -> str:
    """A chunk's 0-based index as its 1-based rank label."""
    return str(index + 1) if index < MAX_RANK else BEYOND_MAX_RANK


class ContextMetrics:
    def __init__(self, registry: CollectorRegistry, labels: Sequence[str]) -> None:
        self.retrieved = CounterFamily(
            "ragpulse_context_chunks_retrieved_total",
            "Chunks retrieved for answers of the routine sample whose judge said which chunks the claims came from, by "
            "rank (1-10, 11+): the denominator of context utilisation.",
            [*labels, "judge", "rank"], registry,
        )
        self.used = CounterFamily(
            "ragpulse_context_chunks_used_total",
            "Of those chunks, the ones that support at least one claim of the answer, by rank.",
            [*labels, "judge", "rank"], registry,
        )
        self.chars = CounterFamily(
            "ragpulse_context_chars_total",
            "Characters of those chunks, retrieved and used (the used chunks' whole text).",
            [*labels, "judge", "kind"], registry,
        )
        self.unreported = Counter(
            "ragpulse_context_utilisation_unreported_total",
            "Answers of the routine sample whose judge did not say which chunks its supported claims came from: in no "
            "utilisation.",
            ["judge"], registry=registry,
        )
        self.citations = CounterFamily(
            "ragpulse_citation_verdicts_total",
            "Cited sentences of the routine sample's answers by verdict: supported (the cited chunks support it), unsupported (a "
            "wrong citation), uncertain, dangling (it cites no retrieved chunk), error (no verdict from the judge), "
            f"not_judged (past the first {MAX_JUDGED_CITATIONS} of its answer).",
            [*labels, "judge", "verdict"], registry,
        )


class ContextRecorder:
    """The exit consumer: counts a judged answer's chunk use and citation verdicts by its labels. `judge` is the
    sidecar's judge (llm or local), whose series a new label set gets at zero."""

    def __init__(self, registry: CollectorRegistry, guard: LabelGuard, *, judge: str) -> None:
        self._metrics = ContextMetrics(registry, guard.names)  # labelled as the guard admits
        self._guard = guard
        self._judge = judge
        self._metrics.unreported.labels(judge)
        guard.on_new_label_set(self._precreate)

    def record(self, judged: JudgedTrace) -> None:
        item, judgment = judged.item, judged.judgment
        if item.sample != "routine" or judged.refusal or judgment.error is not None:
            return
        labels, judge = self._guard.admit_event(item.event), judged.judge
        metrics = self._metrics
        chunks, used = item.event.chunks or [], judgment.used_chunks
        if chunks and used is None:
            metrics.unreported.labels(judge).inc()
        elif chunks and used is not None:
            chosen = set(used)
            retrieved_chars = used_chars = 0
            for index, chunk in enumerate(chunks):
                rank = rank_label(index)
                metrics.retrieved.labels(*labels, judge, rank).inc()
                used_at_rank = metrics.used.labels(*labels, judge, rank)  # exists at 0 where a rank was retrieved
                length = len(chunk.text or "")
                retrieved_chars += length
                if index in chosen:
                    used_at_rank.inc()
                    used_chars += length
            metrics.chars.labels(*labels, judge, "retrieved").inc(retrieved_chars)
            metrics.chars.labels(*labels, judge, "used").inc(used_chars)
        for citation in judgment.citations:  # at most MAX_JUDGED_CITATIONS: one answer's share is bounded
            metrics.citations.labels(*labels, judge, citation.verdict).inc()
        if judgment.citations_not_judged:
            metrics.citations.labels(*labels, judge, "not_judged").inc(judgment.citations_not_judged)

    def _precreate(self, labels: tuple[str, ...]) -> None:
        """Every series the ratios divide by, for a new label set, at zero: each rank (1-10, 11+) retrieved and
        used, not only the ranks traffic reached, the characters, the citation verdicts. A series made with its
        first count hides that count from increase(), so a utilisation whose ranks were born at different times
        came out wrong (0.608 against a true 0.338)."""
        metrics, judge = self._metrics, self._judge
        for rank in (*map(str, range(1, MAX_RANK + 1)), BEYOND_MAX_RANK):
            metrics.retrieved.labels(*labels, judge, rank)
            metrics.used.labels(*labels, judge, rank)
        for kind in ("retrieved", "used"):
            metrics.chars.labels(*labels, judge, kind)
        for verdict in CITATION_VERDICTS:
            metrics.citations.labels(*labels, judge, verdict)
