"""The README's `./scripts/demo --stack --drift-at 90` scenario, end to end with the real tools: the demo at
its defaults (20 events/s, 5% hallucinated answers, then 20% after the drift, the local judge), scraped and
evaluated by a real Prometheus with the rules of mixin/demo-settings.yaml at the intervals scripts/demo sets,
alerts sent to a real Alertmanager. RagpulseHallucinationDriftFast must fire within 5 minutes of the drift and
never before it, and reach Alertmanager; RagpulseHallucinationRateHigh stays quiet (an uncalibrated local judge
pages on drift only). bench/sim_drift.py puts the chance of missing the 5 minutes below 1 in 1,000."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.alerting import PrometheusProcess, Webhook, start_alertmanager, start_prometheus
from helpers.net import free_port, http
from helpers.sidecar import start_demo
from helpers.waiting import wait_until

from ragpulse.mixin import rules
from ragpulse.mixin.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
DRIFT_AT = 90.0
WITHIN = 300.0
ALERT = "RagpulseHallucinationDriftFast"


@pytest.mark.unit
def test_the_readme_scenario_and_scripts_demo_are_the_ones_run_here() -> None:
    readme, script = (ROOT / "README.md").read_text(), (ROOT / "scripts" / "demo").read_text()
    assert f"./scripts/demo --stack --drift-at {DRIFT_AT:g}" in readme
    assert "scrape_interval: 5s, evaluation_interval: 15s" in script
    assert "demo-settings.yaml" in script


class Watch:
    """When the alert was first seen pending and firing in Prometheus (its own sample times), polled while the
    test waits for the alert at Alertmanager."""

    def __init__(self, prometheus: PrometheusProcess) -> None:
        self.prometheus = prometheus
        self.first: dict[str, float] = {}
        self._asked = 0.0

    def arrived(self, webhook: Webhook) -> bool:
        if time.monotonic() - self._asked >= 1.0:  # a query a second: the rules are evaluated every 15 s
            self._asked = time.monotonic()
            for series in self.prometheus.query(f'ALERTS{{alertname="{ALERT}"}}'):
                self.first.setdefault(series["metric"]["alertstate"], float(series["value"][0]))
        return ALERT in webhook.names()


@pytest.mark.beside
def test_the_stack_demo_pages_on_its_drift_within_five_minutes(tmp_path: Path) -> None:
    settings = Settings.load(ROOT / "mixin" / "demo-settings.yaml")
    rules_file = tmp_path / "ragpulse.rules.yaml"
    rules_file.write_text(rules.render(settings))
    webhook = Webhook()
    alertmanager, am_port = start_alertmanager(tmp_path, webhook.url)
    port = free_port()
    prometheus = start_prometheus(tmp_path, [f"127.0.0.1:{port}"], [rules_file], scrape_interval="5s",
                                  evaluation_interval="15s", alertmanager=f"127.0.0.1:{am_port}")
    launched = time.time()
    demo = None
    try:
        demo = start_demo(tmp_path, port, "--drift-at", f"{DRIFT_AT:g}", "--seed", "7",
                          "--duration", str(DRIFT_AT + WITHIN + 60), "--set", "otlp.enabled=false")
        ready = time.time()  # the demo's clock starts before this: its drift comes by ready + DRIFT_AT
        watch = Watch(prometheus)
        wait_until(lambda: watch.arrived(webhook), timeout=ready + DRIFT_AT + WITHIN + 30 - time.time(),
                   what=f"{ALERT} at Alertmanager's webhook (got {sorted(webhook.names())})")
        red_line = prometheus.query('ALERTS{alertname="RagpulseHallucinationRateHigh"}')
    finally:
        if demo is not None:
            demo.terminate()
            demo.wait(30)
        prometheus.stop()
        alertmanager.terminate()
        alertmanager.wait(30)
        webhook.close()
    pending, fired = watch.first.get("pending"), watch.first.get("firing")
    assert fired is not None and pending is not None, watch.first
    assert pending >= launched + DRIFT_AT, f"pending {pending - launched:.0f} s after launch, before the drift"
    assert fired <= ready + DRIFT_AT + WITHIN, f"fired {fired - ready - DRIFT_AT:.0f} s after the drift"
    assert red_line == [], red_line  # the local judge is uncalibrated: drift only
    page = next(a for a in webhook.alerts if a["labels"]["alertname"] == ALERT)
    assert page["labels"]["app"] == "support-bot" and page["labels"]["severity"] == "critical"
    assert re.search(r"support-bot: hallucination rate up by [\d.]+% in the last 2m", page["annotations"]["description"])


def test_scripts_demo_stack_runs_the_sidecar_scraped_by_its_prometheus(tmp_path: Path) -> None:
    """README's `./scripts/demo --stack`, with the ports its header names: Prometheus loads the ragpulse rules and
    scrapes the sidecar, Alertmanager is up, and --duration ends it all with the final summary. The virtualenv
    is the one scripts/test installed (its stamp: no reinstall)."""
    port, prometheus_port, alertmanager_port = free_port(), free_port(), free_port()
    env = {**os.environ, "RAGPULSE_DEMO_PORT": str(port), "PROMETHEUS_PORT": str(prometheus_port),
           "ALERTMANAGER_PORT": str(alertmanager_port)}
    started = time.monotonic()
    demo = subprocess.Popen([str(ROOT / "scripts" / "demo"), "--stack", "--duration", "20", "--summary-every", "10",
                             "--set", f"otlp.http_port={free_port()}", "--set", f"otlp.grpc_port={free_port()}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    prometheus = PrometheusProcess(prometheus_port, demo, Path("unused"))  # only its query API is used here
    try:
        def scraped() -> bool:
            try:
                return prometheus.value('up{job="ragpulse"}') == 1.0
            except (OSError, ValueError, AssertionError):  # not listening yet, or no answer yet
                return False
        wait_until(scraped, timeout=25, what="Prometheus scraping the demo's sidecar")
        up = time.monotonic() - started
        assert prometheus.query('count(ALERTS) or vector(0)') is not None  # the rules' alerts are queryable
        assert http("GET", f"http://127.0.0.1:{alertmanager_port}/-/ready").status == 200
        out, err = demo.communicate(timeout=60)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
    assert demo.returncode == 0, err
    assert f"Prometheus:   http://127.0.0.1:{prometheus_port}/alerts" in err
    assert sum(line.startswith("[ final] traces") for line in out.splitlines()) == 1, out
    print(f"stack demo: Prometheus scraping the sidecar {up:.1f} s after the script started", file=sys.stderr)


def test_scripts_demo_takes_its_port_variable_without_the_stack_too(tmp_path: Path) -> None:
    port = free_port()
    demo = subprocess.run([str(ROOT / "scripts" / "demo"), "--duration", "2", "--summary-every", "1", "--set",
                           f"otlp.http_port={free_port()}", "--set", f"otlp.grpc_port={free_port()}"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "RAGPULSE_DEMO_PORT": str(port)})
    assert demo.returncode == 0, demo.stderr
    assert f"sidecar on 127.0.0.1:{port} " in demo.stdout
