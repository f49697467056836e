"""The cost of one /metrics scrape: ragpulse's text writer against prometheus_client's, same registry, same run;
then the CPU a running sidecar spends on one scrape over HTTP.

    python bench/bench_scrape.py [--routes 1 4 8 24]

In-process: the shipped defaults take 20,000 events of the fast-path bench payload, their routes cycled
over `--routes` values (every label set multiplies the quality series), then the registry is written 50
times by each writer; the median per scrape and the series written. Over HTTP: a `ragpulse run` with the
shipped defaults gets the same events on POST /v1/events; once its judges are idle, 5 sets of 20 scrapes
are timed in its CPU (/proc; ticks of 10 ms) and the median per scrape is given.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import msgspec
from bench_otlp import wait_http
from bench_otlp_collector import scrape_cpu_ms
from common import free_port, sized_events
from prometheus_client import CollectorRegistry, disable_created_metrics, generate_latest

from ragpulse.app.service import Service
from ragpulse.collector.telemetry.exposition import TextExposition
from ragpulse.config import Config, parse_config


def median_ms(write: object, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        write()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return 1e3 * statistics.median(times)


def with_routes(payload: list[bytes], routes: int) -> list[bytes]:
    events = []
    for i, raw in enumerate(payload):
        event = msgspec.json.decode(raw)
        event["route"] = f"route-{i % routes}"
        events.append(msgspec.json.encode(event))
    return events


def over_http(events: list[bytes]) -> tuple[int, float]:
    """Series and CPU ms per scrape of a running sidecar that took `events`."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as workdir:
        server = subprocess.Popen([str(Path(sys.executable).parent / "ragpulse"), "run", "--host", "127.0.0.1", "--port",
                                   str(port), "--log-level", "warning", "--set", "otlp.enabled=false"], cwd=workdir)
        try:
            wait_http(url + "/readyz")
            for i in range(0, len(events), 500):
                request = urllib.request.Request(url + "/v1/events", data=b"\n".join(events[i : i + 500]), method="POST",
                                                 headers={"Content-Type": "application/x-ndjson"})
                urllib.request.urlopen(request, timeout=60).read()
            cpu = scrape_cpu_ms(server.pid, url + "/metrics")
            text = urllib.request.urlopen(url + "/metrics", timeout=10).read()
            return sum(1 for line in text.splitlines() if line and not line.startswith(b"#")), cpu
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)


async def measure(routes: int, payload: list[bytes]) -> tuple[int, float, float]:
    data = msgspec.to_builtins(Config())
    data["results"]["sqlite_path"] = None
    service = Service(parse_config(data), CollectorRegistry())
    events = with_routes(payload, routes)
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
    disable_created_metrics()  # as `ragpulse run` does
    payload = sized_events(20_000)
    print(f"python {platform.python_version()}, shipped defaults after 20,000 events, median of 50 scrapes")
    print("| routes | series | ragpulse's writer | prometheus_client | ratio |")
    print("|---|---|---|---|---|")
    for routes in args.routes:
        series, ours, theirs = asyncio.run(measure(routes, payload))
        print(f"| {routes} | {series:,} | {ours:.2f} ms | {theirs:.2f} ms | {theirs / ours:.1f}x |", flush=True)
    print("\nOver HTTP, a running sidecar's CPU per scrape:")
    print("| routes | series | CPU per scrape |")
    print("|---|---|---|")
    for routes in args.routes:
        series, cpu = over_http(with_routes(payload, routes))
        print(f"| {routes} | {series:,} | {cpu:.1f} ms |", flush=True)


if __name__ == "__main__":
    main()
