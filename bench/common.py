"""Shared by the benchmarks: payloads of a fixed size, a free port, the processed count from /metrics.

And the path to what the benchmarks share with the tests: a benchmark runs as `python bench/NAME.py`, which puts
bench/ on sys.path (so `from common import ...`); importing this module puts tests/ there too, so the benchmark
imports the tests' helpers as the tests do (`from helpers.otlp_payload import batches`). This is the one place
a benchmark's path is set: import common before helpers (the import order sorts it first)."""

from __future__ import annotations

import random
import socket
import sys
import time
import urllib.request
from pathlib import Path

import msgspec
from prometheus_client.parser import text_string_to_metric_families

from ragpulse.app.traffic import TrafficGenerator, TrafficProfile

TESTS = str(Path(__file__).resolve().parent.parent / "tests")
if TESTS not in sys.path:
    sys.path.append(TESTS)


def sized_events(count: int, size: int = 2048, *, seed: int = 7) -> list[bytes]:
    """`count` distinct trace events, each exactly `size` bytes of JSON (a padding attribute fills the rest).
    Their sessions are drawn from 10,000, so a session's questions meet in the feedback join (at bench
    speed, well within the rephrase window): its classification runs as under real traffic."""
    generator = TrafficGenerator(TrafficProfile(users_react=False), seed=seed)
    sessions = random.Random(seed)
    out: list[bytes] = []
    while len(out) < count:
        for event in generator.events():
            event["session_id"] = f"s-{sessions.randrange(10_000):04d}"
            event["attributes"]["pad"] = ""
            base = len(msgspec.json.encode(event))
            if base > size:
                event["chunks"] = event["chunks"][:2]
                base = len(msgspec.json.encode(event))
            event["attributes"]["pad"] = "x" * max(0, size - base)
            encoded = msgspec.json.encode(event)
            out.append(encoded)
    return out[:count]


def wait_ready(url: str, timeout: float = 30.0) -> None:
    """Until `url`/readyz answers 200."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url + "/readyz", timeout=1)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def counter_total(url: str, name: str) -> float:
    """A counter summed over all its series, scraped from `url`/metrics (`name` ends in _total)."""
    with urllib.request.urlopen(url + "/metrics", timeout=30) as response:
        text = response.read().decode()
    for family in text_string_to_metric_families(text):
        if family.name == name.removesuffix("_total"):
            return sum(s.value for s in family.samples if s.name == name)
    return 0.0


def processed_total(url: str) -> float:
    return counter_total(url, "ragpulse_events_processed_total")
