"""The citation stage per answer, in microseconds: answers that cite nothing (the common case), answers
with 2-3 inline citations, and hostile answers that one client can send.

    python bench/bench_citations.py [--events 20000] [--rounds 7] [--hostile 20]

Answers are the demo traffic's (app/traffic.py: an e-commerce support bot, its answers 43-176 characters,
without the markers it adds to some), joined two or three at a time into answers of 120-400 characters, with their chunks and labels. With
citations: "[k]" (k a rank among the trace's chunks) before the end of two or three of the sentences. Each
case runs the whole stage (CitationScorer: the parse and the counters, labels through the guard) and the
parse alone (event_citations), best of --rounds rounds.

The hostile shapes (--hostile events each, on the demo's traces): "Paris [1-50]. " 2,000 times (28,000
characters, under limits.max_answer_chars: 100,000 markers), and 256 structured citations each naming two valid
ranks (512 markers, twice the per-answer cap).
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import time

import msgspec
from prometheus_client import CollectorRegistry

from ragpulse.app.traffic import TrafficGenerator, TrafficProfile
from ragpulse.collector.events import MAX_CITATIONS, Envelope, EventCitation, TraceEvent
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.config import Config
from ragpulse.scorers.citations import CitationScorer, event_citations, strip_markers

MIN_CHARS, MAX_CHARS = 120, 400


def demo_traces(count: int, seed: int = 7) -> list[dict[str, object]]:
    """Answered (not fallback) traces of the demo generator."""
    generator = TrafficGenerator(TrafficProfile(users_react=False, fallback_share=0.0), seed=seed)
    out: list[dict[str, object]] = []
    while len(out) < count:
        out.extend(event for event in generator.events() if event["type"] == "trace" and event["chunks"])
    return out[:count]


def answers(traces: list[dict[str, object]], rnd: random.Random, cite: bool) -> list[Envelope]:
    """Each trace with an answer of MIN_CHARS-MAX_CHARS joined from the pool; with `cite`, 2-3 markers."""
    # The demo cites some of its answers itself: its own markers go, so that only this bench's are there.
    pool = [strip_markers(str(trace["answer"])) for trace in traces]
    envelopes = []
    for trace, answer in zip(traces, pool, strict=True):
        parts = [answer]
        while sum(map(len, parts)) + len(parts) < MIN_CHARS or (cite and len(parts) < 2):
            parts.append(rnd.choice(pool))
        while sum(map(len, parts)) + len(parts) > MAX_CHARS and len(parts) > 1:
            parts.pop()
        if cite:
            ranks = len(trace["chunks"])  # type: ignore[arg-type]
            parts = [part.rstrip(".") + f" [{rnd.randint(1, ranks)}]." for part in parts[:3]]
        event = msgspec.convert({**trace, "answer": " ".join(parts), "timestamp": None}, TraceEvent)
        envelopes.append(Envelope(event, "bench", 0.0, 0))
    return envelopes


def hostile(traces: list[dict[str, object]], shape: str) -> list[Envelope]:
    """Each trace with a hostile answer: `ranges` (inline) or `structured`."""
    envelopes = []
    for trace in traces:
        if shape == "ranges":
            fields: dict[str, object] = {"answer": "Paris [1-50]. " * 2_000}
        else:
            ranks = [1, min(2, len(trace["chunks"]))]  # type: ignore[arg-type]
            fields = {"answer": "Paris.", "citations": [EventCitation(text="Paris.", ranks=ranks)] * MAX_CITATIONS}
        event = msgspec.convert({**trace, **fields, "timestamp": None}, TraceEvent)
        envelopes.append(Envelope(event, "bench", 0.0, 0))
    return envelopes


def per_event(envelopes: list[Envelope], stage: bool) -> float:
    """Microseconds per event of one pass: the stage, or the parse alone."""
    if stage:
        registry = CollectorRegistry()
        options = Config().metrics
        guard = LabelGuard(options.labels, options.max_values_per_label, options.max_label_sets, registry)
        scorer = CitationScorer(registry, guard)
        for envelope in envelopes[:100]:  # the label sets seen once, as a running sidecar has
            scorer(envelope)
        started = time.perf_counter()
        for envelope in envelopes:
            scorer(envelope)
    else:
        events = [envelope.event for envelope in envelopes]
        started = time.perf_counter()
        for event in events:
            event_citations(event)  # type: ignore[arg-type]
    return (time.perf_counter() - started) / len(envelopes) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--hostile", type=int, default=20, help="events of each hostile shape")
    args = parser.parse_args()
    traces = demo_traces(args.events)
    print(f"python {platform.python_version()} on {platform.machine()}, {time.strftime('%Y-%m-%d')}, "
          f"{args.events} events, best of {args.rounds} rounds, us per event")
    cases = [("no citation", answers(traces, random.Random(3), False)),
             ("2-3 citations", answers(traces, random.Random(3), True)),
             ("ranges x2000", hostile(traces[:args.hostile], "ranges")),
             ("256 structured", hostile(traces[:args.hostile], "structured"))]
    for label, envelopes in cases:
        lengths = [len(envelope.event.answer) for envelope in envelopes]  # type: ignore[union-attr]
        cited = sum(event_citations(envelope.event) is not None for envelope in envelopes)  # type: ignore[arg-type]
        stage = min(per_event(envelopes, stage=True) for _ in range(args.rounds))
        parse = min(per_event(envelopes, stage=False) for _ in range(args.rounds))
        print(f"  {label:14s} answers {min(lengths)}-{max(lengths)} chars (median {statistics.median(lengths):.0f}), "
              f"{cited} cite: stage {stage:6.2f} us   parse alone {parse:6.2f} us")


if __name__ == "__main__":
    main()
