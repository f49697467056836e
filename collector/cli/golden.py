"""ragpulse golden check|schema: validate a golden set and report what it covers."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from ragpulse.collector.cli.common import report_problems
from ragpulse.probes import golden


def add_commands(commands: Any) -> None:
    group = commands.add_parser("golden", help="golden sets: labelled questions for probing the live service")
    golden_commands = group.add_subparsers(dest="golden_command", required=True)
    check = golden_commands.add_parser("check", help="validate a golden set (JSONL or YAML) and report its coverage")
    check.add_argument("file")
    check.add_argument("--json", action="store_true", help="the coverage as JSON")
    check.set_defaults(handler=_check)
    schema = golden_commands.add_parser("schema", help="print the JSON Schema of a golden-set case")
    schema.set_defaults(handler=lambda _: print(json.dumps(golden.json_schema(), indent=2)) or 0)


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
