"""The demo's hallucination rate, as its summary prints it and as a real Prometheus computes it with
docs/rates.md's PromQL and the recording rules, is near the share the demo injects. The judge is the
fake OpenAI-compatible one, which knows the generator's invented answers (the local judge misses
one of the demo's seven kinds, a "lifetime" warranty where the chunk says 2 years: that is the local judge's limit, not the rates').
Coverage of the exact truth is proven in test_rates_simulation.py."""

from __future__ import annotations

import math
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from helpers.alerting import PrometheusProcess, start_prometheus
from helpers.fake_openai import FakeOpenAI
from helpers.net import free_port, http
from helpers.sidecar import ragpulse_command
from helpers.waiting import wait_until

from ragpulse.app.traffic import TrafficProfile
from ragpulse.mixin.rules import RULES_FILE

SHARE = 0.20
SUMMARY = re.compile(r"hallucination \(LLM judge\):\s+routine (?P<rate>[\d.]+)% \[(?P<low>[\d.]+)-(?P<high>[\d.]+)\] of (?P<n>\d+), "
                     r"stratified (?P<s_rate>[\d.]+)% \[(?P<s_low>[\d.]+)-(?P<s_high>[\d.]+)\] of (?P<s_n>\d+)")


@pytest.mark.beside  # waits on the demo's real clock and Prometheus' evaluations (pyproject.toml)
def test_the_demo_shows_a_routine_rate_near_the_injected_share(fake: FakeOpenAI, tmp_path: Path) -> None:
    port = free_port()
    rules = yaml.safe_load(RULES_FILE.read_text())
    for group in rules["groups"]:
        group["interval"] = "1s"  # the shipped 1m, made short so the test runs in a minute
    fast_rules = tmp_path / "rules.yaml"
    fast_rules.write_text(yaml.safe_dump(rules))
    prometheus = start_prometheus(tmp_path, [f"127.0.0.1:{port}"], [fast_rules])
    demo = subprocess.Popen(
        [*ragpulse_command(), "demo", "--host", "127.0.0.1", "--port", str(port), "--rate", "300", "--seed", "5",
         "--fallback-share", "0.1", "--hallucination-share", str(SHARE), "--duration", "40", "--summary-every", "10",
         "--set", "otlp.enabled=false", "--set", f"judge.base_url={fake.base_url}", "--set", "judge.api_key=k",
         "--set", "judge.sample_rate=0.2", "--set", "judge.concurrency=8", "--set", "judge.max_requests_per_minute=null",
         "--set", "judge.max_tokens_per_hour=null", "--set", "judge.max_tokens_per_day=null"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
        env={**os.environ, "RAGPULSE_LOGGING__FORMAT": "json"},
    )
    try:
        wait_until(lambda: http("GET", f"http://127.0.0.1:{port}/readyz").status == 200 if _up(port) else False,
                   timeout=30, what="the demo's sidecar")
        routine = 'ragpulse_judgments_total{sample="routine",metric="groundedness"'
        readme_promql = (f'sum(ragpulse_judgments_total{{sample="routine",metric="groundedness",verdict="hallucination"}})'
                         f' / sum({routine},verdict=~"hallucination|grounded|uncertain"}})')
        # The last scrapes, while the demo still runs: at least 1,000 routine judgments behind them, in
        # the cumulative counters and in the recorded 5m window. The window counts only what came after
        # Prometheus's first scrape (increase() cannot see a series' first value), and that scrape may
        # come seconds into the demo on a loaded machine: the window then lags the counters by hundreds.
        wait_until(lambda: (prometheus.value(f"sum({routine},verdict=~\"hallucination|grounded|uncertain\"}})") or 0) >= 1_000,
                   timeout=60, what="1,000 routine judgments in Prometheus")
        wait_until(lambda: (prometheus.value("app:ragpulse_hallucination_routine_judged:increase5m", app="support-bot")
                            or 0) >= 1_000, timeout=30, what="1,000 routine judgments in the recorded 5m window")
        rate = prometheus.value(readme_promql)
        prometheus_rate = prometheus.value("app:ragpulse_hallucination_routine:ratio5m", app="support-bot")
        low = prometheus.value("app:ragpulse_hallucination_routine:wilson_lower5m", app="support-bot")
        high = prometheus.value("app:ragpulse_hallucination_routine:wilson_upper5m", app="support-bot")
        judged_5m = prometheus.value("app:ragpulse_hallucination_routine_judged:increase5m", app="support-bot")
        stratified = prometheus.value("app:ragpulse_hallucination_stratified:ratio5m", app="support-bot")
        s_low = prometheus.value("app:ragpulse_hallucination_stratified:lower5m", app="support-bot")
        s_high = prometheus.value("app:ragpulse_hallucination_stratified:upper5m", app="support-bot")
        shown = context_shares(prometheus)
        output, _ = demo.communicate(timeout=90)
    finally:
        if demo.poll() is None:
            demo.kill()
        prometheus.stop()
    assert demo.returncode == 0, output
    # Near: the routine sample holds over 1,000 judgments, so its standard error is about 1.3 points.
    assert rate is not None and abs(rate - SHARE) < 0.04, rate
    routine_5m = prometheus_rate
    assert routine_5m is not None and low is not None and high is not None
    assert abs(routine_5m - SHARE) < 0.04 and low < routine_5m < high and high - low < 0.07, (low, routine_5m, high, judged_5m)
    assert stratified is not None and s_low is not None and s_high is not None
    assert abs(stratified - SHARE) < 0.04 and s_low <= stratified <= s_high, (s_low, stratified, s_high)
    last = SUMMARY.findall(output)[-1]
    routine_rate, routine_low, routine_high = (float(v) / 100 for v in last[:3])
    assert int(last[3]) >= 1_000 and routine_low <= routine_rate <= routine_high, last
    assert abs(routine_rate - SHARE) < 0.04, last
    s_rate, s_lo, s_hi = (float(v) / 100 for v in last[4:7])
    assert abs(s_rate - SHARE) < 0.04 and s_lo <= s_rate <= s_hi, last
    # Citations and utilisation, as Prometheus records them: the generator's shares (app/traffic.py), each
    # within three standard errors of its sample. Of the cited grounded answers 70% cite their chunk, 20% a
    # chunk that does not say it, 10% a rank past the chunks; a grounded answer uses 1 of its 4 chunks, an
    # invented one none (the fake judge names the chunks by shared words).
    profile = TrafficProfile()
    dangling = profile.dangling_citation_share
    wrong = profile.wrong_citation_share
    for name, truth in (("precision", (1 - wrong - dangling) / (1 - dangling)), ("dangling", dangling),
                        ("utilisation", (1 - SHARE) / 4)):
        estimate, n = shown[name]
        assert n >= 100 and abs(estimate - truth) <= 3 * math.sqrt(truth * (1 - truth) / n), (name, estimate, n, truth)
    line = re.findall(r"citations supported ([\d.]+)% of (\d+) judged · dangling ([\d.]+)% of (\d+) · context used ([\d.]+)%",
                      output)[-1]
    assert abs(float(line[0]) / 100 - shown["precision"][0]) < 0.05 and int(line[1]) >= 100, line


def context_shares(prometheus: PrometheusProcess) -> dict[str, tuple[float, float]]:
    """Citation precision, the dangling share and context utilisation over 5m, each with its count."""
    app = 'app="support-bot"'
    judged = prometheus.value("app:ragpulse_citation_judged:increase5m", app="support-bot") or 0.0
    markers = prometheus.value(f"sum(increase(ragpulse_citations_total{{{app}}}[5m]))") or 0.0
    retrieved = prometheus.value(f"sum(increase(ragpulse_context_chunks_retrieved_total{{{app}}}[5m]))") or 0.0
    return {
        "precision": (prometheus.value("app:ragpulse_citation_precision:ratio5m", app="support-bot") or 0.0, judged),
        "dangling": ((prometheus.value(f'sum(increase(ragpulse_citations_total{{{app},outcome="dangling"}}[5m]))') or 0.0)
                     / max(markers, 1.0), markers),
        # chunks are four an answer: the answers behind the ratio
        "utilisation": (prometheus.value("app:ragpulse_context_utilisation:ratio5m", app="support-bot") or 0.0,
                        retrieved / 4),
    }


def _up(port: int) -> bool:
    try:
        http("GET", f"http://127.0.0.1:{port}/healthz")
        return True
    except OSError:
        return False
