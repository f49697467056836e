"""End to end with the real tools: `ragpulse demo` scraped by a real Prometheus that evaluates the
generated rules (rendered with windows of seconds through the mixin's settings), alerts sent through
a real Alertmanager to a webhook here. The steady demo fires nothing; after the drift (a worse release:
more hallucinations, more fallbacks) the right alerts fire and arrive; every expression of the rules and
of the dashboards parses in Prometheus and returns data (but for what the demo does not run)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from helpers.alerting import Webhook, start_alertmanager, start_prometheus
from helpers.dashboard_queries import dashboard_queries
from helpers.fake_openai import FakeOpenAI
from helpers.net import free_port
from helpers.sidecar import start_demo
from helpers.waiting import wait_until

from ragpulse.mixin import rules
from ragpulse.mixin.settings import Settings

SETTINGS = Settings(
    # 1h too: the window the dashboards read.
    rate_windows=("1m", "2m", "1h"), calibration_windows=("10m",), hallucination_window="2m", hallucination_for="10s",
    min_judgments=30, drift_fast=("30s", "2m"), drift_fast_for="10s", drift_slow=("40s", "90s"), drift_slow_for="20s",
    fallback_window="1m", fallback_for="20s", fallback_min_traces=50, stalled_window="1m", interval="2s",
)
DRIFT_AT = 60.0
# Rules that need what the demo does not produce: reviews, Kafka, OTLP.
NO_DATA_EXPECTED = ("calibration",)
# Dashboard queries of what the demo does not run. The demo reads no Kafka, sends no OTLP, has no reviews or budgets and probes no golden set (test_probes.py checks
# the probe metrics' values): those panels' queries must parse here, not return data.
NO_DATA_PANELS = ("kafka", "otlp", "calibration", "budget", "ragpulse_probe")


@pytest.mark.beside
def test_a_steady_demo_fires_nothing_and_a_drift_pages_through_alertmanager(fake: FakeOpenAI, tmp_path: Path) -> None:
    rules_file = tmp_path / "ragpulse.rules.yaml"
    rules_file.write_text(rules.render(SETTINGS))
    webhook = Webhook()
    alertmanager, am_port = start_alertmanager(tmp_path, webhook.url)
    port = free_port()
    prometheus = start_prometheus(tmp_path, [f"127.0.0.1:{port}"], [rules_file], alertmanager=f"127.0.0.1:{am_port}")
    started = time.monotonic()  # the demo's clock starts after this: its drift comes by started + DRIFT_AT
    demo = None
    try:
        demo = start_demo(
            tmp_path, port, "--rate", "100", "--seed", "3", "--fallback-share", "0.08", "--hallucination-share", "0.05",
            "--drift-at", str(DRIFT_AT), "--drift-fallback-share", "0.45", "--drift-hallucination-share", "0.5",
            "--summary-every", "30", "--set", "otlp.enabled=false", "--set", f"judge.base_url={fake.base_url}",
            "--set", "judge.api_key=k", "--set", "judge.sample_rate=0.5", "--set", "judge.concurrency=8",
            "--set", "judge.max_requests_per_minute=null", "--set", "judge.max_tokens_per_hour=null",
            "--set", "judge.max_tokens_per_day=null")
        # The steady release: nothing fires.
        time.sleep(max(0.0, started + DRIFT_AT - 5 - time.monotonic()))
        firing = prometheus.query('ALERTS{alertstate="firing"}')
        assert firing == [], firing
        assert webhook.alerts == []
        # The drift: a sharp regression pages within seconds of these windows.
        expected = {"RagpulseHallucinationRateHigh", "RagpulseHallucinationDriftFast", "RagpulseFallbackDriftFast",
                    "RagpulseFallbackRateOutOfBand"}
        wait_until(lambda: expected <= webhook.names(), timeout=DRIFT_AT + 90 - (time.monotonic() - started),
                   what=f"{sorted(expected)} at the webhook (got {sorted(webhook.names())})")
        # Every expression parses, and every rule has data once its offset windows have history.
        time.sleep(max(0.0, started + 100 - time.monotonic()))
        for group in rules.rules(SETTINGS)["groups"]:
            for rule in group["rules"]:
                prometheus.query(rule["expr"])  # fails on a PromQL error
                if "record" in rule and not any(part in rule["record"] for part in NO_DATA_EXPECTED):
                    assert prometheus.query(rule["record"]), f"{rule['record']} has no data"
        for expr in dashboard_queries():
            result = prometheus.query(expr)
            if not any(part in expr for part in NO_DATA_PANELS):
                assert result, f"dashboard query without data: {expr}"
    finally:
        if demo is not None:
            demo.terminate()
            demo.wait(30)
        prometheus.stop()
        alertmanager.terminate()
        alertmanager.wait(30)
        webhook.close()
    assert time.monotonic() - started > DRIFT_AT  # nothing of it came before the drift
    # The slow pair may page too, and escalations and rephrases do rise: the demo's users ask for a human after
    # fallbacks and rephrase after hallucinations, and the drift brings more of both.
    unexpected = webhook.names() - expected - {"RagpulseHallucinationDriftSlow", "RagpulseFallbackDriftSlow",
                                               "RagpulseEscalationDriftFast", "RagpulseEscalationDriftSlow",
                                               "RagpulseRephraseDriftFast", "RagpulseRephraseDriftSlow"}
    assert not unexpected, unexpected
    page = next(a for a in webhook.alerts if a["labels"]["alertname"] == "RagpulseHallucinationRateHigh")
    assert page["labels"]["app"] == "support-bot" and page["labels"]["severity"] == "critical"
    assert page["annotations"]["runbook_url"] == "docs/runbook.md#ragpulsehallucinationratehigh"
    assert "support-bot: hallucination rate" in page["annotations"]["description"]
