"""ragpulse calibration: how far the judge agrees with the human reviews of its audit sample."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from rich.console import Console
from rich.table import Table

from ragpulse.app.cli.common import load, store_flags, store_path
from ragpulse.results import badcases
from ragpulse.results.calibration_api import DEFAULT_SINCE, calibration_report


def add_commands(commands: Any) -> None:
    calibration = commands.add_parser(
        "calibration", help="judge vs human reviews: agreement, kappa, sensitivity/specificity, the corrected rate")
    store_flags(calibration)
    calibration.add_argument("--since", default=DEFAULT_SINCE,
                             help=f"reviews since: a duration back from now (7d), an RFC 3339 time or epoch seconds (default {DEFAULT_SINCE})")
    calibration.add_argument("--json", action="store_true", help="the report as JSON (the same as GET /api/calibration)")
    calibration.set_defaults(handler=_calibration)


def _calibration(args: argparse.Namespace) -> int:
    try:
        since = badcases.parse_time(args.since, time.time())
    except ValueError as exc:
        print(f"ragpulse: {exc}", file=sys.stderr)
        return 2
    path = store_path(args, "review queue")
    if path is None:
        return 2
    found = calibration_report(path, load(args).calibration, since)
    if args.json:
        print(json.dumps(found, ensure_ascii=False, indent=2))
        return 0
    console = Console(highlight=False, soft_wrap=True)
    console.print(f"calibration since {time.strftime('%Y-%m-%d %H:%M', time.gmtime(since))} UTC; "
                  f"{found['waiting_for_review']} audited traces waiting for review")
    if not found["judges"]:
        console.print("no reviews and no routine judgments yet: run `ragpulse review` on the audit queue")
        return 0
    for group in found["judges"]:
        _print_group(console, group, found["agreement_threshold"])
    return 0


def _number(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "-"
    return f"{100 * value:.1f}%" if percent else f"{value:.2f}"


def _print_group(console: Console, group: dict[str, Any], threshold: float) -> None:
    console.print(f"\n[bold]judge {group['judge']} · model {group['judge_model']} · prompt {group['prompt_version']}[/bold]"
                  f" — {group['reviews']} reviews")
    confusion = group["confusion"]
    table = Table(title="hallucination decision (rows: judge, columns: human)", title_justify="left")
    table.add_column("")
    table.add_column("human: hallucination", justify="right")
    table.add_column("human: grounded", justify="right")
    table.add_row("judge: hallucination", str(confusion["both_hallucination"]), str(confusion["judge_only"]))
    table.add_row("judge: grounded", str(confusion["human_only"]), str(confusion["neither"]))
    console.print(table)
    verdict = {None: "not enough reviews to say", True: f"BELOW the {100 * threshold:.0f}% line: change the prompt or the judge",
               False: f"above the {100 * threshold:.0f}% line"}[group["below_threshold"]]
    console.print(f"agreement {_number(group['agreement'], True)} ({verdict}); Cohen's kappa {_number(group['kappa'])}; "
                  f"sensitivity {_number(group['sensitivity'], True)}; specificity {_number(group['specificity'], True)}")
    scores = Table(title="score agreement", title_justify="left")
    for column in ("metric", "exact", "within one", "off"):
        scores.add_column(column, justify="left" if column == "metric" else "right")
    for metric, tally in group["score_agreement"].items():
        scores.add_row(metric, str(tally["exact"]), str(tally["within_one"]), str(tally["off"]))
    console.print(scores)
    cuts = Table(title="bias cuts", title_justify="left")
    for column in ("answers", "reviews", "agreement", "kappa"):
        cuts.add_column(column, justify="left" if column == "answers" else "right")
    for name, part in (*group["by_answer_length"].items(), *group["by_self_judging"].items()):
        cuts.add_row(name.replace("_", " "), str(part["reviews"]), _number(part["agreement"], True), _number(part["kappa"]))
    console.print(cuts)
    routine, corrected = group["routine"], group["corrected"]
    observed = (f"{_number(routine['rate'], True)} [{_number(routine['low'], True)}, {_number(routine['high'], True)}] "
                f"of {routine['judged']} routine judgments" if routine["judged"] else "no routine judgments")
    console.print(f"hallucination rate observed: {observed}")
    if corrected["rate"] is None:
        console.print(f"corrected (Rogan–Gladen): none — {corrected['reason']}")
    else:
        console.print(f"corrected (Rogan–Gladen): {_number(corrected['rate'], True)} "
                      f"[{_number(corrected['low'], True)}, {_number(corrected['high'], True)}] (95%)")
