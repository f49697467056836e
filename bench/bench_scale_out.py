"""Scale-out throughput: one and two ragpulse replicas behind the same OpenTelemetry Collector load balancer.

    python bench/bench_scale_out.py [--traces 20000] [--rounds 3] [--connections 4]

The Collector (bench/otelcol's build: otlp receiver -> load_balancing exporter, trace-id routing, static
resolver) takes the bench payload over OTLP/HTTP from one client process and routes each trace to a replica over
OTLP/gRPC. Each replica runs `ragpulse run` at its shipped defaults, pinned to a core of its own with taskset
(replica 0 on CPU 0, replica 1 on CPU 1); the Collector and the client are not pinned: on a 2-core machine they
share the replicas' cores, so their CPU is reported apart. Rounds alternate one and two replicas. Per run: spans/s
shown (every trace counted in ragpulse_traces_total over the replicas, from the first request), CPU seconds per
100,000 spans of the replicas, of the Collector and of the client.
"""

from __future__ import annotations

import asyncio
import os
import platform
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench_otlp import post_http, wait_http
from bench_otlp_collector import collector_bench, cpu_seconds
from common import counter_total, free_port
from helpers.otlp_payload import SPANS_PER_TRACE

COLLECTOR_CONFIG = """
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{http_port}
exporters:
  load_balancing:
    routing_key: traceID
    protocol:
      otlp:
        timeout: 10s
        tls:
          insecure: true
    resolver:
      static:
        hostnames: [{hostnames}]
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [load_balancing]
"""


@dataclass
class Run:
    shown_s: float
    replicas_cpu_s: float
    collector_cpu_s: float
    client_cpu_s: float


def start_replica(workdir: Path, cpu: int) -> tuple[subprocess.Popen[bytes], str, int]:
    port, http_port, grpc_port = free_port(), free_port(), free_port()
    exe = str(Path(sys.executable).parent / "ragpulse")
    process = subprocess.Popen(
        ["taskset", "-c", str(cpu), exe, "run", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
         "--set", f"otlp.http_port={http_port}", "--set", f"otlp.grpc_port={grpc_port}", "--set", "otlp.host=127.0.0.1",
         "--set", "otlp.grace_seconds=2", "--set", f"results.sqlite_path={workdir / f'badcases-{cpu}.sqlite3'}"],
        cwd=workdir, env={**os.environ, "RAGPULSE_LOGGING__FORMAT": "json"},
    )
    url = f"http://127.0.0.1:{port}"
    wait_http(url + "/readyz")
    return process, url, grpc_port


def wait_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def client_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(binary: str, replicas: int, bodies: list[bytes], traces: int, connections: int) -> Run:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        started = [start_replica(workdir, cpu) for cpu in range(replicas)]
        http_port = free_port()
        config = workdir / "collector.yaml"
        config.write_text(COLLECTOR_CONFIG.format(
            http_port=http_port, hostnames=", ".join(f"127.0.0.1:{grpc}" for _, _, grpc in started)))
        collector = subprocess.Popen([binary, "--config", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_port(http_port)
            before = [cpu_seconds(p.pid) for p, _, _ in started], cpu_seconds(collector.pid), client_cpu_seconds()
            began = time.perf_counter()
            asyncio.run(post_http(f"http://127.0.0.1:{http_port}/v1/traces", bodies, connections))
            client = client_cpu_seconds() - before[2]
            while sum(counter_total(url, "ragpulse_traces_total") for _, url, _ in started) < traces:
                time.sleep(0.05)
            shown = time.perf_counter() - began
            return Run(shown, sum(cpu_seconds(p.pid) - b for (p, _, _), b in zip(started, before[0])),
                       cpu_seconds(collector.pid) - before[1], client)
        finally:
            collector.send_signal(signal.SIGTERM)
            collector.wait(timeout=60)
            for process, _, _ in started:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=60)


def main() -> None:
    args, binary, bodies, spans = collector_bench()
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, {args.traces} traces x {SPANS_PER_TRACE} spans = "
          f"{spans:,} spans in {len(bodies)} requests, OTLP/HTTP to the Collector over {args.connections} connections")
    print("| round | replicas | shown spans/s | replicas' CPU s per 100k spans | Collector's | client's |")
    print("|---|---|---|---|---|---|")
    results: dict[int, list[Run]] = {1: [], 2: []}
    for round_ in range(1, args.rounds + 1):
        for replicas in (1, 2):  # alternating, so drift of the machine hits both
            result = run(binary, replicas, bodies, args.traces, args.connections)
            results[replicas].append(result)
            per = 100_000 / spans
            print(f"| {round_} | {replicas} | {spans / result.shown_s:,.0f} | {result.replicas_cpu_s * per:.2f} | "
                  f"{result.collector_cpu_s * per:.2f} | {result.client_cpu_s * per:.2f} |", flush=True)
    median = statistics.median
    one, two = (median(spans / r.shown_s for r in results[n]) for n in (1, 2))
    print(f"two replicas / one (medians of shown spans/s): {two / one:.2f}x")
    cost = median(r.replicas_cpu_s / spans for r in results[2]) * 1e6
    print(f"projection: {1e6 / cost:,.0f} spans/s per core a replica (its CPU per span, {cost:.1f} µs, with 2 replicas)")


if __name__ == "__main__":
    main()
