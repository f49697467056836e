"""The monitoring mixin: the committed rules file is what the generator makes, Prometheus accepts
it, and promtool's unit tests of every recording rule pass (tests/promtool/)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ragpulse.mixin import rules
from ragpulse.mixin.alerts import alerts, runbook
from ragpulse.mixin.rules import DEFAULTS

ROOT = Path(__file__).resolve().parent.parent
PROMTOOL_TESTS = Path(__file__).resolve().parent / "promtool"


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("promtool")
    assert binary, "promtool is missing: scripts/test installs it (scripts/tools.sh)"
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=120, cwd=PROMTOOL_TESTS)


def test_the_committed_rules_are_generated_from_the_source() -> None:
    committed = (ROOT / "mixin" / "ragpulse.rules.yaml").read_text(encoding="utf-8")
    assert committed == rules.render(), "regenerate: python -m ragpulse.mixin (then commit mixin/ragpulse.rules.yaml)"


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
