"""ragpulse run, demo and send: the sidecar, with or without generated traffic."""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
import time
import urllib.parse
from contextlib import closing
from typing import Any

import aiohttp
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from ragpulse.app.cli.common import config_flags, load, stop_event
from ragpulse.app.components import tune_gc
from ragpulse.app.logs import configure_logging
from ragpulse.app.service import Service
from ragpulse.app.traffic import SendStats, TrafficGenerator, TrafficProfile, send_traffic
from ragpulse.config import load_config
from ragpulse.feedback.satisfaction import NEGATIVE, POSITIVE, SIGNALS
from ragpulse.judging import FEEDBACK_CLASSES, Interval, hallucination_rates
from ragpulse.results import badcases


def add_commands(commands: Any) -> None:
    run = commands.add_parser("run", help="run the sidecar")
    config_flags(run)
    run.set_defaults(handler=_run)

    demo = commands.add_parser("demo", help="run the sidecar with built-in demo traffic (or send it to --target)")
    config_flags(demo, host_default="127.0.0.1, loopback only in the demo", level_default="warning in the demo, so that "
                 "its summaries read alone; logs go to stderr, summaries to stdout")
    _traffic_flags(demo)
    demo.add_argument("--target", help="send the traffic to a running sidecar at this URL instead of starting one")
    demo.add_argument("--duration", type=float, help="stop after this many seconds (default: until Ctrl-C)")
    demo.add_argument("--summary-every", type=float, default=5.0, metavar="SECONDS",
                      help="live summary period (default %(default)g)")
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
    parser.add_argument("--rate", type=float, default=20.0, metavar="N",
                        help="events per second: traces and the feedback on them (default %(default)g)")
    parser.add_argument("--fallback-share", type=float, default=0.08, metavar="SHARE",
                        help="share of questions the knowledge base cannot answer (default %(default)g)")
    parser.add_argument("--hallucination-share", type=float, default=0.05, metavar="SHARE",
                        help="share of answers that change a fact of their chunks (default %(default)g)")
    parser.add_argument("--drift-at", type=float, metavar="SECONDS",
                        help="ship a worse release after this many seconds (default: never)")
    parser.add_argument("--drift-fallback-share", type=float, default=0.25, metavar="SHARE",
                        help="the fallback share after the drift (default %(default)g)")
    parser.add_argument("--drift-hallucination-share", type=float, default=0.20, metavar="SHARE",
                        help="the hallucination share after the drift (default %(default)g)")
    parser.add_argument("--react", action="append", default=[], metavar="NAME=SHARE", type=_reaction,
                        help="how users react, e.g. rephrase_after_bad=0.6; names and defaults: "
                             + ", ".join(f"{name}={getattr(TrafficProfile(), name):g}" for name in REACTIONS))
    parser.add_argument("--seed", type=int, help="random seed, for repeatable traffic")


# Routine judgments a minute in the demo: its --stack rules (mixin/demo-settings.yaml) test 2-minute windows, which
# need ~1,000 judgments to see 5% become 20% within 5 minutes nearly always (bench/sim_drift.py, docs/benchmarks-log.md).
DEMO_FLOOR = 500
REACTIONS = tuple(name for name in TrafficProfile.__dataclass_fields__ if "_after_" in name)


def _reaction(text: str) -> tuple[str, float]:
    name, _, value = text.partition("=")
    if name not in REACTIONS:
        raise argparse.ArgumentTypeError(f"unknown reaction {name!r}; one of {', '.join(REACTIONS)}")
    try:
        share = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name}: {value!r} is not a share between 0 and 1") from None
    if not 0.0 <= share <= 1.0:
        raise argparse.ArgumentTypeError(f"{name}: {value!r} is not a share between 0 and 1")
    return name, share


def _generator(args: argparse.Namespace) -> TrafficGenerator:
    return TrafficGenerator(
        TrafficProfile(
            fallback_share=args.fallback_share,
            hallucination_share=args.hallucination_share,
            drift_at_seconds=args.drift_at,
            drift_fallback_share=args.drift_fallback_share,
            drift_hallucination_share=args.drift_hallucination_share,
            **dict(args.react),
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
    if args.log_level is None and "logging.level" not in given:
        args.log_level = "warning"
    if "satisfaction.idle_seconds" not in given:  # demo sessions settle within a summary or two, not 5 minutes
        args.set = ["satisfaction.idle_seconds=10", *args.set]
    if "judge.min_routine_per_minute" not in given:  # the --stack rules' drift windows are minutes (bench/sim_drift.py)
        args.set = [f"judge.min_routine_per_minute={DEMO_FLOOR}", *args.set]
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
        live = LiveSummary(service, every=args.summary_every)
        summary = asyncio.create_task(live.print_every())
        # With --duration the run lasts exactly that long from the first summary's clock (the sender may end sooner).
        ends = [asyncio.create_task(stop.wait()),
                asyncio.create_task(asyncio.sleep(args.duration)) if args.duration is not None else sender]
        await asyncio.wait(ends, return_when=asyncio.FIRST_COMPLETED)
        for task in (*ends, sender, summary):
            task.cancel()
        live.print_due()  # a periodic summary due at the very end (--duration 30 --summary-every 5: the 30 s one)
        await service.shutdown()
        print(live.text(final=True))

    asyncio.run(demo())
    return 0


def _send(args: argparse.Namespace) -> int:
    configure_logging(load_config(None).logging)
    return _send_until_stopped(args.target, _generator(args), args.rate, args.duration, args.count, args.batch, args.token)


def target_url(text: str) -> str:
    """The sidecar's base URL from --target, or a ValueError that says what to give."""
    parsed = urllib.parse.urlsplit(text.strip())
    example = "e.g. http://127.0.0.1:8080"
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(f"--target {text!r}: give the sidecar's URL with its scheme, {example}")
    if parsed.path not in ("", "/") or parsed.query or parsed.fragment:
        raise ValueError(f"--target {text!r}: give the sidecar's base URL without a path ({example}); "
                         "events go to its /v1/events")
    return f"{parsed.scheme}://{parsed.netloc}"


def _send_until_stopped(
    target: str,
    generator: TrafficGenerator,
    rate: float,
    duration: float | None,
    count: int | None,
    batch: int | None,
    token: str | None,
) -> int:
    try:
        target = target_url(target)
    except ValueError as exc:
        print(f"ragpulse: {exc}", file=sys.stderr)
        return 2
    console = Console(stderr=True)
    progress = Progress(TextColumn("sending"), BarColumn(), TextColumn("{task.completed:,.0f} events"),
                        TextColumn("{task.fields[rate]:,.0f}/s"), TextColumn("{task.fields[outcome]}"),
                        TimeElapsedColumn(), console=console, transient=True, disable=not console.is_terminal)
    stats = SendStats()
    started = time.monotonic()
    task = progress.add_task("send", total=count, rate=0.0, outcome="")

    def on_batch(sent: SendStats) -> None:
        elapsed = max(1e-9, time.monotonic() - started)
        progress.update(task, completed=sent.sent, rate=sent.sent / elapsed,
                        outcome=f"{sent.accepted:,} accepted, {sent.rejected:,} rejected")

    async def send() -> None:
        sender = asyncio.create_task(send_traffic(target, generator, rate=rate, duration=duration, count=count,
                                                  batch_events=batch, token=token, stats=stats, on_batch=on_batch))
        stop = asyncio.create_task(stop_event().wait())
        await asyncio.wait([sender, stop], return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if sender.done():
            sender.result()  # surface a failure
        sender.cancel()

    try:
        with progress:
            asyncio.run(send())
    except aiohttp.ClientConnectionError as exc:
        print(f"ragpulse: cannot reach the sidecar at {target}: {exc}", file=sys.stderr)
        return 1
    except RuntimeError as exc:  # the sidecar answered, but not with a result (send_traffic says what it got)
        print(f"ragpulse: {exc}", file=sys.stderr)
        return 1
    print(f"sent {stats.sent} events: {stats.accepted} accepted, {stats.rejected} rejected, {stats.retried_requests} requests retried")
    return 0 if stats.rejected == 0 else 1


class LiveSummary:
    """What a newcomer would look for on the dashboard, every few seconds, in lines that fit a terminal."""

    def __init__(self, service: Service, every: float = 5.0) -> None:
        self._service = service
        self._every = every
        self._printed = 0  # periodic summaries printed: the next is due at (printed + 1) * every from the start
        self._started = self._last_time = time.monotonic()
        self._last_traces = 0.0
        self._since = time.time()  # the run's bad cases in the store are those judged since
        self._store = service.config.results.sqlite_path if service.judging is not None else None  # a judging sink

    async def print_every(self) -> None:
        """On the start's clock, not a sleep after each print, so summaries do not drift later."""
        while True:
            await asyncio.sleep(max(0.0, self._started + (self._printed + 1) * self._every - time.monotonic()))
            self.print_due()

    def print_due(self) -> None:
        """The periodic summary, if one is due (to within 50 ms: a timer that fires a little late is on time)."""
        if time.monotonic() - self._started + 0.05 >= (self._printed + 1) * self._every:
            self._printed += 1
            print(self.text(), flush=True)

    def _judge_standing(self, samples: list[Any]) -> str:
        """Which judge the rate comes from and whether a calibration stands behind it (the pages' rule too)."""
        if self._service.config.judge.uses_llm:
            return "LLM judge"
        reviews = sum(s.value for s in samples
                      if s.name == "ragpulse_calibration_reviews_total" and s.labels.get("judge") == "local")
        needed = self._service.config.calibration.min_reviews
        return f"local judge, calibrated on {reviews:.0f} reviews" if reviews >= needed else "local judge, uncalibrated"

    def text(self, final: bool = False) -> str:
        """The summary; `final`: the whole run's, its rate averaged over the run."""
        totals: dict[str, float] = {}
        signals: dict[str, float] = dict.fromkeys(SIGNALS, 0.0)
        samples = [sample for family in self._service.registry.collect() for sample in family.samples]
        for sample in samples:
            totals[sample.name] = totals.get(sample.name, 0.0) + sample.value
            if sample.name == "ragpulse_satisfaction_signals_total":
                signals[sample.labels["signal"]] += sample.value
        now = time.monotonic()
        traces = totals.get("ragpulse_traces_total", 0.0)
        if final:
            rate = traces / max(1e-9, now - self._started)
        else:
            rate = (traces - self._last_traces) / max(1e-9, now - self._last_time)
            self._last_time, self._last_traces = now, traces

        def share(name: str) -> str:
            return f"{100 * totals.get(name, 0.0) / traces:.1f}%" if traces else "-"

        def mean(name: str) -> float:
            count = totals.get(f"{name}_count", 0.0)
            return totals.get(f"{name}_sum", 0.0) / count if count else 0.0

        def interval(estimate: Interval | None) -> str:
            if estimate is None:
                return "-"
            return f"{100 * estimate.estimate:.1f}% [{100 * estimate.low:.1f}-{100 * estimate.high:.1f}]"

        rates = hallucination_rates((s.name, s.labels, s.value) for s in samples)
        # Sampled (routine or targeted): each trace once at most. On feedback: a user's complaint has its answer
        # judged as evidence, again if it was sampled, so judgments may outnumber the traces.
        judged = [sum(s.value for s in samples if s.name == "ragpulse_judge_judged_total"
                      and (s.labels["priority"] in FEEDBACK_CLASSES) is on_feedback) for on_feedback in (False, True)]
        positive = sum(signals[name] for name in POSITIVE)
        negative = sum(signals[name] for name in NEGATIVE)
        if positive + negative:  # settled answers only (feedback/join.py counts a session's signals as it settles)
            proxy = f"{100 * positive / (positive + negative):.1f}%"
        else:
            proxy = f"- (after {self._service.config.satisfaction.idle_seconds:g}s idle)"
        feedback = totals.get("ragpulse_events_processed_total", 0.0) - traces
        head = "final" if final else f"{now - self._started:.0f}s"
        pad = " " * 9
        return "\n".join([
            f"[{head:>6}] traces {traces:.0f} ({rate:.1f}/s) + {feedback:.0f} feedback · fallback "
            f"{share('ragpulse_fallbacks_total')} · empty retrieval {share('ragpulse_retrieval_empty_total')} · invalid "
            f"{totals.get('ragpulse_events_invalid_total', 0):.0f}",
            f"{pad}top score {mean('ragpulse_retrieval_top_score'):.2f} · latency "
            f"{mean('ragpulse_answer_latency_seconds'):.2f}s · queue {self._service.queue.depth} · judged "
            f"{judged[0]:.0f} sampled + {judged[1]:.0f} on feedback",
            f"{pad}{self._badcases(totals)} · hallucination ({self._judge_standing(samples)}):",
            f"{pad}  routine {interval(rates.routine)} of {rates.routine_judged:.0f}, "
            f"stratified {interval(rates.stratified)} of {rates.stratified_judged:.0f}",
            f"{pad}satisfaction proxy {proxy} · silent accept {signals['silent_accept']:.0f} · thumbs up "
            f"{signals['thumbs_up']:.0f}, down {signals['thumbs_down']:.0f} · copy {signals['copy']:.0f}",
            f"{pad}rephrase {signals['rephrase']:.0f} · repeat {signals['repeat']:.0f} · escalation "
            f"{signals['escalation']:.0f} · abandon {signals['abandon']:.0f} · regenerate {signals['regenerate']:.0f}",
            f"{pad}{self._context_line(samples)}",
        ])

    def _badcases(self, totals: dict[str, float]) -> str:
        """The run's bad cases as the store holds them, one per trace (a trace judged again keeps its latest),
        which `ragpulse badcases list --since` the start shows; without a store, the bad-case verdicts."""
        if self._store is None:
            return f"bad-case verdicts {totals.get('ragpulse_badcases_total', 0):.0f} (no store)"
        try:
            with closing(badcases.connect(self._store)) as db:
                return f"bad cases {badcases.count(db, since=self._since)} stored"
        except sqlite3.Error as exc:  # the sidecar counts its own failures to write; the summary says it cannot read
            return f"bad cases unreadable ({exc})"

    @staticmethod
    def _context_line(samples: list[Any]) -> str:
        """Citation precision (judged), the dangling share (every answer) and context utilisation (judged)."""
        def total(name: str, **labels: str) -> float:
            return sum(s.value for s in samples if s.name == name and labels.items() <= s.labels.items())

        def share(part: float, whole: float) -> str:
            return f"{100 * part / whole:.1f}%" if whole else "-"

        supported = total("ragpulse_citation_verdicts_total", verdict="supported")
        judged = supported + total("ragpulse_citation_verdicts_total", verdict="unsupported")
        citations = total("ragpulse_citations_total")
        return (f"citations supported {share(supported, judged)} of {judged:.0f} judged · dangling "
                f"{share(total('ragpulse_citations_total', outcome='dangling'), citations)} of {citations:.0f} · "
                f"context used {share(total('ragpulse_context_chunks_used_total'), total('ragpulse_context_chunks_retrieved_total'))}")
