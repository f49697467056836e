"""ragpulse probe run|list|show|compare: a golden set asked of the live service, once, from the terminal."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from contextlib import closing
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ragpulse.app.cli.common import config_flags, load, report_problems
from ragpulse.probes import compare, golden, store
from ragpulse.probes.runner import Aggregate, Prober, ProbeRun, QuestionResult, parse_gate
from ragpulse.probes.target import HttpTarget, TargetError

_COLUMNS = (("questions", "questions"), ("errors", "errors"), ("hit_rate", "hit@k"), ("mrr", "MRR"),
            ("recall", "recall@k"), ("precision", "precision@k"), ("ndcg", "nDCG@k"), ("correctness", "correctness"),
            ("fallback_accuracy", "fallback ok"))


def add_commands(commands: Any) -> None:
    group = commands.add_parser("probe", help="replay a golden set against the RAG service and score it")
    probe_commands = group.add_subparsers(dest="probe_command", required=True)
    run = probe_commands.add_parser("run", help="ask every question of a golden set once; a table per intent")
    config_flags(run)
    run.add_argument("--golden", required=True, help="the golden set (JSONL or YAML)")
    run.add_argument("--target", required=True, help="a probes.targets name of the config")
    run.add_argument("--gate", help="thresholds that must hold, e.g. 'hit_rate>=0.9,mrr>=0.7,correctness>=4.0': "
                                    "exit 1 when one fails")
    run.add_argument("--perturb", action="store_true",
                     help="also ask perturbed variants of each question (typo, word order, punctuation, case) and "
                          "report the share whose retrieval or answer verdict changes")
    run.add_argument("--db", help="where the run is stored (default: probes.db_path)")
    run.add_argument("--json", action="store_true", help="the run as JSON instead of tables")
    run.set_defaults(handler=_run)
    listing = probe_commands.add_parser("list", help="stored runs, newest first")
    _db_flags(listing)
    listing.set_defaults(handler=_list)
    show = probe_commands.add_parser("show", help="one stored run: per intent, then every question")
    _db_flags(show)
    show.add_argument("run_id", help="a run id or a unique prefix of it")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=_show)
    diff = probe_commands.add_parser("compare", help="two runs question by question, with paired tests")
    _db_flags(diff)
    diff.add_argument("before")
    diff.add_argument("after")
    diff.set_defaults(handler=_compare)


def _console() -> Console:
    """Tables on stdout; piped, wide enough not to wrap (rich falls back to 80 columns)."""
    return Console(highlight=False, width=None if sys.stdout.isatty() else 160)


def _db_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-c", "--config", help="YAML config file whose probes.db_path to read")
    parser.add_argument("--db", help="the probe store (default: probes.db_path of the config)")
    parser.add_argument("--set", action="append", default=[], metavar="PATH=VALUE", help=argparse.SUPPRESS)


def _run(args: argparse.Namespace) -> int:
    config = load(args)
    targets = {t.name: t for t in config.probes.targets}
    if args.target not in targets:
        known = ", ".join(targets) or "none configured (probes.targets)"
        print(f"ragpulse: no probe target {args.target!r} (known: {known})", file=sys.stderr)
        return 2
    try:
        gate = parse_gate(args.gate) if args.gate else []
        loaded = golden.load(args.golden)
        target = HttpTarget(targets[args.target], config.probes.probe_header)
    except ValueError as exc:
        print(f"ragpulse: --gate: {exc}", file=sys.stderr)
        return 2
    except golden.GoldenError as exc:
        report_problems(f"{exc.path}: not a valid golden set", list(exc.problems))
        return 2
    except TargetError as exc:
        print(f"ragpulse: probe target {args.target!r}: {exc}", file=sys.stderr)
        return 2
    from ragpulse.app.components import fallback_detector, probe_correctness, prober  # as the sidecar builds them

    probing = prober(config, target, fallback_detector(config), probe_correctness(config, None))
    console = Console(highlight=False, stderr=True)
    run = asyncio.run(_with_progress(probing, loaded, console, show=sys.stderr.isatty() and not args.json,
                                     perturb=args.perturb))
    with closing(store.connect(args.db or config.probes.db_path)) as db:
        store.save(db, run)
    failed = [t for t in gate if not t.passes(run.overall().value(t.metric))]
    if args.json:
        print(json.dumps({**run.as_dict(), "sensitivity": {k: vars(v) for k, v in run.sensitivity().items()},
                          "gate": {str(t): t not in failed for t in gate}}, ensure_ascii=False))
    else:
        out = _console()
        out.print(f"run {run.run_id} · golden set {run.golden_set!r} · target {run.target!r} · k={run.k} · "
                  f"{len(run.results)} questions in {run.finished_at - run.started_at:.1f}s · correctness by the "
                  f"{run.correctness_judge} judge")
        out.print(_table(run.by("intent"), run.overall()))
        if run.perturbations:
            out.print(_sensitivity_table(run))
        for threshold in gate:
            value = run.overall().value(threshold.metric)
            shown = "not measured" if value is None else f"{value:.3f}"
            out.print(f"gate {threshold}: {shown} {'FAIL' if threshold in failed else 'ok'}")
    return 1 if failed else 0


async def _with_progress(prober: Prober, loaded: golden.GoldenSet, console: Console, *, show: bool,
                         perturb: bool) -> ProbeRun:
    try:
        return await _probe(prober, loaded, console, show=show, perturb=perturb)
    finally:
        await prober.close()


async def _probe(prober: Prober, loaded: golden.GoldenSet, console: Console, *, show: bool, perturb: bool) -> ProbeRun:
    if not show:
        return await prober.run(loaded, perturb=perturb)
    columns = (TextColumn("probing"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[errors]} errors"),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("probe", total=len(loaded.cases), errors=0)
        errors = 0

        def advance(result: QuestionResult) -> None:
            nonlocal errors
            errors += result.error is not None
            progress.update(task, advance=1, errors=errors)

        return await prober.run(loaded, advance, perturb=perturb)


def _cell(value: object) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _table(groups: dict[str, Aggregate], overall: Aggregate) -> Table:
    table = Table(title="per intent", title_justify="left")
    table.add_column("intent")
    for _, title in _COLUMNS:
        table.add_column(title, justify="right")
    for name, group in (*groups.items(), ("[b]overall[/b]", overall)):
        table.add_row(name, *(_cell(group.value(m) if m not in ("questions", "errors") else getattr(group, m))
                              for m, _ in _COLUMNS))
    return table


def _sensitivity_table(run: ProbeRun) -> Table:
    table = Table(title="perturbation sensitivity", title_justify="left")
    for title in ("variant", "questions", "retrieval changed", "answer verdict changed", "either"):
        table.add_column(title, justify="left" if title == "variant" else "right")
    for kind, found in run.sensitivity().items():
        table.add_row(kind, str(found.variants), f"{found.retrieval_changed} of {found.retrieval_measured}",
                      f"{found.verdict_changed} of {found.verdict_measured}", f"{found.changed_share:.0%}")
    return table


def _open(args: argparse.Namespace) -> Any:
    return store.connect(args.db or load(args).probes.db_path)


def _list(args: argparse.Namespace) -> int:
    with closing(_open(args)) as db:
        found = store.runs(db)
    table = Table()
    for title in ("run", "started (UTC)", "golden set", "target", "questions", "hit@k", "MRR", "correctness"):
        table.add_column(title)
    for run in found:
        overall = run["summary"]["overall"]
        started = time.strftime("%Y-%m-%d %H:%M", time.gmtime(run["started_at"]))
        table.add_row(run["run_id"], started, run["golden_set"], run["target"], str(overall["questions"]),
                      _cell(overall["hit_rate"]), _cell(overall["mrr"]), _cell(overall["correctness"]))
    _console().print(table)
    return 0


def _show(args: argparse.Namespace) -> int:
    with closing(_open(args)) as db:
        run = store.get(db, args.run_id)
    if run is None:
        print(f"ragpulse: no single run for {args.run_id!r}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(run, ensure_ascii=False, indent=2))
        return 0
    out = _console()
    out.print(f"run {run['run_id']} · golden set {run['golden_set']!r} · target {run['target']!r} · k={run['k']}")
    table = Table(title="questions", title_justify="left")
    for title in ("id", "intent", "hit", "RR", "nDCG", "correctness", "fell back", "error"):
        table.add_column(title)
    for q in run["questions"]:
        scores = q["retrieval"] or {}
        table.add_row(q["key"], q["intent"] or "-", _cell(scores.get("hit")), _cell(scores.get("reciprocal_rank")),
                      _cell(scores.get("ndcg")), _cell(q["correctness"]), _cell(q["fell_back"]), q["error"] or "")
    out.print(table)
    return 0


def _compare(args: argparse.Namespace) -> int:
    with closing(_open(args)) as db:
        before, after = store.get(db, args.before), store.get(db, args.after)
    for name, run in ((args.before, before), (args.after, after)):
        if run is None:
            print(f"ragpulse: no single run for {name!r}", file=sys.stderr)
            return 1
    assert before is not None and after is not None
    table = Table(title=f"{before['run_id']} -> {after['run_id']}", title_justify="left")
    for title in ("metric", "before", "after", "change", "questions", "better", "worse", "p (two-sided)", "test"):
        table.add_column(title)
    for d in compare.compare(before, after):
        change = None if d.before is None or d.after is None else d.after - d.before
        table.add_row(d.metric, _cell(d.before), _cell(d.after), "-" if change is None else f"{change:+.3f}", str(d.pairs),
                      str(d.better), str(d.worse), _cell(d.p_value), d.test)
    _console().print(table)
    return 0
