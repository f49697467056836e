"""Soak: a `ragpulse run` with the shipped defaults under mixed valid and hostile traffic for ten
minutes, its RSS sampled every second.

Traffic, per second at --rate events/s: NDJSON batches of the demo's traffic (traces and feedback,
sessions included), and alongside them hostile requests: bodies nested 20,000 levels, a false
Content-Encoding, a coding ragpulse does not read (br), integers past 2^64, 400 kB trace ids, garbage bytes,
events near the 512 KiB limit (1 in 200), events of 2 MiB over it (rejected: they must leave no memory
behind), OTLP protobuf (valid and bit-flipped), and a few slowloris connections held open.

    python bench/soak.py [--seconds 600] [--rate 2000]

Prints the RSS after warm-up (60 s), its maximum, its slope over the second half (MB/min), the
answers by status, and the processed counts; writes bench/results/soak.json. Beside the RSS slope, what the
sidecar counts itself holding (every `ragpulse_*_bytes` gauge but the capacities) at half-time and at the end:
RSS that grows with them is its caches and tables filling towards their caps; RSS that grows past them is not
accounted for.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import aiohttp
from common import counter_total, free_port, processed_total, wait_ready
from helpers.otlp_payload import export, otlp_trace  # the hostile-client regression tests' OTLP builders

from ragpulse.app.traffic import TrafficGenerator, TrafficProfile

NDJSON = {"Content-Type": "application/x-ndjson"}


async def held_bytes(session: aiohttp.ClientSession, url: str) -> dict[str, float]:
    """Every bytes gauge the sidecar exports of what it holds (a series a line, labels kept), capacities left out."""
    async with session.get(url + "/metrics") as response:
        text = await response.text()
    held: dict[str, float] = {}
    for line in text.splitlines():
        series, _, value = line.rpartition(" ")
        name = series.split("{", 1)[0]
        if name.startswith("ragpulse_") and name.endswith("_bytes") and "capacity" not in name:
            held[series] = float(value)
    return held


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def hostile_bodies(rnd: random.Random) -> list[tuple[str, bytes, dict[str, str]]]:
    deep = b"[" * 20_000 + b"]" * 20_000
    near_limit = json.dumps({"type": "trace", "trace_id": f"big-{rnd.random()}", "query": "q", "answer": "a",
                             "chunks": [{"text": f"{i} " + "z" * 16_000} for i in range(31)]}).encode()
    otlp = export(otlp_trace(rnd.getrandbits(60), {}))
    flipped = bytearray(otlp)
    flipped[1] ^= 0x80
    return [
        ("/v1/events", b'{"type": "trace", "trace_id": "d", "query": "q", "answer": "a", "x": ' + deep + b"}", {}),
        ("/v1/events", b'{"type": "trace"}', {"Content-Encoding": "gzip"}),
        ("/v1/events", b'{"type": "trace"}', {"Content-Encoding": "br"}),
        ("/v1/events", json.dumps({"type": "trace", "trace_id": f"over-{rnd.random()}", "query": "q",
                                   "answer": "x" * (2 * 1024 * 1024)}).encode(), {}),
        ("/v1/events", json.dumps({"type": "trace", "trace_id": "i", "query": "q", "answer": "a",
                                   "usage": {"prompt_tokens": 2**64 + 1}}).encode(), {}),
        ("/v1/events", json.dumps({"type": "trace", "trace_id": "t" * 400_000, "query": "q", "answer": "a"}).encode(), {}),
        ("/v1/events", rnd.randbytes(300), {}),
        ("/v1/events", near_limit, {}),
        ("otlp", otlp, {"Content-Type": "application/x-protobuf"}),
        ("otlp", bytes(flipped), {"Content-Type": "application/x-protobuf"}),
    ]


async def soak(url: str, otlp_url: str, pid: int, seconds: float, rate: int) -> dict[str, object]:
    generator = TrafficGenerator(TrafficProfile(), seed=11)
    rnd = random.Random(5)
    statuses: Counter[str] = Counter()
    samples: list[tuple[float, float]] = []
    stop = asyncio.Event()

    held: list[dict[str, float]] = []  # at half-time, then at the end

    async def sample(session: aiohttp.ClientSession) -> None:
        started = time.monotonic()
        while not stop.is_set():
            samples.append((time.monotonic() - started, rss_mb(pid)))
            if not held and samples[-1][0] >= seconds / 2:
                held.append(await held_bytes(session, url))
            await asyncio.sleep(1.0)

    async def slowloris() -> None:
        held = []
        for _ in range(10):
            _, writer = await asyncio.open_connection("127.0.0.1", int(url.rsplit(":", 1)[1]))
            writer.write(b"POST /v1/events HTTP/1.1\r\nHost: x\r\n")
            held.append(writer)
        await stop.wait()
        for writer in held:
            writer.close()

    async def send(session: aiohttp.ClientSession, target: str, body: bytes, headers: dict[str, str]) -> None:
        try:
            async with session.post(target, data=body, headers={"Content-Type": "application/json", **headers}) as r:
                await r.read()
                statuses[str(r.status)] += 1
        except aiohttp.ClientError as exc:
            statuses[type(exc).__name__] += 1

    async with aiohttp.ClientSession() as session:
        tasks = [asyncio.create_task(sample(session)), asyncio.create_task(slowloris())]
        started = time.monotonic()
        second = 0
        while time.monotonic() - started < seconds:
            events: list[bytes] = []
            while len(events) < rate:
                events.extend(json.dumps(e).encode() for e in generator.events())
            batches = [b"\n".join(events[i: i + 200]) for i in range(0, len(events), 200)]
            sends = [send(session, url + "/v1/events", body, NDJSON) for body in batches]
            hostile = hostile_bodies(rnd)
            near_limit = next(i for i, (_, body, _) in enumerate(hostile) if body.startswith(b'{"type": "trace", "trace_id": "big-'))
            for path, body, headers in hostile if second % 2 == 0 else hostile[:near_limit] + hostile[near_limit + 1:]:
                sends.append(send(session, otlp_url if path == "otlp" else url + path, body, headers))
            await asyncio.gather(*sends)
            second += 1
            await asyncio.sleep(max(0.0, started + second - time.monotonic()))
        stop.set()
        await asyncio.gather(*tasks)
        held.append(await held_bytes(session, url))
    half = [(t, r) for t, r in samples if t >= seconds / 2]
    slope = (half[-1][1] - half[0][1]) / max(1e-9, half[-1][0] - half[0][0]) * 60 if len(half) > 1 else 0.0
    warm = next((r for t, r in samples if t >= 60), samples[-1][1])
    return {"statuses": dict(statuses), "rss_after_warmup_mb": round(warm, 1),
            "rss_max_mb": round(max(r for _, r in samples), 1), "rss_end_mb": round(samples[-1][1], 1),
            "rss_slope_second_half_mb_per_min": round(slope, 2), **_held_growth(held, half), "samples": samples}


def _held_growth(held: list[dict[str, float]], half: list[tuple[float, float]]) -> dict[str, object]:
    """What the sidecar counts itself holding, over the second half: in all and the series that moved most (MB)."""
    if len(held) < 2 or len(half) < 2:
        return {}
    first, last = held
    moved = {series: (last.get(series, 0.0) - first.get(series, 0.0)) / 1e6 for series in first.keys() | last.keys()}
    return {"rss_growth_second_half_mb": round(half[-1][1] - half[0][1], 1),
            "held_bytes_growth_second_half_mb": round(sum(moved.values()), 1),
            "held_bytes_end_mb": round(sum(last.values()) / 1e6, 1),
            "held_bytes_grown_most_mb": {series: round(mb, 1) for series, mb in
                                         sorted(moved.items(), key=lambda item: -abs(item[1]))[:6]}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--rate", type=int, default=2000, help="valid events a second (traces and feedback)")
    parser.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                        help="an option for the sidecar, as `ragpulse run --set` takes it (repeatable)")
    args = parser.parse_args()
    port, otlp_port, grpc_port = free_port(), free_port(), free_port()
    url = f"http://127.0.0.1:{port}"
    exe = shutil.which("ragpulse", path=str(Path(sys.executable).parent)) or "ragpulse"
    workdir = Path(__file__).resolve().parent / "results"
    workdir.mkdir(exist_ok=True)
    server = subprocess.Popen(
        [exe, "run", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
         "--set", "otlp.host=127.0.0.1", "--set", f"otlp.http_port={otlp_port}", "--set", f"otlp.grpc_port={grpc_port}",
         *(part for option in args.set for part in ("--set", option))],
        env={**os.environ, "RAGPULSE_LOGGING__FORMAT": "json"}, cwd=workdir, stdout=subprocess.DEVNULL,
    )
    try:
        wait_ready(url)
        result = asyncio.run(soak(url, f"http://127.0.0.1:{otlp_port}/v1/traces", server.pid, args.seconds, args.rate))
        result["processed"] = processed_total(url)
        result["restarts"] = counter_total(url, "ragpulse_component_restarts_total")
        result["stage_errors"] = counter_total(url, "ragpulse_stage_errors_total")
        # The count-capped stores that fill slowest, where they stood at the end.
        for gauge in ("ragpulse_dedup_window_entries", "ragpulse_calibration_audited_waiting", "ragpulse_judge_judged_total",
                      "ragpulse_queue_depth_bytes", "ragpulse_otlp_traces_in_flight_bytes"):
            result[gauge] = counter_total(url, gauge)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    result["exit_code"] = server.returncode
    (workdir / "soak.json").write_text(json.dumps(result))
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores; "
          f"{args.seconds:.0f} s at {args.rate} valid events/s plus hostile traffic")
    for key, value in result.items():
        if key != "samples":
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
