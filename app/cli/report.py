"""ragpulse report: the quality report of a period as one self-contained HTML file (docs/report.md)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from ragpulse.app.cli.common import load, store_flags, store_path
from ragpulse.report import build, review
from ragpulse.results import badcases


def add_commands(commands: Any) -> None:
    report = commands.add_parser("report", help="the quality report of a period: one HTML file with plots, the "
                                 "release comparison and the worst cases to review")
    store_flags(report)
    span = report.add_mutually_exclusive_group()
    span.add_argument("--since", default="24h", help="a duration back from now (24h, 7d; default %(default)s)")
    span.add_argument("--from", dest="start", help="the period's start: an RFC 3339 time or epoch seconds (with --to)")
    report.add_argument("--to", dest="end", help="the period's end (default now)")
    report.add_argument("--out", default="ragpulse-report.html", help="the HTML file to write (default %(default)s)")
    report.add_argument("--app")
    report.add_argument("--route")
    report.add_argument("--prometheus", metavar="URL", help="also read the recording rules' series from this Prometheus")
    report.add_argument("--window", help="the rules' rate window to read (default: the shortest that fits a plot's bin)")
    report.add_argument("--fallback-window", default="1h", help="the fallback rate's window (default %(default)s)")
    report.add_argument("--before", help="the release to compare against (default: the one before --after)")
    report.add_argument("--after", help="the release to compare (default: the period's newest)")
    report.add_argument("--cases", type=int, default=review.DEFAULT_CASES,
                        help="worst cases in the weekly review (default %(default)s)")
    report.add_argument("--probes-db", help="the probes' store (default: probes.db_path of the config)")
    report.set_defaults(handler=_report)


def _report(args: argparse.Namespace) -> int:
    now = time.time()
    try:
        until = badcases.parse_time(args.end, now) if args.end else now
        since = badcases.parse_time(args.start, now) if args.start else badcases.parse_time(args.since, until)
    except ValueError as exc:
        print(f"ragpulse: {exc}", file=sys.stderr)
        return 2
    if since >= until:
        print("ragpulse: the period is empty: its start is not before its end", file=sys.stderr)
        return 2
    path = store_path(args, "result store")
    if path is None:
        return 2
    try:
        from ragpulse.report import output  # matplotlib: the extra `report`, loaded by this command only
    except ImportError as exc:
        print(f"ragpulse: the report's plots need matplotlib: pip install 'ragpulse[report]' ({exc})", file=sys.stderr)
        return 2
    config = load(args)
    request = build.Request(path, since, until, app=args.app, route=args.route, cases=args.cases,
                            probes_path=args.probes_db or config.probes.db_path, prometheus_url=args.prometheus,
                            window=args.window, fallback_window=args.fallback_window, before=args.before, after=args.after)
    html, found = output.render(request, config.calibration, now=now)
    output.write(Path(args.out), html)
    print(f"wrote {args.out}", file=sys.stderr)
    for line in found["summary"]:
        print(line)
    return 0
