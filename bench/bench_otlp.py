"""OTLP ingest: spans/s into assembled events and metrics, over OTLP/HTTP (protobuf) and gRPC.

    python bench/bench_otlp.py [--traces 20000] [--connections 4] [--payload FILE] [--phoenix PATH/TO/phoenix]
    python bench/bench_otlp.py --traces 20000 --peer COMMIT [--rounds 3]

LlamaIndex-shaped traces of 8 spans, in requests of up to 512 spans (the SDK's batch size),
sent by a client process to a `ragpulse run` subprocess; the clock stops when
ragpulse_traces_total reaches the number of traces. With --phoenix the same payload goes to
Arize Phoenix (`phoenix serve`, installed in a virtualenv of its own with `pip install
arize-phoenix`; its OTLP/HTTP and gRPC endpoints) in the same run; its clock stops when its
GraphQL API counts every span stored. With --peer, this tree and another (a commit or a directory) in alternating
rounds on the same payload file, the `ragpulse run` of each (bench/peer.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import aiohttp
import grpc
from common import counter_total, free_port
from helpers.otlp_payload import SPANS_PER_TRACE, batches
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from peer import add_options, compare, write_figures


def load_requests(traces: int, path: str | None) -> list[bytes]:
    """The payload's requests, from `path` when it exists (so two versions of ragpulse get the same bytes), else
    made (and written there): the number of traces, then each request's length and protobuf body."""
    if path and Path(path).exists():
        data = Path(path).read_bytes()
        (stored,) = struct.unpack_from(">Q", data)
        assert stored == traces, f"{path} holds {stored} traces, not {traces}"
        bodies, offset = [], 8
        while offset < len(data):
            (size,) = struct.unpack_from(">I", data, offset)
            bodies.append(data[offset + 4 : offset + 4 + size])
            offset += 4 + size
        return bodies
    bodies = batches(traces)
    if path:
        Path(path).write_bytes(struct.pack(">Q", traces) + b"".join(struct.pack(">I", len(b)) + b for b in bodies))
    return bodies


async def post_http(url: str, bodies: list[bytes], connections: int) -> None:
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    for body in bodies:
        queue.put_nowait(body)

    async def worker(session: aiohttp.ClientSession) -> None:
        while not queue.empty():
            body = queue.get_nowait()
            while True:
                async with session.post(url, data=body, headers={"Content-Type": "application/x-protobuf"}) as response:
                    await response.read()
                    if response.status == 200:
                        break
                    if response.status not in (429, 503):
                        raise RuntimeError(f"HTTP {response.status}")
                    await asyncio.sleep(0.05)

    async with aiohttp.ClientSession() as session:
        await asyncio.gather(*(worker(session) for _ in range(connections)))


async def post_grpc(target: str, bodies: list[bytes], connections: int) -> None:
    requests = [ExportTraceServiceRequest.FromString(body) for body in bodies]
    queue: asyncio.Queue[ExportTraceServiceRequest] = asyncio.Queue()
    for request in requests:
        queue.put_nowait(request)
    async with grpc.aio.insecure_channel(target, options=[("grpc.max_send_message_length", 64 << 20)]) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)

        async def worker() -> None:
            while not queue.empty():
                request = queue.get_nowait()
                while True:
                    try:
                        await stub.Export(request, timeout=30)
                        break
                    except grpc.aio.AioRpcError as exc:
                        if exc.code() not in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE):
                            raise
                        await asyncio.sleep(0.05)

        await asyncio.gather(*(worker() for _ in range(connections)))


def ragpulse_run(protocol: str, bodies: list[bytes], traces: int, connections: int) -> float:
    port, http_port, grpc_port = free_port(), free_port(), free_port()
    exe = shutil.which("ragpulse", path=str(Path(sys.executable).parent)) or "ragpulse"
    server = subprocess.Popen(
        [exe, "run", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
         "--set", f"otlp.http_port={http_port}", "--set", f"otlp.grpc_port={grpc_port}", "--set", "otlp.host=127.0.0.1",
         "--set", "otlp.grace_seconds=0.2", "--set", "pipeline.queue_capacity_events=100000"],
        env={**os.environ, "RAGPULSE_LOGGING__FORMAT": "json"},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(url + "/readyz")
        started = time.perf_counter()
        if protocol == "http":
            asyncio.run(post_http(f"http://127.0.0.1:{http_port}/v1/traces", bodies, connections))
        else:
            asyncio.run(post_grpc(f"127.0.0.1:{grpc_port}", bodies, connections))
        while counter_total(url, "ragpulse_traces_total") < traces:
            time.sleep(0.02)
        return time.perf_counter() - started - 0.2  # the grace period is a wait, not work
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)


def phoenix_spans(url: str) -> int:
    request = urllib.request.Request(url + "/graphql", method="POST", headers={"Content-Type": "application/json"},
                                     data=b'{"query": "{ projects { edges { node { recordCount } } } }"}')
    with urllib.request.urlopen(request, timeout=30) as response:
        data = json.loads(response.read())
    return sum(edge["node"]["recordCount"] for edge in data["data"]["projects"]["edges"])


def phoenix_run(phoenix: str, protocol: str, bodies: list[bytes], spans: int, connections: int) -> float:
    port, grpc_port = free_port(), free_port()
    with tempfile.TemporaryDirectory() as workdir:
        server = subprocess.Popen(
            [phoenix, "serve"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc_port), "PHOENIX_WORKING_DIR": workdir,
                 "PHOENIX_TELEMETRY_ENABLED": "false", "PHOENIX_HOST": "127.0.0.1"},
        )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_http(url + "/healthz", timeout=120)
            started = time.perf_counter()
            if protocol == "http":
                asyncio.run(post_http(url + "/v1/traces", bodies, connections))
            else:
                asyncio.run(post_grpc(f"127.0.0.1:{grpc_port}", bodies, connections))
            while phoenix_spans(url) < spans:
                time.sleep(0.1)
            return time.perf_counter() - started
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)


def wait_http(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=20_000)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--phoenix", help="path of the `phoenix` command, to measure Arize Phoenix on the same payload")
    parser.add_argument("--payload", help="read the requests from this file, or write them there first")
    add_options(parser)
    args = parser.parse_args()
    if args.peer is not None:
        if args.phoenix:
            parser.error("--phoenix and --peer: one peer a run")
        with tempfile.TemporaryDirectory() as tmp:
            payload = str(Path(args.payload or Path(tmp) / "requests.bin").resolve())
            load_requests(args.traces, payload)  # written once here: both trees get these bytes
            compare(Path(__file__).resolve(), ["--traces", str(args.traces), "--connections", str(args.connections),
                                               "--payload", payload], args.peer, args.rounds)
        return
    bodies = load_requests(args.traces, args.payload)
    spans = args.traces * SPANS_PER_TRACE
    print(f"python {platform.python_version()}, {args.traces} traces x {SPANS_PER_TRACE} spans = {spans} spans "
          f"in {len(bodies)} requests of <= 512 spans ({sum(map(len, bodies)) / len(bodies) / 1024:.0f} KiB each)")
    figures = {}
    for protocol in ("http", "grpc"):
        ours = ragpulse_run(protocol, bodies, args.traces, args.connections)
        figures[f"OTLP/{protocol} spans/s"] = spans / ours
        print(f"ragpulse OTLP/{protocol:4}: {spans / ours:>9,.0f} spans/s  ({args.traces / ours:,.0f} traces/s, {ours:.2f} s)")
        if args.phoenix:
            theirs = phoenix_run(args.phoenix, protocol, bodies, spans, args.connections)
            print(f"Phoenix  OTLP/{protocol:4}: {spans / theirs:>9,.0f} spans/s  ({theirs:.2f} s)  -> ragpulse {theirs / ours:.1f}x")
    if args.figures_to:
        write_figures(args.figures_to, figures)


if __name__ == "__main__":
    main()
