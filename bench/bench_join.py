"""The feedback join's cost per event, alone: `python bench/bench_join.py [--events 200000]`.

Four streams through the join stage (no other stage), µs per event:
- traces without a session (every trace is held for its feedback);
- traces each in a new session (a first turn: no classification);
- sessions of ten questions within the rephrase window (each later one classified against the one
  before, questions from a pool of 60 so the analysed-question cache works as under a support bot's FAQ);
- the same with every question distinct (the cache never hits);
- thumbs feedback on held traces (joined, counted by the answer's labels).
The end-to-end figure with every stage is bench_fastpath.py's.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, Envelope, FeedbackEvent, TraceEvent
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.config import Config
from ragpulse.feedback.join import FeedbackJoin
from ragpulse.feedback.satisfaction import SignalCounter

WORDS = ("return shoes order parcel warranty laptop refund express shipping canada address delivery opened item "
         "headphones blender window label damage claim").split()


def join() -> FeedbackJoin:
    config, registry = Config(), CollectorRegistry()
    guard = LabelGuard(config.metrics.labels, 50, 2000, registry)
    counter = SignalCounter(registry, guard, max_cached=8000)
    return FeedbackJoin(config.satisfaction, registry, counter, guard)


def question(rnd: random.Random) -> str:
    return "How do I " + " ".join(rnd.sample(WORDS, 5)) + "?"


def streams(events: int) -> dict[str, list[Envelope]]:
    rnd = random.Random(5)
    chunks = [Chunk(text="Returns within 30 days.")]
    pool = [question(rnd) for _ in range(60)]

    def trace(i: int, session: str | None, query: str) -> Envelope:
        # timestamped, as apps send them: a session's turns pass the reorder hold (feedback/reorder.py)
        event = TraceEvent(trace_id=f"t{i:09d}", query=query, answer="Within 30 days.", session_id=session, app="shop",
                           route=f"r{i % 20}", model="m", release="1", chunks=chunks, timestamp=1_796_000_000_000 + i)
        return Envelope(event, "bench", 0.0, i)

    return {
        "traces without a session": [trace(i, None, pool[i % 60]) for i in range(events)],
        "a new session each (first turns)": [trace(i, f"s{i}", pool[i % 60]) for i in range(events)],
        "sessions of 10 turns, FAQ questions": [trace(i, f"s{i // 10}", rnd.choice(pool)) for i in range(events)],
        "sessions of 10 turns, distinct questions": [trace(i, f"s{i // 10}", question(rnd)) for i in range(events)],
    }


def measure(envelopes: list[Envelope], feedback: bool = False) -> float:
    stage = join()
    if feedback:
        for envelope in envelopes:
            stage(envelope)
        envelopes = [Envelope(FeedbackEvent(kind="thumbs", value="up", trace_id=e.event.trace_id), "bench", 0.0, 0)
                     for e in envelopes[-40_000:]]
    started = time.perf_counter()
    for envelope in envelopes:
        stage(envelope)
    return 1e6 * (time.perf_counter() - started) / len(envelopes)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    made = streams(args.events)
    for name, envelopes in made.items():
        runs = [measure(envelopes) for _ in range(args.repeats)]
        print(f"{name:42s} {statistics.median(runs):6.2f} µs/event  (runs {min(runs):.2f} - {max(runs):.2f})")
    runs = [measure(made["traces without a session"], feedback=True) for _ in range(args.repeats)]
    print(f"{'thumbs feedback on held traces':42s} {statistics.median(runs):6.2f} µs/event  (runs {min(runs):.2f} - {max(runs):.2f})")


if __name__ == "__main__":
    main()
