"""Where an OTLP span's cost goes, in-process, stage by stage (the receiver's own work, no network).

    python bench/profile_otlp.py [--traces 20000] [--repeats 3] [--app-attributes] [--keep-all] [--json]
                                 [--payload realistic] [--judge] [--per-stage] [--cprofile FILE]

The bench payload (LlamaIndex-shaped traces of 8 spans, requests of 512 spans; --payload realistic: distinct
questions, ~7% of traces judged) through the shipped defaults: protobuf (or, with --json, OTLP/JSON) to Python
records, the assembler, mapping a trace's spans to an event, the event's validation, the pipeline's stages (each
one with --per-stage), and one /metrics exposition after the run. With --judge the judge workers and the result
writer run too (the store in a temporary directory), as in `ragpulse run`: after the last request, until every
sampled trace is judged or skipped and the writer has closed; the event loop's CPU then (the judgments' exit) and
the other threads' (the local judge's, the writer's SQLite inserts). --cprofile FILE: the event loop's thread
under cProfile (the last repeat), for `python -m pstats FILE`.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import platform
import statistics
import tempfile
import time
from collections import defaultdict

import common  # noqa: F401 - tests/ on the path, for helpers
import msgspec
from bench_fastpath import time_each_stage, timed
from helpers.otlp_payload import PAYLOADS, SPANS_PER_TRACE, as_json, batches
from prometheus_client import CollectorRegistry, disable_created_metrics

from ragpulse._native import KeyFilter
from ragpulse.app.components import tune_gc
from ragpulse.app.service import Service
from ragpulse.collector.telemetry.exposition import TextExposition
from ragpulse.config import Config, parse_config
from ragpulse.judging.sampler import PRIORITIES
from ragpulse.sources.otlp.evaluations import feedback_of
from ragpulse.sources.otlp.keys import MAPPED_KEYS
from ragpulse.sources.otlp.spans import decode_json, decode_protobuf


def config(store: str | None = None) -> Config:
    data = msgspec.to_builtins(Config())
    data["results"]["sqlite_path"] = store
    return parse_config(data)


async def drain(service: Service, seconds: dict[str, float]) -> None:
    """Until every sampled trace is judged or skipped, then the judging shut down (the writer flushed and closed):
    the CPU of the event loop's thread then, and of the other threads over the whole run."""
    value = service.registry.get_sample_value
    judging = service.judging
    assert judging is not None
    queue = judging.workers._queue  # noqa: SLF001
    loop_start = time.thread_time()
    while True:  # a bench: polling is its clock; the queue's length first, the registry once it is empty
        if queue.qsize():
            await asyncio.sleep(0.005)
            continue
        sampled = sum(value("ragpulse_judge_sampled_total", {"priority": p}) or 0 for p in PRIORITIES)
        done = sum(value("ragpulse_judge_judged_total", {"priority": p}) or 0 for p in PRIORITIES)
        skipped = sum(s.value for m in service.registry.collect() if m.name == "ragpulse_judge_skipped"
                      for s in m.samples if s.name.endswith("_total"))
        if done + skipped >= sampled:
            break
        await asyncio.sleep(0.02)
    await judging.shutdown()
    seconds["judging: exit and records (event loop)"] = time.thread_time() - loop_start
    seconds["judged"] = done


SUB = "↳ "  # a row that is part of the one above it (a pipeline stage), not added to the total


def once(bodies: list[bytes], spans_total: int, keys: KeyFilter, json: bool = False, judge: bool = False,
         per_stage: bool = False, profile: cProfile.Profile | None = None) -> dict[str, float]:
    seconds: dict[str, float] = defaultdict(float)
    spent: dict[str, float] = defaultdict(float)

    async def run(store: str | None) -> None:
        service = Service(config(store), CollectorRegistry())
        intake, pipeline = service.spans, service.pipeline
        assembler, decoder = intake.assembler, intake._decoder  # noqa: SLF001 - the profile times internals
        if per_stage:
            time_each_stage(pipeline, spent)
        if judge and service.judging is not None:
            local = service.judging.workers._local  # noqa: SLF001
            assert local is not None, "the shipped defaults judge locally"
            # its CPU on the local judge's executor thread
            local.judge = timed("judging: the local judge (its thread)", local.judge, seconds,  # type: ignore[method-assign]
                                clock=time.thread_time)
            await service.judging.start()
        process_start, loop_start = time.process_time(), time.thread_time()
        if profile is not None:
            profile.enable()
        for body in bodies:
            t0 = time.perf_counter()
            t1 = t0  # one call parses and makes the records: no parse apart (0 here)
            spans = (decode_json if json else decode_protobuf)(body, keys).spans
            t2 = time.perf_counter()
            for span in spans:
                if span.events:
                    feedback_of(span)
            assembler.add(spans)
            t3 = time.perf_counter()
            assembled = assembler.flush()  # each request holds whole traces: every one is complete here
            t4 = time.perf_counter()
            envelopes = [decoder.accept(event, size) for event, size in assembled]
            t5 = time.perf_counter()
            pipeline.process(envelopes)
            t6 = time.perf_counter()
            for stage, start, end in (("protobuf parse", t0, t1),
                                      ("OTLP/JSON to records" if json else "protobuf to records (native)", t1, t2),
                                      ("assembler add", t2, t3), ("assemble + map", t3, t4),
                                      ("event validation", t4, t5), ("pipeline stages", t5, t6)):
                seconds[stage] += end - start
            if judge:
                await asyncio.sleep(0)  # the judge's workers run between requests, as in `ragpulse run`
        for name, value in spent.items():
            seconds[SUB + name] = value
        if judge:
            await drain(service, seconds)
        if profile is not None:
            profile.disable()
        if judge:
            others = time.process_time() - process_start - (time.thread_time() - loop_start)
            seconds["judging: the result writer and other threads"] = others - seconds["judging: the local judge (its thread)"]
        writer = TextExposition(service.registry)
        t0 = time.perf_counter()
        exposition = writer.render()
        seconds["one scrape"] = time.perf_counter() - t0
        seconds["series"] = sum(1 for line in exposition.splitlines() if line and not line.startswith(b"#"))
        traces = service.registry.get_sample_value("ragpulse_events_processed_total", {"type": "trace"})
        assert traces == spans_total // SPANS_PER_TRACE, traces

    with tempfile.TemporaryDirectory() as store:
        asyncio.run(run(f"{store}/results.sqlite3" if judge else None))
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--app-attributes", action="store_true",
                        help="spans also carry what an instrumentor records and no rule reads (an embedding vector, mime types)")
    parser.add_argument("--keep-all", action="store_true", help="decode every span attribute, not only the mapping's keys")
    parser.add_argument("--json", action="store_true", help="the same requests in OTLP/JSON, as an HTTP exporter sends them")
    parser.add_argument("--payload", choices=PAYLOADS, default="bench")
    parser.add_argument("--judge", action="store_true", help="the judge's workers and the result writer run too")
    parser.add_argument("--per-stage", action="store_true", help="each pipeline stage timed (~0.2 µs a call more)")
    parser.add_argument("--cprofile", metavar="FILE", help="the event loop's thread under cProfile (the last repeat)")
    args = parser.parse_args()
    bodies = batches(args.traces, app_attributes=args.app_attributes, payload=args.payload)
    if args.json:
        bodies = [as_json(body) for body in bodies]
    keys = KeyFilter(set(), [""]) if args.keep_all else MAPPED_KEYS
    spans_total = args.traces * SPANS_PER_TRACE
    tune_gc()  # and no _created series: as `ragpulse run` does
    disable_created_metrics()
    gc.collect()
    runs = [once(bodies, spans_total, keys, args.json, args.judge, args.per_stage) for _ in range(args.repeats)]
    if args.cprofile:
        profile = cProfile.Profile()
        once(bodies, spans_total, keys, args.json, args.judge, args.per_stage, profile)
        profile.dump_stats(args.cprofile)
    print(f"python {platform.python_version()}, {args.payload} payload, {args.traces} traces of {SPANS_PER_TRACE} spans, "
          f"{len(bodies)} requests ({sum(map(len, bodies)) / spans_total:.0f} B a span), median of {args.repeats}, "
          f"{'every attribute' if args.keep_all else 'the mapping keys'} decoded{', OTLP/JSON' if args.json else ''}"
          + (f", judging on: {statistics.median(r['judged'] for r in runs):,.0f} judged" if args.judge else ""))
    print("| stage | µs per span | µs per trace | share |")
    print("|---|---|---|---|")
    stages = [k for k in runs[0] if k not in ("one scrape", "series", "judged")]
    total = sum(statistics.median(r[k] for r in runs) for k in stages if not k.startswith(SUB))
    for stage in stages:
        s = statistics.median(r[stage] for r in runs)
        print(f"| {stage} | {1e6 * s / spans_total:.2f} | {1e6 * s / args.traces:.1f} | {100 * s / total:.0f}% |")
    print(f"| total | {1e6 * total / spans_total:.2f} | {1e6 * total / args.traces:.1f} | |")
    print(f"one /metrics exposition after the run: {1e3 * statistics.median(r['one scrape'] for r in runs):.2f} ms "
          f"for {int(runs[0]['series'])} series")


if __name__ == "__main__":
    main()
