"""ragpulse badcases list|show: the bad-case store."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from contextlib import closing
from typing import Any

from ragpulse.app.cli.common import store_flags, store_path
from ragpulse.judging import STAGES
from ragpulse.results import badcases, badcases_view


def add_commands(commands: Any) -> None:
    cases = commands.add_parser("badcases", help="list or show judged bad cases from the bad-case store")
    case_commands = cases.add_subparsers(dest="badcases_command", required=True)
    listing = case_commands.add_parser("list", help="bad cases, newest first")
    store_flags(listing)
    listing.add_argument("--app")
    listing.add_argument("--route")
    listing.add_argument("--stage", choices=STAGES)
    listing.add_argument("--since", help="a duration back from now (30m, 2h, 7d), an RFC 3339 time or epoch seconds")
    listing.add_argument("--until", help="same forms as --since")
    listing.add_argument("--limit", type=int, default=badcases.DEFAULT_LIMIT,
                         help="at most this many, newest first (default %(default)s)")
    listing.add_argument("--json", action="store_true", help="one JSON record per line instead of a table")
    listing.set_defaults(handler=_badcases_list)
    show_case = case_commands.add_parser("show", help="one bad case in full: question, chunks, answer, verdicts")
    store_flags(show_case)
    show_case.add_argument("trace_id")
    show_case.add_argument("--json", action="store_true")
    show_case.set_defaults(handler=_badcases_show)


def _store(args: argparse.Namespace) -> sqlite3.Connection | None:
    path = store_path(args, "bad-case store")
    return None if path is None else badcases.connect(path)


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
        filters = {"app": args.app, "route": args.route, "stage": args.stage, "since": since, "until": until}
        found = badcases.query(db, **filters, limit=args.limit)
        total = badcases.count(db, **filters)
    if args.json:
        for record in found:
            print(json.dumps(record, ensure_ascii=False))
    else:
        print(badcases_view.table(found))
    if total > len(found):  # on stderr: JSON lines stay JSON lines
        print(f"{len(found)} of {total} bad cases, newest first (--limit for more)", file=sys.stderr)
    return 0


def _badcases_show(args: argparse.Namespace) -> int:
    db = _store(args)
    if db is None:
        return 2
    try:
        with closing(db):
            record = badcases.get_by_prefix(db, args.trace_id)
    except badcases.AmbiguousPrefix as exc:
        print(f"ragpulse: {exc}", file=sys.stderr)
        return 1
    if record is None:
        print(f"ragpulse: no bad case for trace {args.trace_id!r}", file=sys.stderr)
        return 1
    print(json.dumps(record, ensure_ascii=False, indent=2) if args.json else badcases_view.detail(record))
    return 0


