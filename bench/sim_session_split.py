"""Session signals under trace-id routing: what a load balancer that sends each trace to a replica by its trace
id (the Collector's `load_balancing` exporter with `routing_key: traceID`) costs the satisfaction signals,
which need a session's turns on one replica.

    python bench/sim_session_split.py [--turns 20000] [--replicas 2 3 8] [--rate 20]

The demo's traffic (app/traffic.py: sessions whose users rephrase, repeat, escalate, follow up, leave, rate),
at `--rate` turns a second of virtual time, goes through ragpulse's own decoder, fallback detector and feedback
join (feedback/join.py, the shipped satisfaction settings) once whole, as one replica sees it, and once split
over N joins by a hash of the trace id (feedback follows its trace's id, as a load balancer would route it).
Printed: each signal's count on one replica, summed over N, and the change.
"""

from __future__ import annotations

import argparse
import hashlib
from collections import Counter

import msgspec
from prometheus_client import CollectorRegistry

from ragpulse.app.components import fallback_detector
from ragpulse.app.traffic import TrafficGenerator, TrafficProfile
from ragpulse.collector.decode import EventDecoder
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.config import Config
from ragpulse.feedback.join import FeedbackJoin
from ragpulse.feedback.satisfaction import SIGNALS, SignalCounter


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Replica:
    def __init__(self, config: Config, clock: Clock) -> None:
        self.registry = CollectorRegistry()
        labels = tuple(config.metrics.labels)
        guard = LabelGuard(labels, config.metrics.max_values_per_label, config.metrics.max_label_sets, CollectorRegistry())
        counter = SignalCounter(self.registry, guard, max_cached=8_000)
        self.join = FeedbackJoin(config.satisfaction, self.registry, counter, guard, clock=clock)
        self.decoder = EventDecoder(config.limits, "sim")
        self.fallback = fallback_detector(config)

    def take(self, raw: bytes) -> None:
        for envelope in self.decoder.decode_body(raw).envelopes:
            if not self.fallback.prepare([envelope]):  # decided on the envelope, unless its rules need it one by one
                self.fallback(envelope)
            self.join(envelope)

    def signals(self) -> Counter[str]:
        found: Counter[str] = Counter()
        for metric in self.registry.collect():
            for sample in metric.samples:
                if sample.name == "ragpulse_satisfaction_signals_total":
                    found[sample.labels["signal"]] += int(sample.value)
        return found


def route(event: dict[str, object], replicas: int) -> int:
    key = str(event.get("trace_id") or event.get("session_id"))
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big") % replicas


def run(turns: list[list[bytes]], ids: list[list[dict[str, object]]], replicas: int, rate: float) -> Counter[str]:
    config, clock = Config(), Clock()
    joins = [Replica(config, clock) for _ in range(replicas)]
    for index, (raws, events) in enumerate(zip(turns, ids, strict=True)):
        clock.now = index / rate
        for raw, event in zip(raws, events, strict=True):
            joins[route(event, replicas)].take(raw)
        if index % int(rate) == 0:  # the sidecar's timer, once a second
            for replica in joins:
                replica.join.expire()
    clock.now += 2 * (config.satisfaction.idle_seconds + config.satisfaction.window_seconds)
    total: Counter[str] = Counter()
    for replica in joins:
        replica.join.expire()
        total += replica.signals()
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=20_000)
    parser.add_argument("--replicas", type=int, nargs="+", default=[2, 3, 8])
    parser.add_argument("--rate", type=float, default=20.0, help="turns a second of virtual time")
    args = parser.parse_args()
    generator = TrafficGenerator(TrafficProfile(), seed=3)
    turns = [generator.events() for _ in range(args.turns)] + [[event] for event in generator.finish()]
    encoded = [[msgspec.json.encode(event) for event in turn] for turn in turns]
    one = run(encoded, turns, 1, args.rate)
    header = " | ".join(f"{n} replicas" for n in args.replicas)
    print(f"| signal | 1 replica | {header} |\n|---|---|" + "---|" * len(args.replicas))
    split = {n: run(encoded, turns, n, args.rate) for n in args.replicas}
    for signal in SIGNALS:
        cells = " | ".join(f"{split[n][signal]:,} ({(split[n][signal] - one[signal]) / one[signal]:+.0%})"
                           if one[signal] else f"{split[n][signal]:,}" for n in args.replicas)
        print(f"| {signal} | {one[signal]:,} | {cells} |")


if __name__ == "__main__":
    main()
