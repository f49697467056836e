"""The monitoring mixin: the committed rules file is what the generator makes, Prometheus accepts
it, and promtool's unit tests of every recording rule pass (tests/promtool/)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.metrics import exported_metrics
from helpers.promql import as_increase, bare_counts

from ragpulse.mixin import rules
from ragpulse.mixin.alerts import alerts
from ragpulse.mixin.runbook import runbook
from ragpulse.mixin.rules import DEFAULTS

ROOT = Path(__file__).resolve().parent.parent
PROMTOOL_TESTS = Path(__file__).resolve().parent / "promtool"


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("promtool")
    assert binary, "promtool is missing: scripts/test installs it (scripts/tools.sh)"
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=120, cwd=PROMTOOL_TESTS)


@pytest.mark.unit
def test_the_committed_rules_are_generated_from_the_source() -> None:
    committed = (ROOT / "mixin" / "ragpulse.rules.yaml").read_text(encoding="utf-8")
    assert committed == rules.render(), "regenerate: python -m ragpulse.mixin (then commit mixin/ragpulse.rules.yaml)"


@pytest.mark.unit
def test_the_committed_runbook_is_generated_from_the_same_source_and_has_every_alert() -> None:
    committed = (ROOT / "docs" / "runbook.md").read_text(encoding="utf-8")
    assert committed == runbook(DEFAULTS), "regenerate: python -m ragpulse.mixin (then commit docs/runbook.md)"
    for alert in alerts(DEFAULTS):
        assert f"\n## {alert.name}\n" in committed
        assert f"docs/runbook.md#{alert.name.lower()}" in rules.render()


def test_prometheus_accepts_the_rules() -> None:
    checked = promtool("check", "rules", str(ROOT / "mixin" / "ragpulse.rules.yaml"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {sum(len(group['rules']) for group in rules.rules()['groups'])} rules found" in checked.stdout


def test_every_recording_rule_file_passes_its_promtool_unit_tests() -> None:
    files = sorted(PROMTOOL_TESTS.glob("*.test.yaml"))
    assert files
    tested = promtool("test", "rules", *map(str, files))
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert tested.stdout.count("SUCCESS") == len(files)


# Gauges the rules read, and why each may be: config values every replica reports alike (max), a state per
# replica that pages per replica, lag a replica reports only for the partitions it holds (summed per topic),
# and a timestamp (max). Any other gauge in a rule would be summed or averaged across replicas wrongly.
# Each with the aggregation that must wrap it (None: read per replica).
MAX = r"max(?: by \([^)]*\))? ?\("
GAUGES_IN_RULES: dict[str, str | None] = {
    "ragpulse_calibration_min_reviews": MAX, "ragpulse_calibration_agreement_threshold_ratio": MAX,
    "ragpulse_judge_circuit_state": None, "ragpulse_kafka_consumer_lag_records": r"sum by \(topic\) \(",
    "ragpulse_probe_last_run_timestamp_seconds": MAX,
}


@pytest.mark.unit
def test_every_rate_across_replicas_is_a_ratio_of_sums() -> None:
    """Replicas add up: every rate() and increase() of a counter is summed before anything divides it, no rule
    averages, and a gauge appears only where summing or taking the max across replicas is right."""
    kinds = {name: kind for name, (kind, _) in exported_metrics().items()}
    checked = 0
    for group in rules.rules()["groups"]:
        for rule in group["rules"]:
            name, expr = rule.get("record") or rule.get("alert"), as_increase(rule["expr"])
            assert not re.search(r"\bavg(_over_time)?\b", expr), (name, expr)
            for match in re.finditer(r"\b(?:rate|increase)\(", expr):
                assert re.search(r"sum(?: by \([^)]*\))? ?\($", expr[: match.start()].rstrip()), (name, expr)
                checked += 1
            for metric in re.findall(r"(?<![:\w])ragpulse_\w+", expr):
                if kinds.get(metric) == "gauge":
                    assert metric in GAUGES_IN_RULES, (name, metric)
                    wrapped = GAUGES_IN_RULES[metric]
                    assert wrapped is None or all(re.search(wrapped + "$", expr[: m.start()])
                                                  for m in re.finditer(rf"(?<![:\w]){metric}\b", expr)), (name, expr)
    assert checked > 150


@pytest.mark.unit
def test_every_ratio_counts_the_series_born_inside_its_window() -> None:
    """A division of counts reads them through counted() (mixin/promql.py): increase() alone loses what a series was
    born with, a new app's first counts (a context utilisation of 0.608 against a true 0.338)."""
    divisions = 0
    for group in rules.rules()["groups"]:
        for rule in group["rules"]:
            if " / " in rule["expr"] and re.search(r"\b(?:rate|increase)\(", as_increase(rule["expr"])):
                assert bare_counts(rule["expr"]) == [], (rule.get("record") or rule.get("alert"), rule["expr"])
                divisions += 1
    assert divisions >= 40
