"""Fast path over HTTP: NDJSON batches POSTed to a `ragpulse run` subprocess, events/s until processed.

The server runs in its own process (one core); the client is another process
sending pre-encoded bodies over several connections (the other core).

    python bench/bench_http.py [--events 100000] [--batch 500] [--connections 4]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
from common import free_port, processed_total, sized_events, wait_ready


async def post_all(url: str, bodies: list[bytes], connections: int) -> int:
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    for body in bodies:
        queue.put_nowait(body)
    retried = 0

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal retried
        while not queue.empty():
            body = queue.get_nowait()
            while True:
                async with session.post(url + "/v1/events", data=body, headers={"Content-Type": "application/x-ndjson"}) as r:
                    await r.read()
                    if r.status == 200:
                        break
                    if r.status not in (429, 503):
                        raise RuntimeError(f"HTTP {r.status}")
                    retried += 1
                    await asyncio.sleep(float(r.headers.get("Retry-After", "1")) / 10)

    async with aiohttp.ClientSession() as session:
        await asyncio.gather(*(worker(session) for _ in range(connections)))
    return retried


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--connections", type=int, default=4)
    args = parser.parse_args()

    payload = sized_events(args.events)
    bodies = [b"\n".join(payload[i : i + args.batch]) for i in range(0, len(payload), args.batch)]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    exe = shutil.which("ragpulse", path=str(Path(sys.executable).parent)) or "ragpulse"
    server = subprocess.Popen(
        [exe, "run", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--set", "otlp.enabled=false",
         "--set", "pipeline.queue_capacity_events=50000"],
        env={**os.environ, "RAGPULSE_LOGGING__FORMAT": "json"},
    )
    try:
        wait_ready(url)
        started = time.perf_counter()
        retried = asyncio.run(post_all(url, bodies, args.connections))
        sent_s = time.perf_counter() - started
        while processed_total(url) < args.events:
            time.sleep(0.01)
        elapsed = time.perf_counter() - started
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    print(f"python {platform.python_version()} on {platform.machine()}, {args.events} events of 2048 B, "
          f"NDJSON batches of {args.batch}, {args.connections} connections, {retried} requests retried after 429")
    print(f"accepted over HTTP : {args.events / sent_s:>10,.0f} events/s")
    print(f"processed (to /metrics): {args.events / elapsed:>10,.0f} events/s  ({elapsed:.2f} s)")


if __name__ == "__main__":
    main()
