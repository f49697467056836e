"""ragpulse config check|show|example, and ragpulse schema."""

from __future__ import annotations

import argparse
import json
from importlib import resources
from typing import Any

import msgspec
import yaml

from ragpulse.collector.events import json_schema
from ragpulse.config import load_config
from ragpulse.errors import ConfigError, ConfigProblem


def add_commands(commands: Any) -> None:
    config = commands.add_parser("config", help="check, show or print an example configuration")
    config_commands = config.add_subparsers(dest="config_command", required=True)
    check = config_commands.add_parser("check", help="validate a config file and explain what is wrong")
    check.add_argument("file")
    check.set_defaults(handler=_config_check)
    show = config_commands.add_parser("show", help="print the effective config (defaults, file, environment, --set)")
    show.add_argument("file", nargs="?")
    for parser in (check, show):
        parser.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                            help="an option as `ragpulse run --set` would set it")
    show.set_defaults(handler=_config_show)
    example = config_commands.add_parser("example", help="print the documented example config")
    example.set_defaults(handler=_config_example)

    schema = commands.add_parser("schema", help="print the JSON Schema of an event type")
    schema.add_argument("event_type", choices=["trace", "feedback"])
    schema.set_defaults(handler=_schema)


def _overrides(args: argparse.Namespace) -> dict[str, str]:
    overrides: dict[str, str] = {}
    for item in args.set:
        path, sep, value = item.partition("=")
        if not sep or not path:
            raise ConfigError([ConfigProblem(path or "--set", "expected --set PATH=VALUE")], "--set")
        overrides[path.strip()] = value
    return overrides


def _config_check(args: argparse.Namespace) -> int:
    config = load_config(args.file, overrides=_overrides(args))
    rules = len(config.all_fallback_rules())
    print(f"{args.file}: OK ({rules} fallback rules, labels {', '.join(config.metrics.labels)}, port {config.http.port})")
    return 0


def _config_show(args: argparse.Namespace) -> int:
    config = load_config(args.file, overrides=_overrides(args))
    shown = msgspec.to_builtins(config)
    secrets = (("http", "auth_token"), ("http", "api_token"), ("http", "review_token"), ("otlp", "auth_token"),
               ("kafka", "ssl_password"), ("kafka", "sasl_password"), ("judge", "api_key"))
    for section, option in secrets:
        if shown[section].get(option):
            shown[section][option] = "<redacted>"
    print(yaml.safe_dump(shown, sort_keys=False, allow_unicode=True), end="")
    return 0


def _config_example(args: argparse.Namespace) -> int:
    print(resources.files("ragpulse.config").joinpath("ragpulse.example.yaml").read_text(encoding="utf-8"), end="")
    return 0


def _schema(args: argparse.Namespace) -> int:
    print(json.dumps(json_schema(args.event_type), indent=2, ensure_ascii=False))
    return 0
