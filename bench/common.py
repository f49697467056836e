"""Benchmark payloads: demo-bot trace events padded to a fixed JSON size."""

from __future__ import annotations

import msgspec

from ragpulse.collector.traffic import TrafficGenerator, TrafficProfile


def sized_events(count: int, size: int = 2048, *, seed: int = 7) -> list[bytes]:
    """`count` distinct trace events, each exactly `size` bytes of JSON (a padding attribute fills the rest)."""
    generator = TrafficGenerator(TrafficProfile(feedback_share=0.0), seed=seed)
    out: list[bytes] = []
    while len(out) < count:
        for event in generator.events():
            event["attributes"]["pad"] = ""
            base = len(msgspec.json.encode(event))
            if base > size:
                event["chunks"] = event["chunks"][:2]
                base = len(msgspec.json.encode(event))
            event["attributes"]["pad"] = "x" * max(0, size - base)
            encoded = msgspec.json.encode(event)
            out.append(encoded)
    return out[:count]
