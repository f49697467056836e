"""OTLP/HTTP ingest against the OpenTelemetry Collector: the same payload, the same run, alternating rounds.

    python bench/bench_otlp_collector.py [--traces 20000] [--rounds 3] [--connections 4] [--payload realistic]
                                         [--set KEY=VALUE ...]

The Collector (v0.161.0 since the scale-out issue, v0.165.0 in the runs recorded before it; built by
bench/otelcol/build.sh with the Collector Builder from the Go module proxy: otlp receiver -> span_metrics connector (200 ms flush) -> prometheus exporter) is the floor for
the ingestion part alone: it computes no quality signal. ragpulse runs with its shipped defaults (local
scorers, the local judge, the bad-case store in a temporary directory). Both get the bench payload
(LlamaIndex-shaped traces of 8 spans, requests of up to 512 spans; one question whose answer every trace gets
wrong, so nearly all are judged) or, with --payload realistic, the same shapes with distinct questions whose answers
are grounded but for ~5% (about 1,500 of 20,000 judged: tests/helpers/otlp_realistic.py) from one client process
over 4 connections. Per run: spans/s accepted (the last request answered) and shown (the metrics count every
span: ragpulse_traces_total every trace, the Collector's calls counter every span), CPU seconds per
100,000 spans (utime + stime from /proc, from the first request to shown), peak and idle RSS (VmHWM,
VmRSS), the CPU of one /metrics scrape after the run (the median of 20), and the traces ragpulse judged
(ragpulse_judge_judged_total once idle).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path

from bench_otlp import post_http, wait_http
from common import counter_total, free_port
from helpers.otlp_payload import PAYLOADS, SPANS_PER_TRACE, batches

HERE = Path(__file__).resolve().parent
COLLECTOR_CONFIG = """
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{http_port}
connectors:
  spanmetrics:
    metrics_flush_interval: 200ms
exporters:
  prometheus:
    endpoint: 127.0.0.1:{metrics_port}
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [spanmetrics]
    metrics:
      receivers: [spanmetrics]
      exporters: [prometheus]
"""


@dataclass
class Run:
    accepted_s: float
    shown_s: float
    cpu_s: float
    peak_rss_mb: float
    idle_rss_mb: float
    scrape_cpu_ms: float
    judged: float | None = None  # ragpulse's traces judged, read once it is idle


def built_collector() -> str:
    """The bench's Collector binary, built first when missing or out of date (bench/otelcol/build.sh)."""
    return subprocess.run([str(HERE / "otelcol" / "build.sh")], check=True, capture_output=True, text=True).stdout.strip()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} for {pid}")


def collector_calls(url: str) -> float:
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("traces_span_metrics_calls_total"))


def wait_idle(pid: int, timeout: float = 120) -> None:
    """Until the server uses under 2% of a core for a second: judges and writers done with the run's work."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = cpu_seconds(pid)
        time.sleep(1.0)
        if cpu_seconds(pid) - before < 0.02:
            return
    raise RuntimeError(f"process {pid} did not go idle in {timeout} s")


def scrape_cpu_ms(pid: int, url: str) -> float:
    """CPU the server spends on one scrape once idle, the median of 5 sets of 20 (CPU ticks are 10 ms)."""
    wait_idle(pid)
    samples = []
    for _ in range(5):
        before = cpu_seconds(pid)
        for _ in range(20):
            urllib.request.urlopen(url, timeout=10).read()
        samples.append((cpu_seconds(pid) - before) / 20)
    return 1e3 * statistics.median(samples)


def measure(server: subprocess.Popen[bytes], send_url: str, shown: callable, metrics_url: str,  # type: ignore[valid-type]
            bodies: list[bytes], connections: int) -> Run:
    idle = rss_mb(server.pid, "VmRSS")
    cpu_before = cpu_seconds(server.pid)
    started = time.perf_counter()
    asyncio.run(post_http(send_url, bodies, connections))
    accepted = time.perf_counter() - started
    while not shown():
        time.sleep(0.01)
    shown_s = time.perf_counter() - started
    cpu = cpu_seconds(server.pid) - cpu_before
    return Run(accepted, shown_s, cpu, rss_mb(server.pid, "VmHWM"), idle, scrape_cpu_ms(server.pid, metrics_url))


def collector_run(binary: str, bodies: list[bytes], spans: int, connections: int) -> Run:
    http_port, metrics_port = free_port(), free_port()
    with tempfile.TemporaryDirectory() as workdir:
        config = Path(workdir) / "collector.yaml"
        config.write_text(COLLECTOR_CONFIG.format(http_port=http_port, metrics_port=metrics_port))
        server = subprocess.Popen([binary, "--config", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
        try:
            wait_http(metrics_url)
            return measure(server, f"http://127.0.0.1:{http_port}/v1/traces", lambda: collector_calls(metrics_url) >= spans,
                           metrics_url, bodies, connections)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)


def ragpulse_run(bodies: list[bytes], traces: int, connections: int, settings: list[str] | None = None) -> Run:
    """`settings`: KEY=VALUE overrides of the shipped defaults (`ragpulse run --set`), e.g. judge.mode=off."""
    port, http_port, grpc_port = free_port(), free_port(), free_port()
    exe = str(Path(sys.executable).parent / "ragpulse")
    with tempfile.TemporaryDirectory() as workdir:
        server = subprocess.Popen(
            [exe, "run", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
             "--set", f"otlp.http_port={http_port}", "--set", f"otlp.grpc_port={grpc_port}", "--set", "otlp.host=127.0.0.1",
             *[part for setting in settings or [] for part in ("--set", setting)]],
            cwd=workdir, env={**os.environ, "RAGPULSE_LOGGING__FORMAT": "json"},
        )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_http(url + "/readyz")
            run = measure(server, f"http://127.0.0.1:{http_port}/v1/traces",
                          lambda: counter_total(url, "ragpulse_traces_total") >= traces, url + "/metrics", bodies, connections)
            return replace(run, judged=counter_total(url, "ragpulse_judge_judged_total"))
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)


def collector_bench() -> tuple[argparse.Namespace, str, list[bytes], int]:
    """What the benches against the Collector share: their options (--traces, --rounds, --connections), the built
    Collector, the payload's requests and its span count."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--payload", choices=PAYLOADS, default="bench",
                        help="bench: every answer wrong, nearly every trace judged; realistic: ~1,500 of 20,000 judged")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a ragpulse default for the run (where its CPU goes: judge.mode=off, ...)")
    args = parser.parse_args()
    return args, built_collector(), batches(args.traces, payload=args.payload), args.traces * SPANS_PER_TRACE


def main() -> None:
    args, binary, bodies, spans = collector_bench()
    print(f"python {platform.python_version()}, {args.payload} payload, {args.traces} traces x {SPANS_PER_TRACE} spans = "
          f"{spans:,} spans in {len(bodies)} requests, OTLP/HTTP protobuf over {args.connections} connections"
          + (f", ragpulse with {' '.join(args.set)}" if args.set else ""))
    print("| round | who | accepted spans/s | shown spans/s | CPU s per 100k spans | peak RSS MB | idle RSS MB | scrape CPU ms "
          "| judged |")
    print("|---|---|---|---|---|---|---|---|---|")
    results: dict[str, list[Run]] = {"collector": [], "ragpulse": []}
    for round_ in range(1, args.rounds + 1):
        for who in ("collector", "ragpulse"):  # alternating, so drift of the machine hits both
            run = (collector_run(binary, bodies, spans, args.connections) if who == "collector"
                   else ragpulse_run(bodies, args.traces, args.connections, args.set))
            results[who].append(run)
            print(f"| {round_} | {who} | {spans / run.accepted_s:,.0f} | {spans / run.shown_s:,.0f} | "
                  f"{run.cpu_s * 100_000 / spans:.2f} | {run.peak_rss_mb:.0f} | {run.idle_rss_mb:.0f} | {run.scrape_cpu_ms:.1f} | "
                  f"{'' if run.judged is None else f'{run.judged:,.0f}'} |",
                  flush=True)
    ours, theirs = results["ragpulse"], results["collector"]
    median = statistics.median
    print(f"ratios (ragpulse / Collector, medians): shown spans/s {median(spans / r.shown_s for r in ours) / median(spans / r.shown_s for r in theirs):.2f}x, "
          f"CPU per span {median(r.cpu_s for r in ours) / median(r.cpu_s for r in theirs):.1f}x, "
          f"peak RSS {median(r.peak_rss_mb for r in ours) / median(r.peak_rss_mb for r in theirs):.1f}x")


if __name__ == "__main__":
    main()
