"""From an app's last span to the event counted in /metrics: the OTLP path's latency.

    python bench/bench_otlp_latency.py [--traces 20]

An app (this process) records LlamaIndex-shaped traces one at a time with the real SDK and the real
OTLP/HTTP exporter, behind a SimpleSpanProcessor (each span exported as it ends) and behind a
BatchSpanProcessor with its defaults (an export every 5 s, what most apps run); a `ragpulse run` with
the shipped defaults (assembly grace 1 s) counts them. For each trace: the time from its root span's
end to ragpulse_traces_total counting it, polled every 10 ms.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import counter_total, free_port, wait_ready
from helpers.otlp_shapes import openinference_trace, provider  # the receiver tests' trace shape
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanProcessor


def measure(url: str, processor: SpanProcessor, traces: int) -> list[float]:
    tracer_provider = provider(processor)
    latencies = []
    for _ in range(traces):
        before = counter_total(url, "ragpulse_traces_total")
        openinference_trace(tracer_provider)
        ended = time.perf_counter()  # the root span has just ended
        while counter_total(url, "ragpulse_traces_total") <= before:
            time.sleep(0.01)
        latencies.append(time.perf_counter() - ended)
    tracer_provider.shutdown()
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=20)
    args = parser.parse_args()
    port, otlp_port, grpc_port = free_port(), free_port(), free_port()
    url = f"http://127.0.0.1:{port}"
    exe = shutil.which("ragpulse", path=str(Path(sys.executable).parent)) or "ragpulse"
    server = subprocess.Popen(
        [exe, "run", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--set", "otlp.host=127.0.0.1",
         "--set", f"otlp.http_port={otlp_port}", "--set", f"otlp.grpc_port={grpc_port}", "--set", "results.sqlite_path=null"],
        env={**os.environ, "RAGPULSE_LOGGING__FORMAT": "json"}, stdout=subprocess.DEVNULL,
    )
    try:
        wait_ready(url)
        endpoint = f"http://127.0.0.1:{otlp_port}/v1/traces"
        results = {
            "SimpleSpanProcessor": measure(url, SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint)), args.traces),
            "BatchSpanProcessor (defaults: 5 s schedule delay)": measure(
                url, BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)), max(3, args.traces // 4)),
        }
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    print(f"python {platform.python_version()} on {platform.machine()}; assembly grace 1 s (otlp.grace_seconds)")
    for name, latencies in results.items():
        print(f"{name}: {len(latencies)} traces, last span to counted: median {statistics.median(latencies):.2f} s, "
              f"min {min(latencies):.2f} s, max {max(latencies):.2f} s")


if __name__ == "__main__":
    main()
