"""ragpulse run, demo and send: the sidecar, with or without generated traffic."""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from ragpulse.collector.cli.common import config_flags, load, stop_event
from ragpulse.collector.config import load_config
from ragpulse.collector.logs import configure_logging
from ragpulse.collector.service import Service, tune_gc
from ragpulse.collector.traffic import SendStats, TrafficGenerator, TrafficProfile, send_traffic
from ragpulse.scorers.estimators import Interval, hallucination_rates
from ragpulse.scorers.satisfaction import NEGATIVE, POSITIVE, SIGNALS


def add_commands(commands: Any) -> None:
    run = commands.add_parser("run", help="run the sidecar")
    config_flags(run)
    run.set_defaults(handler=_run)

    demo = commands.add_parser("demo", help="run the sidecar with built-in demo traffic (or send it to --target)")
    config_flags(demo)
    _traffic_flags(demo)
    demo.add_argument("--target", help="send the traffic to a running sidecar at this URL instead of starting one")
    demo.add_argument("--duration", type=float, help="stop after this many seconds (default: until Ctrl-C)")
    demo.add_argument("--summary-every", type=float, default=5.0, metavar="SECONDS", help="live summary period")
    demo.set_defaults(handler=_demo)

    send = commands.add_parser("send", help="push generated traffic into a running sidecar")
    _traffic_flags(send)
    send.add_argument("--target", required=True, help="base URL of the sidecar, e.g. http://127.0.0.1:8080")
    send.add_argument("--count", type=int, help="number of events to send")
    send.add_argument("--duration", type=float, help="seconds to send for")
    send.add_argument("--batch", type=int, help="events per NDJSON request (default: a tenth of a second of traffic, at most 500)")
    send.add_argument("--token", help="bearer token, when the sidecar has http.auth_token set")
    send.set_defaults(handler=_send)


def _traffic_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rate", type=float, default=20.0, help="events per second (default 20)")
    parser.add_argument("--fallback-share", type=float, default=0.08)
    parser.add_argument("--hallucination-share", type=float, default=0.05)
    parser.add_argument("--drift-at", type=float, metavar="SECONDS", help="ship a worse release after this many seconds")
    parser.add_argument("--drift-fallback-share", type=float, default=0.25)
    parser.add_argument("--drift-hallucination-share", type=float, default=0.20)
    parser.add_argument("--seed", type=int, help="random seed, for repeatable traffic")


def _generator(args: argparse.Namespace) -> TrafficGenerator:
    return TrafficGenerator(
        TrafficProfile(
            fallback_share=args.fallback_share,
            hallucination_share=args.hallucination_share,
            drift_at_seconds=args.drift_at,
            drift_fallback_share=args.drift_fallback_share,
            drift_hallucination_share=args.drift_hallucination_share,
        ),
        seed=args.seed,
    )


def _run(args: argparse.Namespace) -> int:
    config = load(args)
    tune_gc()

    async def run() -> None:
        # Events lost to the shutdown deadline are logged and counted, not an exit failure:
        # the stop was asked for, and the orchestrator only needs to know it completed.
        await Service(config).run(stop_event())

    asyncio.run(run())
    return 0


def _demo(args: argparse.Namespace) -> int:
    if args.target:
        configure_logging(load_config(None).logging)
        return _send_until_stopped(args.target, _generator(args), args.rate, args.duration, None, None, None)
    # A demo listens on loopback only, unless asked otherwise (--host, or --set http.host / otlp.host).
    given = {item.partition("=")[0].strip() for item in args.set}
    args.set = [*(f"{path}=127.0.0.1" for path in ("http.host", "otlp.host") if path not in given
                  and not (path == "http.host" and args.host)), *args.set]
    if "satisfaction.idle_seconds" not in given:  # demo sessions settle within a summary or two, not 5 minutes
        args.set = ["satisfaction.idle_seconds=10", *args.set]
    config = load(args)
    tune_gc()

    async def demo() -> None:
        service = Service(config)
        stop = stop_event()
        await service.start()
        target = f"http://127.0.0.1:{service.port}"
        print(f"ragpulse demo: sidecar on {config.http.host}:{service.port} (metrics: {target}/metrics)", end="")
        if service.otlp is not None:
            print(f", OTLP on {config.otlp.host}:{service.otlp.http_port} (HTTP) and :{service.otlp.grpc_port} (gRPC)", end="")
        print(f"; sending {args.rate:g} events/s. Ctrl-C stops.")
        sender = asyncio.create_task(
            send_traffic(target, _generator(args), rate=args.rate, duration=args.duration, token=config.auth_token())
        )
        live = LiveSummary(service)
        summary = asyncio.create_task(live.print_every(args.summary_every))
        await asyncio.wait([sender, asyncio.create_task(stop.wait())], return_when=asyncio.FIRST_COMPLETED)
        sender.cancel()
        summary.cancel()
        await service.shutdown()
        print(live.line(), live.satisfaction_line(), sep="\n")

    asyncio.run(demo())
    return 0


def _send(args: argparse.Namespace) -> int:
    configure_logging(load_config(None).logging)
    return _send_until_stopped(args.target, _generator(args), args.rate, args.duration, args.count, args.batch, args.token)


def _send_until_stopped(
    target: str,
    generator: TrafficGenerator,
    rate: float,
    duration: float | None,
    count: int | None,
    batch: int | None,
    token: str | None,
) -> int:
    async def send() -> SendStats:
        stats = SendStats()
        sender = asyncio.create_task(
            send_traffic(target, generator, rate=rate, duration=duration, count=count, batch_events=batch, token=token, stats=stats)
        )
        stop = asyncio.create_task(stop_event().wait())
        await asyncio.wait([sender, stop], return_when=asyncio.FIRST_COMPLETED)
        if sender.done():
            sender.result()  # surface a failure
        sender.cancel()
        stop.cancel()
        return stats

    stats = asyncio.run(send())
    print(f"sent {stats.sent} events: {stats.accepted} accepted, {stats.rejected} rejected, {stats.retried_requests} requests retried")
    return 0 if stats.rejected == 0 else 1


class LiveSummary:
    """One line of what a newcomer would look for on the dashboard, every few seconds."""

    def __init__(self, service: Service) -> None:
        self._service = service
        self._started = self._last_time = time.monotonic()
        self._last_traces = 0.0

    async def print_every(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            print(self.line(), self.satisfaction_line(), sep="\n", flush=True)

    def line(self) -> str:
        totals: dict[str, float] = {}
        samples = [sample for family in self._service.registry.collect() for sample in family.samples]
        for sample in samples:
            totals[sample.name] = totals.get(sample.name, 0.0) + sample.value
            if sample.name == "ragpulse_feedback_total" and sample.labels.get("value") == "down":
                totals["thumbs_down"] = totals.get("thumbs_down", 0.0) + sample.value
        now = time.monotonic()
        traces = totals.get("ragpulse_traces_total", 0.0)
        rate = (traces - self._last_traces) / max(1e-9, now - self._last_time)
        self._last_time, self._last_traces = now, traces

        def share(name: str) -> str:
            return f"{100 * totals.get(name, 0.0) / traces:5.1f}%" if traces else "    -"

        def mean(name: str) -> float:
            count = totals.get(f"{name}_count", 0.0)
            return totals.get(f"{name}_sum", 0.0) / count if count else 0.0

        def interval(estimate: Interval | None) -> str:
            if estimate is None:
                return "-"
            return f"{100 * estimate.estimate:.1f}% [{100 * estimate.low:.1f}-{100 * estimate.high:.1f}]"

        rates = hallucination_rates((s.name, s.labels, s.value) for s in samples)
        judge = "" if self._service.config.judge.uses_llm else " by the local judge"
        return (
            f"[{now - self._started:6.0f}s] traces {traces:7.0f} ({rate:5.1f}/s)  fallback {share('ragpulse_fallbacks_total')}"
            f"  empty retrieval {share('ragpulse_retrieval_empty_total')}"
            f"  mean top score {mean('ragpulse_retrieval_top_score'):.2f}"
            f"  mean latency {mean('ragpulse_answer_latency_seconds'):.2f}s  thumbs down {totals.get('thumbs_down', 0):.0f}"
            f"  invalid {totals.get('ragpulse_events_invalid_total', 0):.0f}  queue {self._service.queue.depth}"
            f"  judged {totals.get('ragpulse_judge_judged_total', 0):.0f}{judge}"
            f"  hallucination: routine {interval(rates.routine)} of {rates.routine_judged:.0f},"
            f" stratified {interval(rates.stratified)} of {rates.stratified_judged:.0f}"
            f"  bad cases {totals.get('ragpulse_badcases_total', 0):.0f}"
        )

    def satisfaction_line(self) -> str:
        """The signals users gave, and the proxy over them (README, Satisfaction)."""
        signals: dict[str, float] = dict.fromkeys(SIGNALS, 0.0)
        for family in self._service.registry.collect():
            for sample in family.samples:
                if sample.name == "ragpulse_satisfaction_signals_total":
                    signals[sample.labels["signal"]] += sample.value
        positive = sum(signals[name] for name in POSITIVE)
        negative = sum(signals[name] for name in NEGATIVE)
        proxy = f"{100 * positive / (positive + negative):.1f}%" if positive + negative else "-"
        return (f"         satisfaction proxy {proxy}: silent accept {signals['silent_accept']:.0f}, thumbs up "
                f"{signals['thumbs_up']:.0f} / down {signals['thumbs_down']:.0f}, copy {signals['copy']:.0f}, rephrase "
                f"{signals['rephrase']:.0f}, repeat {signals['repeat']:.0f}, escalation {signals['escalation']:.0f}, "
                f"abandon {signals['abandon']:.0f}")
