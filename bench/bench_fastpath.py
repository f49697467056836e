"""Fast path in-process: decode + validate + the pipeline stages + Prometheus, events/s on one core.

    python bench/bench_fastpath.py [--events 200000] [--batch 500] [--stages default|bare|no_judge] [--per-stage]
    python bench/bench_fastpath.py --payload FILE --repeats 1 --peer COMMIT [--rounds 3]

default: the shipped configuration (dedup, fallback, local scorers, feedback join, judge sampler); no_judge:
the same with judge.mode off (no sampler); bare:
dedup, fallback and the exporter only (local_scorers.enabled false, judge.mode off, satisfaction.enabled false). The judge workers do not
run here: the sampler's queue fills and the rest is counted as skipped, as under overload. With --peer, this tree
and another (the previous main, issue 47) in alternating rounds on the same payload file (bench/peer.py).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import platform
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
from common import sized_events
from peer import add_options, compare, write_figures
from prometheus_client import CollectorRegistry

from ragpulse.app.components import tune_gc
from ragpulse.app.service import Service
from ragpulse.config import Config, parse_config


def config(stages: str) -> Config:
    data = msgspec.to_builtins(Config())
    data["results"]["sqlite_path"] = None
    if stages in ("bare", "no_judge"):
        data["judge"]["mode"] = "off"
    if stages == "bare":
        data["local_scorers"]["enabled"] = False
        data["satisfaction"]["enabled"] = False
    return parse_config(data)


def load_payload(events: int, path: str | None) -> list[bytes]:
    """The events, from `path` when it exists (so two versions of ragpulse are measured on the same
    bytes), else generated (and written there)."""
    if path and Path(path).exists():
        payload = Path(path).read_bytes().split(b"\n")
        assert len(payload) == events, f"{path} holds {len(payload)} events, not {events}"
        return payload
    payload = sized_events(events)
    if path:
        Path(path).write_bytes(b"\n".join(payload))
    return payload


def timed(name: str, call: Callable[..., Any], spent: dict[str, float],
          clock: Callable[[], float] = time.perf_counter) -> Callable[..., Any]:
    """`call`, the time it takes on `clock` added to `spent[name]` (time.thread_time: its CPU on whatever thread runs it)."""
    def run(argument: Any) -> Any:
        start = clock()
        try:
            return call(argument)
        finally:
            spent[name] += clock() - start
    return run


def time_each_stage(pipeline: Any, spent: dict[str, float]) -> None:
    """Wraps each stage, batch preparation and exporter of `pipeline` in a timer (about 0.2 us a call more)."""
    pipeline._stages = [(name, timed(name, stage, spent)) for name, stage in pipeline._stages]  # noqa: SLF001
    pipeline._preparers = [(name, timed(f"{name} (batch prepare)", prepare, spent)) for name, prepare in pipeline._preparers]  # noqa: SLF001
    pipeline._exporters = [(name, timed(f"exporter {name}", exporter, spent)) for name, exporter in pipeline._exporters]  # noqa: SLF001


def measure(payload: list[bytes], batch: int, repeats: int, stages: str,
            spent: dict[str, float] | None = None) -> tuple[float, float]:
    """Median seconds spent decoding and in the pipeline stages, over `repeats` fresh services; with `spent`,
    the seconds of each stage too (summed over the repeats)."""
    events = len(payload)
    bodies = [b"\n".join(payload[i : i + batch]) for i in range(0, events, batch)]

    async def once() -> tuple[float, float]:
        # A fresh service per repeat: the dedup window must not see the events twice.
        service = Service(config(stages), CollectorRegistry())
        decoder, pipeline = service.ingest._decoder, service.pipeline  # noqa: SLF001 - the bench drives internals directly
        if spent is not None:
            time_each_stage(pipeline, spent)
        decode_s = process_s = 0.0
        for body in bodies:
            t0 = time.perf_counter()
            decoded = decoder.decode_body(body, ndjson=True)
            t1 = time.perf_counter()
            pipeline.process(decoded.envelopes)
            t2 = time.perf_counter()
            decode_s += t1 - t0
            process_s += t2 - t1
        processed = service.registry.get_sample_value("ragpulse_events_processed_total", {"type": "trace"})
        assert processed == events, processed
        return decode_s, process_s

    results = []
    tune_gc()  # as `ragpulse run` does
    gc.collect()
    for _ in range(repeats):
        results.append(asyncio.run(once()))
    return statistics.median(r[0] for r in results), statistics.median(r[1] for r in results)


def run(events: int, batch: int, repeats: int, stages: str, payload_path: str | None, per_stage: bool) -> dict[str, float]:
    payload = load_payload(events, payload_path)
    mean_size = sum(map(len, payload)) / len(payload)
    spent: dict[str, float] | None = defaultdict(float) if per_stage else None
    decode, process = measure(payload, batch, repeats, stages, spent)
    print(f"python {platform.python_version()} on {platform.machine()}, {events} events of {mean_size:.0f} B, "
          f"NDJSON batches of {batch}, stages: {stages}")
    print(f"decode+validate : {events / decode:>10,.0f} events/s  ({1e6 * decode / events:.1f} us/event)")
    print(f"pipeline stages : {events / process:>10,.0f} events/s  ({1e6 * process / events:.1f} us/event)")
    print(f"fast path total : {events / (decode + process):>10,.0f} events/s  ({1e6 * (decode + process) / events:.1f} us/event)")
    for name, seconds in (spent or {}).items():
        print(f"  {name:<32} {1e6 * seconds / repeats / events:6.1f} us/event")
    return {"fast path events/s": events / (decode + process), "decode+validate events/s": events / decode,
            "pipeline stages events/s": events / process}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--stages", choices=["default", "bare", "no_judge"], default="default")
    parser.add_argument("--per-stage", action="store_true", help="also time each stage (timers add ~0.2 us a call)")
    parser.add_argument("--payload", help="read the events from this file (NDJSON), or write them there first")
    add_options(parser)
    args = parser.parse_args()
    if args.peer is None:
        figures = run(args.events, args.batch, args.repeats, args.stages, args.payload, args.per_stage)
        if args.figures_to:
            write_figures(args.figures_to, figures)
        return
    if args.per_stage:
        parser.error("--per-stage times one tree: leave it out of a --peer run")
    with tempfile.TemporaryDirectory() as tmp:
        payload = str(Path(args.payload or Path(tmp) / "events.ndjson").resolve())
        load_payload(args.events, payload)  # written once here: both trees read these bytes
        compare(Path(__file__).resolve(), ["--events", str(args.events), "--batch", str(args.batch), "--repeats",
                                           str(args.repeats), "--stages", args.stages, "--payload", payload],
                args.peer, args.rounds)


if __name__ == "__main__":
    main()
