"""Where an OTLP span's cost goes, in-process, stage by stage (the receiver's own work, no network).

    python bench/profile_otlp.py [--traces 20000] [--repeats 3] [--app-attributes] [--keep-all] [--json]

The bench payload (LlamaIndex-shaped traces of 8 spans, requests of 512 spans) through the shipped
defaults: protobuf (or, with --json, OTLP/JSON) to Python records, the assembler, mapping a trace's spans to an
event, the event's validation, the pipeline's stages, and one /metrics exposition after the run.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import platform
import statistics
import time
from collections import defaultdict

import common  # noqa: F401 - tests/ on the path, for helpers
import msgspec
from helpers.otlp_payload import SPANS_PER_TRACE, as_json, batches
from prometheus_client import CollectorRegistry, disable_created_metrics

from ragpulse._native import KeyFilter
from ragpulse.app.components import tune_gc
from ragpulse.app.service import Service
from ragpulse.collector.telemetry.exposition import TextExposition
from ragpulse.config import Config, parse_config
from ragpulse.sources.otlp.evaluations import feedback_of
from ragpulse.sources.otlp.keys import MAPPED_KEYS
from ragpulse.sources.otlp.spans import decode_json, decode_protobuf


def config() -> Config:
    data = msgspec.to_builtins(Config())
    data["results"]["sqlite_path"] = None
    return parse_config(data)


def once(bodies: list[bytes], spans_total: int, keys: KeyFilter, json: bool = False) -> dict[str, float]:
    seconds: dict[str, float] = defaultdict(float)

    async def run() -> None:
        service = Service(config(), CollectorRegistry())
        intake, pipeline = service.spans, service.pipeline
        assembler, decoder = intake.assembler, intake._decoder  # noqa: SLF001 - the profile times internals
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
        writer = TextExposition(service.registry)
        t0 = time.perf_counter()
        exposition = writer.render()
        seconds["one scrape"] = time.perf_counter() - t0
        seconds["series"] = sum(1 for line in exposition.splitlines() if line and not line.startswith(b"#"))
        traces = service.registry.get_sample_value("ragpulse_events_processed_total", {"type": "trace"})
        assert traces == spans_total // SPANS_PER_TRACE, traces

    asyncio.run(run())
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--app-attributes", action="store_true",
                        help="spans also carry what an instrumentor records and no rule reads (an embedding vector, mime types)")
    parser.add_argument("--keep-all", action="store_true", help="decode every span attribute, not only the mapping's keys")
    parser.add_argument("--json", action="store_true", help="the same requests in OTLP/JSON, as an HTTP exporter sends them")
    args = parser.parse_args()
    bodies = batches(args.traces, app_attributes=args.app_attributes)
    if args.json:
        bodies = [as_json(body) for body in bodies]
    keys = KeyFilter(set(), [""]) if args.keep_all else MAPPED_KEYS
    spans_total = args.traces * SPANS_PER_TRACE
    tune_gc()  # and no _created series: as `ragpulse run` does
    disable_created_metrics()
    gc.collect()
    runs = [once(bodies, spans_total, keys, args.json) for _ in range(args.repeats)]
    print(f"python {platform.python_version()}, {args.traces} traces of {SPANS_PER_TRACE} spans, "
          f"{len(bodies)} requests ({sum(map(len, bodies)) / spans_total:.0f} B a span), median of {args.repeats}, "
          f"{'every attribute' if args.keep_all else 'the mapping keys'} decoded{', OTLP/JSON' if args.json else ''}")
    print("| stage | µs per span | µs per trace | share |")
    print("|---|---|---|---|")
    stages = [k for k in runs[0] if k not in ("one scrape", "series")]
    total = sum(statistics.median(r[k] for r in runs) for k in stages)
    for stage in stages:
        s = statistics.median(r[stage] for r in runs)
        print(f"| {stage} | {1e6 * s / spans_total:.2f} | {1e6 * s / args.traces:.1f} | {100 * s / total:.0f}% |")
    print(f"| total | {1e6 * total / spans_total:.2f} | {1e6 * total / args.traces:.1f} | |")
    print(f"one /metrics exposition after the run: {1e3 * statistics.median(r['one scrape'] for r in runs):.2f} ms "
          f"for {int(runs[0]['series'])} series")


if __name__ == "__main__":
    main()
