"""The cost of one /metrics scrape: ragpulse's text writer against prometheus_client's, same registry, same run.

    python bench/bench_scrape.py [--routes 1 4 8 24]

The shipped defaults take 20,000 events of the fast-path bench payload, their routes cycled over
`--routes` values (every label set multiplies the quality series), then the registry is written
50 times by each writer; the table gives the median per scrape and the series written.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import time

import msgspec
from common import sized_events
from prometheus_client import CollectorRegistry, generate_latest

from ragpulse.collector.config import Config, parse_config
from ragpulse.collector.service import Service
from ragpulse.exporters.exposition import TextExposition


def median_ms(write: object, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        write()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return 1e3 * statistics.median(times)


async def measure(routes: int, payload: list[bytes]) -> tuple[int, float, float]:
    data = msgspec.to_builtins(Config())
    data["results"]["sqlite_path"] = None
    service = Service(parse_config(data), CollectorRegistry())
    events = []
    for i, raw in enumerate(payload):
        event = msgspec.json.decode(raw)
        event["route"] = f"route-{i % routes}"
        events.append(msgspec.json.encode(event))
    for i in range(0, len(events), 500):
        decoded = service.ingest._decoder.decode_body(b"\n".join(events[i : i + 500]), ndjson=True)  # noqa: SLF001
        service.pipeline.process(decoded.envelopes)
    exposition = TextExposition(service.registry)
    series = sum(1 for line in exposition.render().splitlines() if line and not line.startswith(b"#"))
    ours = median_ms(exposition.render, 50)
    theirs = median_ms(lambda: generate_latest(service.registry), 50)
    return series, ours, theirs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--routes", type=int, nargs="+", default=[1, 4, 8, 24])
    args = parser.parse_args()
    payload = sized_events(20_000)
    print(f"python {platform.python_version()}, shipped defaults after 20,000 events, median of 50 scrapes")
    print("| routes | series | ragpulse's writer | prometheus_client | ratio |")
    print("|---|---|---|---|---|")
    for routes in args.routes:
        series, ours, theirs = asyncio.run(measure(routes, payload))
        print(f"| {routes} | {series:,} | {ours:.2f} ms | {theirs:.2f} ms | {theirs / ours:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
