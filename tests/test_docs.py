"""The reference tables of docs/ name exactly what the code has."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from helpers.metrics import exported_metrics

from ragpulse.collector.events import FEEDBACK_KINDS
from ragpulse.errors import RejectReason

DOCS = Path(__file__).resolve().parent.parent / "docs"
METRICS = (DOCS / "metrics.md").read_text(encoding="utf-8")
EVENTS = (DOCS / "events.md").read_text(encoding="utf-8")
CONFIGURATION = (DOCS / "configuration.md").read_text(encoding="utf-8")


@pytest.mark.unit
def test_metrics_table_lists_every_metric_with_its_type_and_labels() -> None:
    documented = {
        name: (kind, tuple(label.strip() for label in labels.split(",") if label.strip()))
        for name, kind, labels in re.findall(r"^\| `(ragpulse_\w+)` \| (\w+) \|([^|]*)\|", METRICS, re.M)
    }
    actual = exported_metrics()
    assert documented == actual


@pytest.mark.unit
def test_rejection_reasons_and_feedback_kinds_are_documented() -> None:
    for reason in RejectReason:
        assert f"`{reason.value}`" in EVENTS
    for kind in FEEDBACK_KINDS:
        assert f"`{kind}`" in EVENTS


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings}


@pytest.mark.unit
def test_the_cli_table_names_only_flags_its_commands_have() -> None:
    """Each row of the CLI table (docs/configuration.md): the command exists, and every --flag the row names is
    one of its own (or of the subcommands the row lists beside it), so the table cannot drift from `--help`."""
    from ragpulse.app.cli import _parser

    top = _parser()
    table = CONFIGURATION[CONFIGURATION.index("## CLI"):]
    table = table[:table.index("\n\n", table.index("| command |"))]
    rows = re.findall(r"^\| (`ragpulse(?:[^|\\]|\\.)*)\|(.*)\|$", table, re.M)
    assert len(rows) >= 10
    for first, said in rows:
        forms = re.findall(r"`([^`]*)`", first)
        words = [w for w in forms[0].split()[1:] if re.fullmatch(r"[a-z]+", w)]
        parent, parser = top, top
        for word in words:
            parent, parser = parser, _subparsers(parser)[word]
        parsers = [parser] + [_subparsers(parent)[form.split()[0]] for form in forms[1:]]
        known = set().union(*map(_flags, parsers))
        named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", first + said))
        assert named <= known, (forms[0], named - known)


def test_the_quoted_config_error_is_what_config_check_prints(tmp_path: Path) -> None:
    import subprocess
    from helpers.sidecar import ragpulse_command

    quoted = re.search(r"`ragpulse config check FILE` validates.*?```\n(.*?)\n\s*```", CONFIGURATION, re.S)
    assert quoted is not None
    (tmp_path / "ragpulse.yaml").write_text('http:\n  prot: 8080\nfallback:\n  extra_rules:\n    - {name: x, pattern: "("}\n')
    result = subprocess.run([*ragpulse_command(), "config", "check", "ragpulse.yaml"], capture_output=True, text=True,
                            cwd=tmp_path)
    assert result.returncode == 2
    assert [line.strip() for line in result.stderr.strip().splitlines()] == [
        line.strip() for line in quoted[1].splitlines()]
