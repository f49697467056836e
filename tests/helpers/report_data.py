"""A result store filled with an hour of judged traffic whose truth is known: release r1 for the first half hour,
r2 after it with three times the hallucinations and the same fallbacks, citations and chunk use. Records go
through the sidecar's own result writer and sinks (app/result_sinks.py), as judged traces do."""

from __future__ import annotations

import random
from contextlib import closing
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from prometheus_client import CollectorRegistry

from ragpulse.app.result_sinks import result_sinks
from ragpulse.config import load_config
from ragpulse.judging import JudgmentRecord, ReviewRecord
from ragpulse.judging.verdicts import CitationVerdict
from ragpulse.judging.records import RecordChunk
from ragpulse.results.writer import ResultWriter

START = 1_796_000_400.0  # 2026-11-30 01:00 UTC (a whole hour)
MINUTES, PER_MINUTE, RELEASE_AT = 60, 40, 30
TRUTH = {"r1": {"hallucination": 0.05, "fallback": 0.10, "citation_precision": 0.8, "context_utilisation": 0.5},
         "r2": {"hallucination": 0.20, "fallback": 0.10, "citation_precision": 0.8, "context_utilisation": 0.5}}
CHUNKS = [RecordChunk("Returns are accepted within 30 days of delivery.", "kb-returns", 3),
          RecordChunk("Standard shipping takes 3 to 5 working days.", "kb-shipping", 1)]
OFF_TOPIC = [RecordChunk("Gift cards never expire.", "kb-gifts", 0), RecordChunk(CHUNKS[1].text, "kb-shipping", 0)]


ROUTES = ("returns", "shipping")  # the same truth on both
AUDIT_EVERY, DISAGREE_EVERY = 10, 8  # every tenth answer is audited; the reviewer disagrees on every eighth review


@dataclass
class Filled:
    path: Path
    counts: dict[str, Counter[str]] = field(default_factory=dict)  # release -> what was written
    reviews: Counter[str] = field(default_factory=Counter)  # agreed, disagreed
    by_route: dict[str, Counter[str]] = field(default_factory=dict)  # route -> what was written


def record(trace_id: str, at: float, release: str, *, fallback: bool, hallucination: bool, cited: bool,
           supported: bool, used: list[int], sample: str = "routine", audit: bool = False,
           route: str = "returns") -> JudgmentRecord:
    stage = ("knowledge_gap" if fallback else "generation" if hallucination else
             "generation" if cited and not supported else None)
    citations = [CitationVerdict("Returns are accepted within 30 days.", [0], [], "supported" if supported else "unsupported",
                                 "" if supported else "chunk [1] says nothing of it")] if cited else []
    return JudgmentRecord(
        trace_id=trace_id, judged_at=at, app="support-bot", route=route, model="gpt-4o-mini", release=release,
        session_id=None, priority="base_rate", sample=sample, stratum="none", reasons=["base_rate"], audit=audit,
        fallback=fallback, stage=stage, bad=stage is not None, query=f"Can I return it? ({trace_id[:6]})",
        answer="Sorry, I couldn't find that." if fallback else
        "You can return anything within 90 days." if hallucination else "Returns are accepted within 30 days. [1]",
        chunks=OFF_TOPIC if fallback else CHUNKS, groundedness=None if fallback else 1 if hallucination else 5, hallucination=hallucination,
        supported_share=None, claims=[], groundedness_reason="contradicts chunk [1]: 90 days against 30" if hallucination else "",
        answer_relevancy=None if fallback else 5, answer_relevancy_reason="", context_relevance=1 if fallback else 3,
        context_relevance_reason="no chunk is about the question" if fallback else "", error=None, raw_output=None,
        judge="llm", judge_model="judge-m", prompt_version="judgment.v3", prompt_tokens=0, completion_tokens=0, cost=0.0,
        verdict="refusal" if fallback else "hallucination" if hallucination else "grounded",
        used_chunks=None if fallback else used, citations=citations)


def review(writer: ResultWriter, filled: Filled, trace_id: str, at: float, hallucination: bool) -> None:
    """A human review of an audited answer, as `ragpulse review --offline` writes it."""
    disagree = sum(filled.reviews.values()) % DISAGREE_EVERY == DISAGREE_EVERY - 1
    filled.reviews.update(["disagreed" if disagree else "agreed"])
    writer.write(ReviewRecord(trace_id, at, groundedness=5 if hallucination == disagree else 1, answer_relevancy=5,
                              claims=[], comment=None, reviewer="test"))


def probe_runs(path: Path) -> list[float]:
    """Four probe runs of a golden set of four questions through the probes' store, one every quarter hour: the
    hit rates 1, 0.75, 0.75 and 0.5 (the release's worse retriever)."""
    from ragpulse.probes import store
    from ragpulse.probes.retrieval import RetrievalScores
    from ragpulse.probes.runner import ProbeRun, QuestionResult

    hits = [[1, 1, 1, 1], [1, 1, 1, 0], [1, 1, 0, 1], [1, 0, 0, 1]]
    with closing(store.connect(path)) as db:
        for number, run_hits in enumerate(hits):
            at = START + number * 900 + 60
            results = [QuestionResult(f"q{i}", "Can I return it?", "returns", None, False, "Within 30 days.", ["kb-returns"],
                                      None, 0.1, retrieval=RetrievalScores(hit, hit, hit, hit / 5, hit), fell_back=False,
                                      correctness=4)
                       for i, hit in enumerate(run_hits)]
            store.save(db, ProbeRun(f"run-{number}", "returns-golden", "shop", 5, at, at + 20, results=results))
    return [sum(h) / len(h) for h in hits]


def fill(directory: Path, seed: int = 7) -> Filled:
    path = directory / "store.sqlite3"
    config = load_config(None, overrides={"results.sqlite_path": str(path), "results.retention_days": "100000"})
    registry = CollectorRegistry()
    writer = ResultWriter(result_sinks(config, registry), 100_000, 1 << 30, registry)
    writer.start()
    rnd, filled = random.Random(seed), Filled(path)
    for minute in range(MINUTES):
        release = "r1" if minute < RELEASE_AT else "r2"
        truth, counts = TRUTH[release], filled.counts.setdefault(release, Counter())
        for i in range(PER_MINUTE):
            fallback = rnd.random() < truth["fallback"]
            hallucination = not fallback and rnd.random() < truth["hallucination"]
            cited = not fallback and rnd.random() < 0.5
            supported = rnd.random() < truth["citation_precision"]
            used = [index for index in range(len(CHUNKS)) if rnd.random() < truth["context_utilisation"]]
            trace_id, audit = f"{minute:02d}{i:02d}{rnd.getrandbits(96):024x}", not fallback and i % AUDIT_EVERY == 0
            route = ROUTES[i % len(ROUTES)]
            writer.write(record(trace_id, START + minute * 60 + i, release, fallback=fallback, hallucination=hallucination,
                                cited=cited, supported=supported, used=used, audit=audit, route=route))
            if audit:
                review(writer, filled, trace_id, START + minute * 60 + i + 30, hallucination)
            for tally in (counts, filled.by_route.setdefault(route, Counter())):
                tally.update(routine=1, refusals=fallback, judged=not fallback, hallucinated=hallucination,
                             cited_judged=cited, cited_supported=cited and supported,
                             retrieved=0 if fallback else len(CHUNKS), used=0 if fallback else len(used))
    writer.close()
    return filled
