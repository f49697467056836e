"""One probe run: every question of a golden set asked of a target, its answer scored.

Per question: the retrieval metrics against the labelled chunks (probes/retrieval.py), whether the
service fell back (the configured fallback rules, as for live traffic) and whether it should have,
and answer correctness against the expected answer: the LLM judge's when one is configured
(probes/correctness.py), else, or when its call fails, the local judge's (`correctness_judge` says
which): the expected answer's claims checked against the answer as the only
context, their 1-5 groundedness read as correctness (an answer that leaves a fact out scores low,
one that says more is not wrong for it), and 1 when either contradicts the other; an answerable
question the service fell back on is 1. Questions run `concurrency` at a time, at most
`max_requests_per_second`; a failed request is a question with an error, never a made-up answer.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field

import aiohttp
import msgspec

from ragpulse.collector.events import Chunk, TraceEvent
from ragpulse.judging import LocalJudge
from ragpulse.probes import perturb as perturbations
from ragpulse.probes import retrieval
from ragpulse.probes.correctness import LlmCorrectness
from ragpulse.probes.golden import GoldenCase, GoldenSet
from ragpulse.probes.target import HttpTarget, ProbeAnswer
from ragpulse.scorers.fallback import FallbackDetector

METRICS = ("hit_rate", "mrr", "recall", "precision", "ndcg", "correctness", "fallback_accuracy", "error_rate")
_GATE = re.compile(r"^\s*(?P<metric>[a-z_]+)\s*(?P<op>>=|<=|>|<)\s*(?P<value>-?\d+(?:\.\d+)?)\s*$")


@dataclass
class QuestionResult:
    key: str
    query: str
    intent: str | None
    difficulty: str | None
    expect_fallback: bool
    answer: str | None
    chunk_ids: list[str | None] | None  # in rank order; None: the response reported no chunks
    error: str | None
    seconds: float
    release: str | None = None  # the service's, when its response reports it
    retrieval: retrieval.RetrievalScores | None = None
    fell_back: bool | None = None
    correctness: int | None = None  # 1-5, against expected_answer
    correctness_reason: str = ""
    correctness_judge: str | None = None  # llm, local (no LLM judge, or its call failed), or rule (fell back)
    # The answer judged as live traffic is (groundedness 1-5, <= 2 a hallucination; answer relevancy 1-5),
    # against the chunks it came with; None without chunk texts or for a fallback.
    groundedness: int | None = None
    answer_relevancy: int | None = None
    judge: str | None = None


@dataclass
class Aggregate:
    questions: int = 0
    errors: int = 0
    hit_rate: float | None = None
    mrr: float | None = None
    recall: float | None = None
    precision: float | None = None
    ndcg: float | None = None
    correctness: float | None = None
    fallback_accuracy: float | None = None
    expected_fallbacks: int = 0
    expected_fallbacks_fell_back: int = 0
    answerable: int = 0
    answerable_fell_back: int = 0

    @property
    def error_rate(self) -> float:
        return self.errors / self.questions if self.questions else 0.0

    def value(self, metric: str) -> float | None:
        return self.error_rate if metric == "error_rate" else getattr(self, metric)


def aggregate(results: Iterable[QuestionResult]) -> Aggregate:
    results = list(results)
    out = Aggregate(questions=len(results), errors=sum(r.error is not None for r in results))
    scored = [r.retrieval for r in results if r.retrieval is not None]
    if scored:
        n = len(scored)
        out.hit_rate = sum(s.hit for s in scored) / n
        out.mrr = sum(s.reciprocal_rank for s in scored) / n
        out.recall = sum(s.recall for s in scored) / n
        out.precision = sum(s.precision for s in scored) / n
        out.ndcg = sum(s.ndcg for s in scored) / n
    judged = [r.correctness for r in results if r.correctness is not None]
    if judged:
        out.correctness = sum(judged) / len(judged)
    answered = [r for r in results if r.fell_back is not None]
    if answered:
        out.fallback_accuracy = sum(r.fell_back == r.expect_fallback for r in answered) / len(answered)
    out.expected_fallbacks = sum(r.expect_fallback for r in answered)
    out.expected_fallbacks_fell_back = sum(r.expect_fallback and bool(r.fell_back) for r in answered)
    out.answerable = sum(not r.expect_fallback for r in answered)
    out.answerable_fell_back = sum(not r.expect_fallback and bool(r.fell_back) for r in answered)
    return out


@dataclass
class PerturbationResult:
    key: str
    kind: str
    query: str  # the variant
    error: str | None
    hit_changed: bool | None  # the variant's hit@k against the original's; None without retrieval metrics
    verdict_changed: bool | None  # fell back, or correct (>= 4), unlike the original; None when either has no answer


@dataclass
class Sensitivity:
    variants: int
    retrieval_measured: int  # variants whose retrieval was scored, with the original's
    retrieval_changed: int  # ... and whose hit@k differs from the original's
    verdict_measured: int
    verdict_changed: int
    changed: int  # either changed

    @property
    def changed_share(self) -> float:
        return self.changed / self.variants if self.variants else 0.0


@dataclass
class ProbeRun:
    run_id: str
    golden_set: str
    target: str
    k: int
    started_at: float
    finished_at: float = 0.0
    correctness_judge: str = "local"
    results: list[QuestionResult] = field(default_factory=list)
    perturbations: list[PerturbationResult] = field(default_factory=list)

    def sensitivity(self) -> dict[str, Sensitivity]:
        """Per perturbation kind (and "all"): how many variants changed their retrieval or verdict."""
        out: dict[str, Sensitivity] = {}
        for name in (*sorted({p.kind for p in self.perturbations}), "all"):
            chosen = [p for p in self.perturbations if name in ("all", p.kind)]
            if not chosen:
                continue
            out[name] = Sensitivity(
                variants=len(chosen),
                retrieval_measured=sum(p.hit_changed is not None for p in chosen),
                retrieval_changed=sum(p.hit_changed is True for p in chosen),
                verdict_measured=sum(p.verdict_changed is not None for p in chosen),
                verdict_changed=sum(p.verdict_changed is True for p in chosen),
                changed=sum(p.hit_changed is True or p.verdict_changed is True for p in chosen),
            )
        return out

    def overall(self) -> Aggregate:
        return aggregate(self.results)

    def by(self, attribute: str) -> dict[str, Aggregate]:
        groups: dict[str, list[QuestionResult]] = {}
        for result in self.results:
            groups.setdefault(getattr(result, attribute) or "unset", []).append(result)
        return {name: aggregate(group) for name, group in sorted(groups.items())}

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Threshold:
    metric: str
    op: str
    value: float

    def passes(self, actual: float | None) -> bool:
        if actual is None:
            return False  # a gate on a metric the run could not measure fails: it guards nothing otherwise
        return {">=": actual >= self.value, "<=": actual <= self.value, ">": actual > self.value,
                "<": actual < self.value}[self.op]

    def __str__(self) -> str:
        return f"{self.metric}{self.op}{self.value:g}"


def parse_gate(text: str) -> list[Threshold]:
    """'hit_rate>=0.9,mrr>=0.7' -> thresholds; ValueError naming what is wrong."""
    thresholds = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        match = _GATE.match(part)
        if match is None:
            raise ValueError(f"{part!r} is not METRIC>=VALUE (or <=, >, <)")
        if match["metric"] not in METRICS:
            raise ValueError(f"unknown metric {match['metric']!r} in {part!r} (known: {', '.join(METRICS)})")
        thresholds.append(Threshold(match["metric"], match["op"], float(match["value"])))
    if not thresholds:
        raise ValueError("an empty gate")
    return thresholds


def _hit_changed(original: QuestionResult, variant: QuestionResult) -> bool | None:
    if original.retrieval is None or variant.retrieval is None:
        return None
    return original.retrieval.hit != variant.retrieval.hit


def _verdict_changed(original: QuestionResult, variant: QuestionResult) -> bool | None:
    if original.fell_back is None or variant.fell_back is None:
        return None

    def verdict(result: QuestionResult) -> tuple[bool, bool | None]:
        return bool(result.fell_back), None if result.correctness is None else result.correctness >= 4

    return verdict(original) != verdict(variant)


class Prober:
    def __init__(self, target: HttpTarget, fallback: FallbackDetector, correctness: LocalJudge, *, k: int,
                 concurrency: int, max_requests_per_second: float, llm_correctness: LlmCorrectness | None = None) -> None:
        self._target = target
        self._fallback = fallback
        self._correctness = correctness
        self._llm_correctness = llm_correctness
        self.k = k
        self._concurrency = concurrency
        self._interval = 1.0 / max_requests_per_second
        self._next_start = 0.0
        self._pace = asyncio.Lock()

    async def run(self, golden: GoldenSet, on_result: Callable[[QuestionResult], None] = lambda _: None, *,
                  perturb: bool = False) -> ProbeRun:
        """Every question once (and, with `perturb`, each of its variants: probes/perturb.py)."""
        run = ProbeRun(run_id=uuid.uuid4().hex[:16], golden_set=golden.name, target=self._target.name, k=self.k,
                       started_at=time.time(), correctness_judge="local" if self._llm_correctness is None else "llm")
        jobs: list[tuple[int, GoldenCase, str | None, str]] = [(i, case, None, case.query) for i, case in enumerate(golden.cases)]
        if perturb:
            jobs += [(i, case, kind, query) for i, case in enumerate(golden.cases) for kind in perturbations.KINDS
                     if (query := perturbations.variant(case.query, kind)) is not None]
        pending: asyncio.Queue[tuple[int, GoldenCase, str | None, str]] = asyncio.Queue()
        for job in jobs:
            pending.put_nowait(job)
        results: list[QuestionResult | None] = [None] * len(golden.cases)
        variants: list[tuple[int, str, QuestionResult]] = []
        timeout = aiohttp.ClientTimeout(total=self._target.timeout_seconds)
        async with aiohttp.ClientSession(timeout=timeout) as session:

            async def worker() -> None:
                while not pending.empty():
                    index, case, kind, query = pending.get_nowait()
                    await self._paced()
                    answer = await self._target.ask(session, query, run.run_id)
                    result = await self._score(case, answer)
                    if kind is None:
                        results[index] = result
                        on_result(result)
                    else:
                        result.query = query
                        variants.append((index, kind, result))

            await asyncio.gather(*(worker() for _ in range(min(self._concurrency, len(jobs)))))
        run.results = [r for r in results if r is not None]
        for index, kind, result in sorted(variants, key=lambda v: (v[0], perturbations.KINDS.index(v[1]))):
            original = results[index]
            assert original is not None
            run.perturbations.append(PerturbationResult(result.key, kind, result.query, result.error,
                                                        _hit_changed(original, result), _verdict_changed(original, result)))
        run.finished_at = time.time()
        return run

    async def _paced(self) -> None:
        """At most max_requests_per_second request starts, spread evenly."""
        async with self._pace:
            now = time.monotonic()
            wait = self._next_start - now
            self._next_start = max(now, self._next_start) + self._interval
        if wait > 0:
            await asyncio.sleep(wait)

    async def _score(self, case: GoldenCase, answer: ProbeAnswer) -> QuestionResult:
        chunk_ids = [chunk.id for chunk in answer.chunks] if answer.chunks is not None else None
        result = QuestionResult(case.key, case.query, case.intent, case.difficulty, case.expect_fallback, answer.answer,
                                chunk_ids, answer.error, answer.seconds, answer.release)
        if answer.answer is None:
            return result  # no answer: nothing to score, and nothing made up
        if chunk_ids is not None:
            result.retrieval = retrieval.score(chunk_ids, case.grades, self.k)
        chunks = None if answer.chunks is None else [Chunk(id=c.id, text=c.text, score=c.score) for c in answer.chunks]
        event = TraceEvent(trace_id=result.key, query=case.query, answer=answer.answer, chunks=chunks)
        result.fell_back = self._fallback.detect(event) is not None
        if not result.fell_back and chunks and any(chunk.text is not None for chunk in chunks):
            await self._judge(event, result)
        if case.expected_answer is not None and result.fell_back and not case.expect_fallback:
            result.correctness, result.correctness_reason = 1, "it fell back on a question the knowledge base answers"
            result.correctness_judge = "rule"
        elif case.expected_answer is not None and not result.fell_back:
            if self._llm_correctness is not None:
                score, reason = await self._llm_correctness.grade(case.query, case.expected_answer, answer.answer)
                if score is not None:
                    result.correctness, result.correctness_reason, result.correctness_judge = score, reason, "llm"
                    return result
                result.correctness_reason = reason + "; "  # the local judge grades instead, and says so
            score, reason = self._correct(case, answer.answer)
            result.correctness, result.correctness_judge = score, "local"
            result.correctness_reason += reason
        return result

    async def _judge(self, event: TraceEvent, result: QuestionResult) -> None:
        """Groundedness and relevancy of the probe answer, by the judge live traffic gets (the LLM judge when
        one is configured, the local judge when not or when its call fails), on the chunks that have text."""
        with_text = msgspec.structs.replace(event, chunks=[c for c in event.chunks or [] if c.text is not None])
        judgment = None
        if self._llm_correctness is not None:
            judgment = await self._llm_correctness.judge(with_text)
        if judgment is None or judgment.error is not None:
            judgment = self._correctness.judge(with_text)
        result.groundedness, result.answer_relevancy = judgment.groundedness, judgment.answer_relevancy
        result.judge = "local" if judgment.judge_model == "local" else "llm"

    async def close(self) -> None:
        if self._llm_correctness is not None:
            await self._llm_correctness.close()

    def _correct(self, case: GoldenCase, answer: str) -> tuple[int | None, str]:
        """1-5: the expected answer's claims found in the answer (an answer that says more is not wrong
        for it), 1 when either contradicts the other."""
        assert case.expected_answer is not None

        def judged(claims: str, context: str):  # type: ignore[no-untyped-def]
            return self._correctness.judge(TraceEvent(trace_id=case.key, query=case.query, answer=claims,
                                                      chunks=[Chunk(text=context)]))

        covered, forward = judged(case.expected_answer, answer), judged(answer, case.expected_answer)
        contradicted = [c for c in (*forward.claims, *covered.claims) if c.verdict == "contradicted"]
        if contradicted:
            return 1, f"contradicts the expected answer: {contradicted[0].claim!r}: {contradicted[0].reason}"
        return covered.groundedness, f"the expected answer in the answer: {covered.groundedness_reason}"
