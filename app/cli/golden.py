"""ragpulse golden check|candidates|schema: validate a golden set and report what it covers; export
candidates from production for a person to label."""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import closing
from typing import Any

from rich.console import Console
from rich.table import Table

from ragpulse.app.cli.common import report_problems, store_flags, store_path
from ragpulse.probes import golden
from ragpulse.probes.candidates import as_golden
from ragpulse.results import badcases, candidates_table


def add_commands(commands: Any) -> None:
    group = commands.add_parser("golden", help="golden sets: labelled questions for probing the live service")
    golden_commands = group.add_subparsers(dest="golden_command", required=True)
    check = golden_commands.add_parser("check", help="validate a golden set (JSONL or YAML) and report its coverage")
    check.add_argument("file")
    check.add_argument("--json", action="store_true", help="the coverage as JSON")
    check.set_defaults(handler=_check)
    found = golden_commands.add_parser(
        "candidates", help="production answers users liked (positive) or disliked, escalated or had judged bad "
                           "(to_label), as golden-set lines (JSONL) for a person to review")
    store_flags(found)
    found.add_argument("--kind", choices=("positive", "to_label"))
    found.add_argument("--since", help="a duration back from now (30m, 2h, 7d), an RFC 3339 time or epoch seconds")
    found.add_argument("--limit", type=int, default=500)
    found.add_argument("--format", choices=("golden", "review"), default="golden",
                       help="golden: lines of the golden-set format; review: the whole records (answer, chunks, signal)")
    found.set_defaults(handler=_candidates)
    schema = golden_commands.add_parser("schema", help="print the JSON Schema of a golden-set case")
    schema.set_defaults(handler=lambda _: print(json.dumps(golden.json_schema(), indent=2)) or 0)


def _candidates(args: argparse.Namespace) -> int:
    try:
        since = badcases.parse_time(args.since, time.time()) if args.since else None
    except ValueError as exc:
        print(f"ragpulse: {exc}", file=sys.stderr)
        return 2
    path = store_path(args, "bad-case store")
    if path is None:
        return 2
    with closing(candidates_table.connect(path)) as db:
        found = candidates_table.query(db, kind=args.kind, since=since, limit=args.limit)
        bad = [] if args.kind == "positive" else badcases.query(db, since=since, limit=args.limit)
    if args.format == "review":
        lines: list[dict[str, Any]] = [*found, *({**record, "kind": "to_label", "signal": f"bad_case:{record['stage']}"}
                                                 for record in bad)]
    else:
        lines = as_golden(found, bad)
    for line in lines:
        print(json.dumps(line, ensure_ascii=False))
    return 0


def _check(args: argparse.Namespace) -> int:
    try:
        loaded = golden.load(args.file)
    except golden.GoldenError as exc:
        report_problems(f"{exc.path}: not a valid golden set", list(exc.problems))
        return 1
    report = golden.coverage(loaded)
    if args.json:
        print(json.dumps({**vars(report), "advice": report.advice()}, indent=2))
        return 0
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
    console.print(f"{args.file}: {report.cases} cases, valid · golden set {loaded.name!r} · "
                  f"{report.with_relevant_chunks} with relevant chunks, {report.multi_chunk} with two or more, "
                  f"{report.with_expected_answer} with an expected answer, {report.no_answer} the knowledge base "
                  "cannot answer")
    for title, counts in (("intent", report.by_intent), ("difficulty", report.by_difficulty)):
        table = Table(title=f"by {title}", title_justify="left")
        table.add_column(title)
        table.add_column("cases", justify="right")
        table.add_column("share", justify="right")
        for name, count in counts.items():
            table.add_row(name, str(count), f"{count / report.cases:.0%}")
        console.print(table)
    for note in report.advice():
        console.print(f"note: {note}")
    return 0
