"""The report's figures equal the recording rules': a sidecar judges demo traffic with a drift (a worse release
half way), a real Prometheus scrapes it with the shipped rules, and `ragpulse report --prometheus` states the
store's routine rates and the rules' recorded ones for the same judgments. Over a window longer than the run the
rules count every judgment (mixin/promql.py's `counted`), so the two are the same ratio of the same counts."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from helpers.alerting import start_prometheus
from helpers.sidecar import ragpulse_command, start_ragpulse
from helpers.waiting import wait_until

from ragpulse.mixin.rules import RULES_FILE

APP = "support-bot"
RATIOS = {"hallucination": "hallucination_routine", "citation_precision": "citation_precision",
          "context_utilisation": "context_utilisation"}


def store_judged(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT coalesce(sum(judged), 0) FROM report_tally").fetchone()[0])


@pytest.mark.beside  # waits on the demo's real clock and Prometheus' evaluations
def test_the_reports_figures_equal_the_recording_rules(tmp_path: Path) -> None:
    rules = yaml.safe_load(RULES_FILE.read_text())
    for group in rules["groups"]:
        group["interval"] = "1s"  # the shipped 1m, made short so the test runs in a minute
    fast_rules = tmp_path / "rules.yaml"
    fast_rules.write_text(yaml.safe_dump(rules))
    started = time.time()
    rp = start_ragpulse(tmp_path, "--set", "judge.sample_rate=1.0", "--set", "judge.max_requests_per_minute=null",
                        "--set", "satisfaction.idle_seconds=2")  # sessions settle, and their signals count, quickly
    prometheus = start_prometheus(tmp_path, [f"127.0.0.1:{rp.port}"], [fast_rules])
    try:
        demo = subprocess.run([*ragpulse_command(), "demo", "--target", rp.url, "--rate", "60", "--duration", "24",
                               "--drift-at", "12", "--seed", "4"], capture_output=True, text=True, timeout=120)
        assert demo.returncode == 0, demo.stderr
        store = tmp_path / "ragpulse-badcases.sqlite3"
        recorded = "app:ragpulse_hallucination_routine_judged:increase1h"
        # Every judgment written to the store and counted by a scrape and an evaluation since.
        wait_until(lambda: store.exists() and store_judged(store) > 300
                   and prometheus.value(recorded, app=APP) == store_judged(store), timeout=60,
                   what="the rules' routine judgments equal to the store's")
        wait_until(lambda: (prometheus.value("app:ragpulse_satisfaction_proxy:ratio1h", app=APP) or 0) > 0, timeout=30,
                   what="the settled sessions' satisfaction proxy")
        out = tmp_path / "report.html"
        made = subprocess.run([*ragpulse_command(), "report", "--db", str(store), "--from", str(int(started) - 60),
                               "--to", str(int(time.time()) + 1), "--prometheus", prometheus.url, "--window", "1h",
                               "--out", str(out)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert made.returncode == 0, made.stderr
    finally:
        prometheus.stop()
        rp.terminate()
    html = out.read_text(encoding="utf-8")
    stated = {name: float(value) for name, value in re.findall(r'data-figure="([\w.-]+)" data-value="([^"\s]+)"', html)}
    for store_name, series in RATIOS.items():
        assert stated[store_name] == pytest.approx(stated[f"prometheus.{series}.{APP}"], abs=1e-12), store_name
    # The drift: release 2026.11.2 brings more hallucinations and fallbacks; citations are judged as before.
    verdicts = dict(re.findall(r'data-indicator="(\w+)" data-verdict="(\w+)"', html))
    assert (verdicts["hallucination"], verdicts["fallback"], verdicts["citation_precision"]) == ("worse", "worse", "unchanged")
    assert "Release 2026.11.2 against 2026.11.1: hallucination worse" in html
    assert re.findall(r'data-plot="(\w+)"', html) == [
        "hallucination", "fallback", "citation_precision", "context_utilisation_by_rank", "stages", "satisfaction",
        "satisfaction_signals", "release_comparison"]
