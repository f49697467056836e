"""The `ragpulse` command: one module per command group (run and demo, config, badcases,
calibration, review, golden, probe, report)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from prometheus_client import disable_created_metrics

import ragpulse
from ragpulse.app.cli import badcases, calibration, config, golden, probe, report, review, run
from ragpulse.app.cli.common import report_problems
from ragpulse.errors import ConfigError, StartupError


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    # The _created series double the series count and dashboards don't use them.
    disable_created_metrics()
    if args.command is None:
        parser.print_help()
        return 2
    try:
        status = int(args.handler(args))
        sys.stdout.flush()  # inside the try: a reader gone away (`| head`) shows here, not at exit
        return status
    except ConfigError as exc:
        report_problems(f"invalid configuration ({exc.origin})", list(exc.problems))
        return 2
    except StartupError as exc:
        print(f"ragpulse: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`| head`): it had what it wanted. No traceback, and none at exit either, when
        # Python flushes stdout: point it at /dev/null.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ragpulse", description="Quality monitoring sidecar for live RAG services.")
    parser.add_argument("--version", action="version", version=f"ragpulse {ragpulse.__version__}")
    commands = parser.add_subparsers(dest="command")
    for group in (run, config, badcases, calibration, review, golden, probe, report):
        group.add_commands(commands)
    return parser
