"""What the command groups share: config flags, loading the config, the stop signal, the store path."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

import structlog

from ragpulse.app.logs import configure_logging
from ragpulse.config import Config, ignored_environment, load_config
from ragpulse.errors import ConfigError, ConfigProblem


def config_flags(parser: argparse.ArgumentParser, *, host_default: str = "0.0.0.0", level_default: str = "info") -> None:
    parser.add_argument("-c", "--config", help="YAML config file (default: $RAGPULSE_CONFIG, else built-in defaults)")
    parser.add_argument("--host", help=f"listen address (http.host; default {host_default})")
    parser.add_argument("--port", help="listen port (http.port; default 8080)")
    parser.add_argument("--log-level", help=f"logging.level (default {level_default})")
    parser.add_argument("--log-format", help="logging.format: auto, json or console")
    parser.add_argument(
        "--set", action="append", default=[], metavar="PATH=VALUE", help="set any option, e.g. --set limits.max_chunks=50"
    )


def store_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-c", "--config", help="YAML config file whose results.sqlite_path to read")
    parser.add_argument("--db", help="the bad-case store file (default: results.sqlite_path of the config)")
    parser.add_argument("--set", action="append", default=[], metavar="PATH=VALUE", help=argparse.SUPPRESS)


def load(args: argparse.Namespace) -> Config:
    overrides: dict[str, str] = {}
    for item in args.set:
        path, sep, value = item.partition("=")
        if not sep or not path:  # the item is not echoed: it may be a secret given the wrong way
            raise ConfigError([ConfigProblem(path or "--set", "expected --set PATH=VALUE")], "--set")
        overrides[path.strip()] = value
    for flag, path in (("host", "http.host"), ("port", "http.port"), ("log_level", "logging.level"), ("log_format", "logging.format")):
        if getattr(args, flag, None) is not None:
            overrides[path] = getattr(args, flag)
    config = load_config(args.config, overrides=overrides)
    configure_logging(config.logging)
    if ignored := ignored_environment():  # e.g. the project's scripts' RAGPULSE_VENV: not options, not read
        structlog.get_logger("ragpulse.config").debug("environment variables that name no option, not read", variables=ignored)
    return config


def report_problems(headline: str, problems: list[object]) -> None:
    """`ragpulse: HEADLINE:` and every problem on a line of its own, on stderr."""
    print(f"ragpulse: {headline}:", file=sys.stderr)
    for problem in problems:
        print(f"  {problem}", file=sys.stderr)


def stop_event() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    return stop


def store_path(args: argparse.Namespace, what: str) -> str | None:
    """The SQLite file of the bad-case store and review queue (--db, else results.sqlite_path), if it exists."""
    path = args.db or load(args).results.sqlite_path
    if path is None:
        print(f"ragpulse: the {what} is off (results.sqlite_path is null); give --db PATH", file=sys.stderr)
        return None
    if not Path(path).exists():
        print(f"ragpulse: no {what} at {path} (nothing judged yet, or another --db / results.sqlite_path)", file=sys.stderr)
        return None
    return path
