"""The `ragpulse` command: run, demo, send, badcases, config, schema."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sqlite3
import sys
import time
from collections.abc import Sequence
from contextlib import closing
from importlib import resources
from pathlib import Path

import msgspec
import structlog
import yaml
from prometheus_client import disable_created_metrics

import ragpulse
from ragpulse.exporters import badcases_view
from ragpulse.collector.config import Config, load_config
from ragpulse.collector.errors import ConfigError, ConfigProblem, StartupError
from ragpulse.collector.events import json_schema
from ragpulse.collector.logs import configure_logging
from ragpulse.collector.service import Service, tune_gc
from ragpulse.collector.traffic import SendStats, TrafficGenerator, TrafficProfile, send_traffic
from ragpulse.exporters import badcases
from ragpulse.scorers.attribution import STAGES

log = structlog.get_logger("ragpulse.cli")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    # The _created series double the series count and dashboards don't use them.
    disable_created_metrics()
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args.handler(args))
    except ConfigError as exc:
        print(f"ragpulse: invalid configuration ({exc.origin}):", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return 2
    except StartupError as exc:
        print(f"ragpulse: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ragpulse", description="Quality monitoring sidecar for live RAG services.")
    parser.add_argument("--version", action="version", version=f"ragpulse {ragpulse.__version__}")
    commands = parser.add_subparsers(dest="command")

    run = commands.add_parser("run", help="run the sidecar")
    _config_flags(run)
    run.set_defaults(handler=_run)

    demo = commands.add_parser("demo", help="run the sidecar with built-in demo traffic (or send it to --target)")
    _config_flags(demo)
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

    config = commands.add_parser("config", help="check, show or print an example configuration")
    config_commands = config.add_subparsers(dest="config_command", required=True)
    check = config_commands.add_parser("check", help="validate a config file and explain what is wrong")
    check.add_argument("file")
    check.set_defaults(handler=_config_check)
    show = config_commands.add_parser("show", help="print the effective config (defaults, file, environment)")
    show.add_argument("file", nargs="?")
    show.set_defaults(handler=_config_show)
    example = config_commands.add_parser("example", help="print the documented example config")
    example.set_defaults(handler=_config_example)

    cases = commands.add_parser("badcases", help="list or show judged bad cases from the bad-case store")
    case_commands = cases.add_subparsers(dest="badcases_command", required=True)
    listing = case_commands.add_parser("list", help="bad cases, newest first")
    _store_flags(listing)
    listing.add_argument("--app")
    listing.add_argument("--route")
    listing.add_argument("--stage", choices=STAGES)
    listing.add_argument("--since", help="a duration back from now (30m, 2h, 7d), an RFC 3339 time or epoch seconds")
    listing.add_argument("--until", help="same forms as --since")
    listing.add_argument("--limit", type=int, default=20)
    listing.add_argument("--json", action="store_true", help="one JSON record per line instead of a table")
    listing.set_defaults(handler=_badcases_list)
    show_case = case_commands.add_parser("show", help="one bad case in full: question, chunks, answer, verdicts")
    _store_flags(show_case)
    show_case.add_argument("trace_id")
    show_case.add_argument("--json", action="store_true")
    show_case.set_defaults(handler=_badcases_show)

    schema = commands.add_parser("schema", help="print the JSON Schema of an event type")
    schema.add_argument("event_type", choices=["trace", "feedback"])
    schema.set_defaults(handler=_schema)
    return parser


def _config_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-c", "--config", help="YAML config file (default: $RAGPULSE_CONFIG, else built-in defaults)")
    parser.add_argument("--host", help="listen address (http.host)")
    parser.add_argument("--port", help="listen port (http.port)")
    parser.add_argument("--log-level", help="logging.level")
    parser.add_argument("--log-format", help="logging.format: auto, json or console")
    parser.add_argument(
        "--set", action="append", default=[], metavar="PATH=VALUE", help="set any option, e.g. --set limits.max_chunks=50"
    )


def _store_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-c", "--config", help="YAML config file whose results.sqlite_path to read")
    parser.add_argument("--db", help="the bad-case store file (default: results.sqlite_path of the config)")
    parser.add_argument("--set", action="append", default=[], metavar="PATH=VALUE", help=argparse.SUPPRESS)


def _traffic_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rate", type=float, default=20.0, help="events per second (default 20)")
    parser.add_argument("--fallback-share", type=float, default=0.08)
    parser.add_argument("--hallucination-share", type=float, default=0.05)
    parser.add_argument("--drift-at", type=float, metavar="SECONDS", help="ship a worse release after this many seconds")
    parser.add_argument("--drift-fallback-share", type=float, default=0.25)
    parser.add_argument("--drift-hallucination-share", type=float, default=0.20)
    parser.add_argument("--seed", type=int, help="random seed, for repeatable traffic")


def _load(args: argparse.Namespace) -> Config:
    overrides: dict[str, str] = {}
    for item in args.set:
        path, sep, value = item.partition("=")
        if not sep or not path:
            raise ConfigError([ConfigProblem(item, "expected PATH=VALUE")], "--set")
        overrides[path.strip()] = value
    for flag, path in (("host", "http.host"), ("port", "http.port"), ("log_level", "logging.level"), ("log_format", "logging.format")):
        if getattr(args, flag, None) is not None:
            overrides[path] = getattr(args, flag)
    config = load_config(args.config, overrides=overrides)
    configure_logging(config.logging)
    return config


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


def _stop_event() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    return stop


def _run(args: argparse.Namespace) -> int:
    config = _load(args)
    tune_gc()

    async def run() -> None:
        # Events lost to the shutdown deadline are logged and counted, not an exit failure:
        # the stop was asked for, and the orchestrator only needs to know it completed.
        await Service(config).run(_stop_event())

    asyncio.run(run())
    return 0


def _demo(args: argparse.Namespace) -> int:
    if args.target:
        configure_logging(load_config(None).logging)
        return _send_until_stopped(args.target, _generator(args), args.rate, args.duration, None, None, None)
    config = _load(args)
    tune_gc()

    async def demo() -> None:
        service = Service(config)
        stop = _stop_event()
        await service.start()
        target = f"http://127.0.0.1:{service.port}"
        print(f"ragpulse demo: sidecar on {target} (metrics: {target}/metrics); sending {args.rate:g} events/s. Ctrl-C stops.")
        sender = asyncio.create_task(
            send_traffic(target, _generator(args), rate=args.rate, duration=args.duration, token=config.auth_token())
        )
        live = LiveSummary(service)
        summary = asyncio.create_task(live.print_every(args.summary_every))
        await asyncio.wait([sender, asyncio.create_task(stop.wait())], return_when=asyncio.FIRST_COMPLETED)
        sender.cancel()
        summary.cancel()
        await service.shutdown()
        print(live.line())

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
        stop = asyncio.create_task(_stop_event().wait())
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
            print(self.line(), flush=True)

    def line(self) -> str:
        totals: dict[str, float] = {}
        for family in self._service.registry.collect():
            for sample in family.samples:
                totals[sample.name] = totals.get(sample.name, 0.0) + sample.value
                if sample.name == "ragpulse_feedback_total" and sample.labels.get("value") == "down":
                    totals["thumbs_down"] = totals.get("thumbs_down", 0.0) + sample.value
                if (sample.name == "ragpulse_judgments_total" and sample.labels.get("metric") == "groundedness"
                        and sample.labels.get("sample") == "routine"):  # flagged traces would inflate the rate
                    verdict = sample.labels["verdict"]
                    totals[f"groundedness_{verdict}"] = totals.get(f"groundedness_{verdict}", 0.0) + sample.value
        now = time.monotonic()
        traces = totals.get("ragpulse_traces_total", 0.0)
        rate = (traces - self._last_traces) / max(1e-9, now - self._last_time)
        self._last_time, self._last_traces = now, traces

        def share(name: str) -> str:
            return f"{100 * totals.get(name, 0.0) / traces:5.1f}%" if traces else "    -"

        def mean(name: str) -> float:
            count = totals.get(f"{name}_count", 0.0)
            return totals.get(f"{name}_sum", 0.0) / count if count else 0.0

        bad, good = totals.get("groundedness_hallucination", 0.0), totals.get("groundedness_grounded", 0.0)
        hallucination = f"{100 * bad / (bad + good):.1f}%" if bad + good else "-"
        judge = "" if self._service.config.judge.uses_llm else " by the local judge"

        return (
            f"[{now - self._started:6.0f}s] traces {traces:7.0f} ({rate:5.1f}/s)  fallback {share('ragpulse_fallbacks_total')}"
            f"  empty retrieval {share('ragpulse_retrieval_empty_total')}"
            f"  mean top score {mean('ragpulse_retrieval_top_score'):.2f}"
            f"  mean latency {mean('ragpulse_answer_latency_seconds'):.2f}s  thumbs down {totals.get('thumbs_down', 0):.0f}"
            f"  invalid {totals.get('ragpulse_events_invalid_total', 0):.0f}  queue {self._service.queue.depth}"
            f"  judged {totals.get('ragpulse_judge_judged_total', 0):.0f}{judge}"
            f" (routine sample: hallucination {hallucination})  bad cases {totals.get('ragpulse_badcases_total', 0):.0f}"
        )


def _config_check(args: argparse.Namespace) -> int:
    config = load_config(args.file)
    rules = len(config.all_fallback_rules())
    print(f"{args.file}: OK ({rules} fallback rules, labels {', '.join(config.metrics.labels)}, port {config.http.port})")
    return 0


def _config_show(args: argparse.Namespace) -> int:
    config = load_config(args.file)
    shown = msgspec.to_builtins(config)
    secrets = (("http", "auth_token"), ("otlp", "auth_token"), ("kafka", "ssl_password"), ("kafka", "sasl_password"),
               ("judge", "api_key"))
    for section, option in secrets:
        if shown[section].get(option):
            shown[section][option] = "<redacted>"
    print(yaml.safe_dump(shown, sort_keys=False, allow_unicode=True), end="")
    return 0


def _config_example(args: argparse.Namespace) -> int:
    print(resources.files("ragpulse.collector").joinpath("ragpulse.example.yaml").read_text(encoding="utf-8"), end="")
    return 0


def _store(args: argparse.Namespace) -> sqlite3.Connection | None:
    path = args.db or _load(args).results.sqlite_path
    if path is None:
        print("ragpulse: the bad-case store is off (results.sqlite_path is null); give --db PATH", file=sys.stderr)
        return None
    if not Path(path).exists():
        print(f"ragpulse: no bad-case store at {path} (nothing judged bad yet, or another --db / results.sqlite_path)",
              file=sys.stderr)
        return None
    return badcases.connect(path)


def _badcases_list(args: argparse.Namespace) -> int:
    now = time.time()
    try:
        since = badcases.parse_time(args.since, now) if args.since else None
        until = badcases.parse_time(args.until, now) if args.until else None
    except ValueError as exc:
        print(f"ragpulse: {exc}", file=sys.stderr)
        return 2
    db = _store(args)
    if db is None:
        return 2
    with closing(db):
        found = badcases.query(db, app=args.app, route=args.route, stage=args.stage, since=since, until=until,
                               limit=args.limit)
    if args.json:
        for record in found:
            print(json.dumps(record, ensure_ascii=False))
    else:
        print(badcases_view.table(found))
    return 0


def _badcases_show(args: argparse.Namespace) -> int:
    db = _store(args)
    if db is None:
        return 2
    with closing(db):
        record = badcases.get(db, args.trace_id)
    if record is None:
        print(f"ragpulse: no bad case for trace {args.trace_id!r}", file=sys.stderr)
        return 1
    print(json.dumps(record, ensure_ascii=False, indent=2) if args.json else badcases_view.detail(record))
    return 0


def _schema(args: argparse.Namespace) -> int:
    print(json.dumps(json_schema(args.event_type), indent=2, ensure_ascii=False))
    return 0
